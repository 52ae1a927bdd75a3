//===- InputLimits.h - bounded reading of user input files ------*- C++ -*-===//
//
// Every file sluicec and sluice-opt read from the user goes through here:
// it must be a regular file (a FIFO, /dev/zero or a directory is refused
// before anything is read) no larger than a per-kind limit, and text that
// a recursive parser will walk is pre-scanned for its nesting depth.
// docs/SpecFormat.md ("Limits") lists the numbers.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_SUPPORT_INPUTLIMITS_H
#define SLUICE_SUPPORT_INPUTLIMITS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace mlir::sluice {

/// The largest JSON layer spec read (1 MiB; real specs are < 1 KiB).
constexpr uint64_t kMaxSpecFileBytes = uint64_t(1) << 20;
/// The largest .mlir graph read (64 MiB; BERT-large's is < 1 MiB).
constexpr uint64_t kMaxGraphFileBytes = uint64_t(64) << 20;
/// The largest .npy file read (4 GiB).
constexpr uint64_t kMaxNpyFileBytes = uint64_t(4) << 30;
/// The largest .npy header (NumPy's own default `max_header_size`).
constexpr uint64_t kMaxNpyHeaderBytes = 10000;
/// The longest spec "name" (it names files and C symbols).
constexpr size_t kMaxNameLength = 128;
/// The deepest JSON nesting of objects and arrays in a spec.
constexpr unsigned kMaxJsonDepth = 64;
/// The deepest nesting of (), [] and {} in a .mlir file. The MLIR parser
/// recurses once per region and crashes near 5,000.
constexpr unsigned kMaxMlirNesting = 512;

/// Reads the regular file `path` if it holds at most `limit` bytes. Errors
/// start with the path and say what is wrong: missing, not a regular file
/// (FIFO, device, directory, ...), or larger than `limit` (with both
/// numbers); `what` names the kind in that message ("a spec", ...). The
/// buffer is NUL-terminated, as the MLIR parser needs.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readBoundedFile(llvm::StringRef path, uint64_t limit, llvm::StringRef what);

/// Reads standard input up to its end if that is at most `limit` bytes; it
/// stops reading one byte past the limit, so `cat /dev/zero | tool` ends.
/// The buffer is named "<stdin>" (as MLIR's own reader names it) and is
/// NUL-terminated; the error names "<stdin>", `what` and the limit.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readBoundedStdin(uint64_t limit, llvm::StringRef what);

/// Checks that `path` names a regular file (or nothing, then the caller's
/// open reports it); the error says which kind of file it is instead.
llvm::Error checkRegularFile(llvm::StringRef path);

/// The byte offset of the first bracket that opens a level deeper than
/// `limit`, counting ( [ { outside "..." strings (with \ escapes) and,
/// when `lineComments`, outside // comments; nullopt if none does. Linear
/// time, constant memory.
std::optional<size_t> findExcessiveNesting(llvm::StringRef text, unsigned limit,
                                           bool lineComments);

/// The 1-based line and column of the byte at `offset` in `text`.
std::pair<unsigned, unsigned> getLineAndColumn(llvm::StringRef text,
                                               size_t offset);

} // namespace mlir::sluice

#endif // SLUICE_SUPPORT_INPUTLIMITS_H
