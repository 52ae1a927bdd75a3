//===- OutputFiles.h - all-or-nothing output writing ------------*- C++ -*-===//

#ifndef SLUICE_DRIVER_OUTPUTFILES_H
#define SLUICE_DRIVER_OUTPUTFILES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <utility>

namespace mlir::sluice {

/// A file to write: its name inside the output directory and its contents.
struct OutputFile {
  std::string name;
  std::string contents;
};

/// Writes `files` into `directory` (created if missing) all or nothing: each
/// file goes to a temporary in the directory first, and only when every one
/// was written are they renamed into place. On error nothing new is left
/// behind (a directory created here is removed again) and the error names
/// the path and the reason.
llvm::Error writeOutputFiles(llvm::StringRef directory,
                             llvm::ArrayRef<OutputFile> files);

} // namespace mlir::sluice

#endif // SLUICE_DRIVER_OUTPUTFILES_H
