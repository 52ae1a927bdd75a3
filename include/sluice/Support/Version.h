//===- Version.h - which Sluice a binary is -------------------*- C++ -*-===//
//
// The release version (CMake's project version) and the source commit the
// binary was built from (`git describe --dirty`, written at build time by
// cmake/SluiceSourceVersion.cmake; "unknown" outside a git checkout). The
// tools print them for --version and the reports record them, so a stale
// build is visible in its output.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_SUPPORT_VERSION_H
#define SLUICE_SUPPORT_VERSION_H

#include "llvm/ADT/StringRef.h"

namespace mlir::sluice {

/// The release version, e.g. "0.1.0".
llvm::StringRef sluiceVersion();

/// The source commit, e.g. "5e5958ac7d4f" or "5e5958ac7d4f-dirty".
llvm::StringRef sluiceSourceCommit();

/// Makes --version print `<tool> <version> (source <commit>)` and the
/// LLVM/MLIR version it links, in place of LLVM's own version text. Call
/// before llvm::cl::ParseCommandLineOptions.
void installVersionPrinter(llvm::StringRef toolName);

} // namespace mlir::sluice

#endif // SLUICE_SUPPORT_VERSION_H
