//===- RunCommand.h - `sluicec run` -----------------------------*- C++ -*-===//

#ifndef SLUICE_TOOLS_SLUICEC_RUNCOMMAND_H
#define SLUICE_TOOLS_SLUICEC_RUNCOMMAND_H

#include "mlir/Support/LogicalResult.h"
#include "llvm/Support/CommandLine.h"

namespace mlir::sluice {
/// The `run` subcommand; its options are registered under it.
extern llvm::cl::SubCommand runSubCommand;
/// Runs the layer named on the command line on .npy inputs and writes .npy
/// outputs (all or nothing). Errors are printed; returns failure on any.
llvm::LogicalResult runCommand();
} // namespace mlir::sluice

#endif // SLUICE_TOOLS_SLUICEC_RUNCOMMAND_H
