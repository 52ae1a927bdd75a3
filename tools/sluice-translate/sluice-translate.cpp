//===- sluice-translate.cpp - print sluice_exec IR as source --------------===//
//
// mlir-translate for the emission-level dialect: `--sluice-to-cuda` and
// `--sluice-to-cpp` print hand-written or lowered sluice_exec IR.
//
//===----------------------------------------------------------------------===//

#include "sluice/Support/Version.h"
#include "sluice/Target/Translate.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

#include <cstdlib>

int main(int argc, char **argv) {
  mlir::sluice::installVersionPrinter("sluice-translate");
  mlir::sluice::target::registerToCudaTranslation();
  mlir::sluice::target::registerToCppTranslation();
  return mlir::failed(
             mlir::mlirTranslateMain(argc, argv, "Sluice translation driver\n"))
             ? EXIT_FAILURE
             : EXIT_SUCCESS;
}
