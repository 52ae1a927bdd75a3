//===- sluice-opt.cpp - run sluice passes on .mlir files ------------------===//
//
// mlir-opt for the sluice dialect: registers only what sluice uses (no
// register-everything headers), the sluice passes, and the sluicec pipeline.
// A file input is pre-scanned as sluicec's are (mlir::sluice::checkGraphText:
// bounded nesting) before MlirOptMain parses it; stdin ("-") is not.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/SluicePasses.h"
#include "dialects/sluice_exec/ExecDialect.h"
#include "sluice/Codegen/Emit.h"
#include "sluice/Codegen/Schedule.h"
#include "sluice/Pipeline/Pipeline.h"
#include "sluice/Target/Translate.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::sluice::SluiceDialect, mlir::sluice::exec::ExecDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect>();
  mlir::sluice::registerSluicePasses();
  mlir::sluice::registerSluicePipelines();
  mlir::sluice::registerSchedulePass();
  mlir::sluice::registerEmitPasses();
  mlir::sluice::target::registerTargetPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "Sluice optimizer driver\n", registry);
  if (mlir::failed(mlir::sluice::preScanInput(inputFilename)))
    return EXIT_FAILURE;
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
}
