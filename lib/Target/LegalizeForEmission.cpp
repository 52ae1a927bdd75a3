//===- LegalizeForEmission.cpp - --sluice-legalize-for-emission -----------===//
//
// The last step before the printers: C names for the args fields, the
// cuBLASLt descriptor slots (one per GEMM, fallback regions included), and the
// alignment the kernels' vector accesses need. The printers refuse IR this has
// not made legal.
//
//===----------------------------------------------------------------------===//

#include "sluice/Target/Translate.h"

#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/StringMap.h"

namespace mlir::sluice::target {
#define GEN_PASS_DECL_LEGALIZEFOREMISSION
#define GEN_PASS_DEF_LEGALIZEFOREMISSION
#define GEN_PASS_REGISTRATION
#include "lib/Target/TargetPasses.h.inc"
} // namespace mlir::sluice::target

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::target;

/// The alignment of arena views: one 16-byte vector access.
static constexpr int64_t kArenaAlignment = 16;

LogicalResult mlir::sluice::target::legalizeForEmission(ModuleOp module) {
  Builder builder(module.getContext());
  llvm::StringMap<std::string> nameOf; // C identifier -> tensor name
  int64_t descriptors = 0;
  // The GEMMs of fallback regions are numbered after all the others, so
  // that a module's slots do not depend on which calls have a fallback.
  SmallVector<exec::GemmOp> fallbackGemms;
  WalkResult walk = module.walk([&](Operation *op) {
    if (auto arg = llvm::dyn_cast<exec::ArgOp>(op)) {
      std::string field = cIdentifier(arg.getField());
      auto [it, inserted] = nameOf.try_emplace(field, arg.getField().str());
      if (!inserted && it->second != arg.getField())
        return arg.emitOpError() << "tensors '" << it->second << "' and '"
                                 << arg.getField() << "' would both be field '"
                                 << field << "' of the args struct",
               WalkResult::interrupt();
      arg.setField(field);
    } else if (llvm::isa<exec::ArenaOp, exec::SavedOp>(op)) {
      int64_t offset = llvm::isa<exec::ArenaOp>(op)
                           ? llvm::cast<exec::ArenaOp>(op).getOffset()
                           : llvm::cast<exec::SavedOp>(op).getOffset();
      if (offset % kArenaAlignment)
        return op->emitOpError()
                   << "offset " << offset << " is not a multiple of "
                   << kArenaAlignment << " bytes (one vector access)",
               WalkResult::interrupt();
    } else if (auto gemm = llvm::dyn_cast<exec::GemmOp>(op)) {
      // Every GEMM runs on cuBLASLt (with its algorithm chosen once, at
      // create), so every GEMM gets a slot; the C++ printer ignores it.
      if (llvm::isa<exec::GemmOp>(gemm->getParentOp()))
        fallbackGemms.push_back(gemm);
      else
        gemm.setDescriptorAttr(builder.getI64IntegerAttr(descriptors++));
    }
    return WalkResult::advance();
  });
  for (exec::GemmOp gemm : fallbackGemms)
    gemm.setDescriptorAttr(builder.getI64IntegerAttr(descriptors++));
  return failure(walk.wasInterrupted());
}

namespace {
struct LegalizeForEmissionPass
    : mlir::sluice::target::impl::LegalizeForEmissionBase<
          LegalizeForEmissionPass> {
  void runOnOperation() override {
    if (failed(legalizeForEmission(getOperation())))
      signalPassFailure();
  }
};
} // namespace

void mlir::sluice::target::registerTargetPasses() {
  registerSluiceTargetPasses();
}
