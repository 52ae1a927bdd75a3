//===- TranslateRegistration.cpp - --sluice-to-cuda, --sluice-to-cpp ------===//

#include "sluice/Target/Translate.h"

#include "dialects/sluice_exec/ExecDialect.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;
using namespace mlir::sluice;

static void registerExec(DialectRegistry &registry) {
  registry.insert<exec::ExecDialect>();
}

void mlir::sluice::target::registerToCudaTranslation() {
  TranslateFromMLIRRegistration reg(
      "sluice-to-cuda", "print sluice_exec entry points as CUDA host code",
      [](Operation *op, raw_ostream &os) {
        return translateEntries(op, os, printCudaOperation);
      },
      registerExec);
}

void mlir::sluice::target::registerToCppTranslation() {
  TranslateFromMLIRRegistration reg(
      "sluice-to-cpp", "print sluice_exec entry points as portable C++",
      [](Operation *op, raw_ostream &os) {
        return translateEntries(op, os, printCppOperation);
      },
      registerExec);
}
