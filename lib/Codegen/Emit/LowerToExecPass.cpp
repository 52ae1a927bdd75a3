//===- LowerToExecPass.cpp - --sluice-lower-to-exec -----------------------===//
//
// The lowering behind emitModule as a pass, so that lit tests read its
// decisions (test/Conversion/lower-to-exec.mlir).
//
//===----------------------------------------------------------------------===//

#include "sluice/Codegen/Emit.h"

#include "dialects/sluice_exec/ExecDialect.h"

#include "mlir/Pass/Pass.h"

namespace mlir::sluice {
#define GEN_PASS_DECL_LOWERTOEXEC
#define GEN_PASS_DEF_LOWERTOEXEC
#define GEN_PASS_REGISTRATION
#include "lib/Codegen/Emit/EmitPasses.h.inc"
} // namespace mlir::sluice

using namespace mlir;
using namespace mlir::sluice;

namespace {
struct LowerToExecPass : mlir::sluice::impl::LowerToExecBase<LowerToExecPass> {
  using LowerToExecBase::LowerToExecBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<OwningOpRef<ModuleOp>> lowered =
        lowerToExec(module, target, defaultModuleName(module));
    if (failed(lowered))
      return signalPassFailure();
    Block *body = module.getBody();
    for (Operation &op :
         llvm::make_early_inc_range((*lowered)->getBody()->getOperations()))
      op.moveBefore(body, body->end());
  }
};
} // namespace

void mlir::sluice::registerEmitPasses() { registerSluiceEmitPasses(); }
