//===- JsonFile.h - reading the analysis library's JSON inputs ---*- C++ -*-===//
//
// Private to lib/Analysis: what target descriptions and profile databases
// share when they are read: the file, and a parse error that names it.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_LIB_ANALYSIS_JSONFILE_H
#define SLUICE_LIB_ANALYSIS_JSONFILE_H

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace mlir::sluice::detail {

/// Parses `text`; a syntax error reads "ORIGIN: invalid JSON [L:C, byte=N]:
/// what".
inline llvm::Expected<llvm::json::Value> parseJson(llvm::StringRef text,
                                                   llvm::StringRef origin) {
  llvm::Expected<llvm::json::Value> root = llvm::json::parse(text);
  if (root)
    return root;
  std::string message;
  llvm::raw_string_ostream os(message);
  llvm::logAllUnhandledErrors(root.takeError(), os);
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 origin + ": invalid JSON " +
                                     llvm::StringRef(message).rtrim());
}

/// The contents of `path`, or "cannot read WHAT 'PATH': reason".
inline llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readFile(llvm::StringRef path, llvm::StringRef what) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read " + what + " '" + path +
                                       "': " + buffer.getError().message());
  return std::move(*buffer);
}

} // namespace mlir::sluice::detail

#endif // SLUICE_LIB_ANALYSIS_JSONFILE_H
