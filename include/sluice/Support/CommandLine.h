//===- CommandLine.h - tool options without LLVM's internal ones -*- C++
//-*-===//
//
// libLLVM registers several hundred internal options (back-end tuning, pass
// debugging, ...) in every tool that links it. The Sluice tools show their
// own in --help and keep the rest behind --help-hidden.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_SUPPORT_COMMANDLINE_H
#define SLUICE_SUPPORT_COMMANDLINE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/CommandLine.h"

namespace mlir::sluice {

/// Hides from --help every option of `sub` registered so far that belongs to
/// none of `categories` (LLVM's generic --help, --version, ... stay). Unlike
/// llvm::cl::HideUnrelatedOptions, which makes them cl::ReallyHidden, the
/// hidden options are cl::Hidden: --help-hidden and --help-list-hidden
/// still list them, and they still parse.
void hideUnrelatedOptions(
    llvm::ArrayRef<const llvm::cl::OptionCategory *> categories,
    llvm::cl::SubCommand &sub = llvm::cl::SubCommand::getTopLevel());

} // namespace mlir::sluice

#endif // SLUICE_SUPPORT_COMMANDLINE_H
