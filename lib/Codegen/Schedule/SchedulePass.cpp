//===- SchedulePass.cpp - --sluice-schedule -------------------------------===//
//
// Attaches each fused kernel's schedule as `sluice.schedule`, so that the
// decisions the emitters will follow can be read (and FileChecked) in the IR.
//
//===----------------------------------------------------------------------===//

#include "sluice/Codegen/Schedule.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::sluice;

namespace {
struct SchedulePass
    : public PassWrapper<SchedulePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SchedulePass)

  StringRef getArgument() const final { return "sluice-schedule"; }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<exec::ExecDialect>();
  }
  StringRef getDescription() const final {
    return "Attaches to every fused sluice.kernel its thread schedule "
           "(sluice.schedule = #sluice_exec.schedule<...>: grid, threads, "
           "vector width, reduction)";
  }
  void runOnOperation() override {
    bool failed = false;
    getOperation().walk([&](KernelOp kernel) {
      if (kernel.getKind() != KernelKind::fused)
        return;
      FailureOr<KernelSchedule> schedule = scheduleKernel(kernel);
      if (mlir::failed(schedule)) {
        failed = true;
        return;
      }
      kernel->setAttr("sluice.schedule", schedule->toAttr(&getContext()));
    });
    if (failed)
      signalPassFailure();
  }
};
} // namespace

std::unique_ptr<Pass> mlir::sluice::createSchedulePass() {
  return std::make_unique<SchedulePass>();
}

void mlir::sluice::registerSchedulePass() { PassRegistration<SchedulePass>(); }
