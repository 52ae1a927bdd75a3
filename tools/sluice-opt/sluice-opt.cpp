//===- sluice-opt.cpp - run sluice passes on .mlir files ------------------===//
//
// mlir-opt for the sluice dialect: registers only what sluice uses (no
// register-everything headers), the sluice passes, and the sluicec pipeline.
// --help lists mlir-opt's options and the passes; libLLVM's internal options
// are behind --help-hidden. The input (a file or stdin) is read once,
// bounded and pre-scanned as sluicec's are (mlir::sluice::readToolInput:
// size limit, nesting depth) before MlirOptMain parses it.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/SluicePasses.h"
#include "dialects/sluice_exec/ExecDialect.h"
#include "sluice/Codegen/Emit.h"
#include "sluice/Codegen/Schedule.h"
#include "sluice/Layout/Passes.h"
#include "sluice/Pipeline/Pipeline.h"
#include "sluice/Support/CommandLine.h"
#include "sluice/Support/Version.h"
#include "sluice/Target/Translate.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

/// What MlirOptMain(argc, argv, input, output, registry) does, with the
/// input read by readToolInput instead of unbounded and unchecked.
static LogicalResult runOptMain(int argc, char **argv, StringRef inputFilename,
                                StringRef outputFilename,
                                DialectRegistry &registry) {
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  // These two read no input.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return MlirOptMain(argc, argv, inputFilename, outputFilename, registry);
  FailureOr<std::unique_ptr<llvm::MemoryBuffer>> input =
      sluice::readToolInput(inputFilename);
  if (failed(input))
    return failure();
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "sluice-opt: error: " << error << "\n";
    return failure();
  }
  if (failed(MlirOptMain(output->os(), std::move(*input), registry, config)))
    return failure();
  output->keep();
  return success();
}

int main(int argc, char **argv) {
  // Every option registered before this point is libLLVM's or libMLIR's
  // own; mlir-opt's options and the passes are registered below.
  sluice::hideUnrelatedOptions({});
  sluice::installVersionPrinter("sluice-opt");
  DialectRegistry registry;
  registry.insert<sluice::SluiceDialect, sluice::exec::ExecDialect,
                  arith::ArithDialect, math::MathDialect>();
  sluice::registerSluicePasses();
  sluice::registerLayoutPasses();
  sluice::registerSluicePipelines();
  sluice::registerSchedulePass();
  sluice::registerEmitPasses();
  sluice::target::registerTargetPasses();
  registerCanonicalizerPass();
  registerCSEPass();
  auto [inputFilename, outputFilename] = registerAndParseCLIOptions(
      argc, argv, "Sluice optimizer driver\n", registry);
  return asMainReturnCode(
      runOptMain(argc, argv, inputFilename, outputFilename, registry));
}
