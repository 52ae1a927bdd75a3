//===- RecomputeSlices.cpp - save a stacked tensor, not its slices --------===//
//
// --sluice-recompute-slices on a decomposed forward/backward pair. Where
// the forward saves every slice of a stacked tensor (Q, K and V cut from one
// stacked projection, --sluice-stack-contractions) and the backward only
// contracts them (the streaming backward's operands), the forward saves the
// stacked tensor instead and the backward cuts the slices again. The same
// bytes are saved, and the slices become reads that the streaming kernels
// of both graphs take in (docs/Layout.md, "Stacked Q/K/V contractions").
//
//===----------------------------------------------------------------------===//

#include "FusionPlan.h"
#include "SavedTensors.h"

#include "dialects/sluice/SluiceBuilders.h"
#include "dialects/sluice/SluicePasses.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::sluice {
#define GEN_PASS_DEF_SLUICERECOMPUTESLICES
#include "dialects/sluice/SluicePasses.h.inc"
} // namespace mlir::sluice

using namespace mlir;
using namespace mlir::sluice;

namespace {
/// A saved slice and the backward argument that holds it.
struct SavedSlice {
  StackedSlice slice;
  BlockArgument argument;
};

/// True if the backward only contracts `argument`.
bool onlyContracted(BlockArgument argument) {
  return !argument.use_empty() &&
         llvm::all_of(argument.getUsers(), [](Operation *user) {
           return llvm::isa<ContractOp>(user);
         });
}

/// Replaces each slice's argument by the slice cut again from the saved
/// stacked tensor `source`, through a rename of its own where the slice
/// read one (the streaming kernel then reads each as an input of its own).
void recompute(Value source, MutableArrayRef<SavedSlice> slices,
               SavedTensors &saved, GraphOp backward) {
  std::string name = fusion::reportName(source.getDefiningOp());
  BlockArgument stacked = saved.save(source, name);
  OpBuilder builder(backward.getContext());
  builder.setInsertionPointToStart(&backward.getBody().front());
  for (SavedSlice &entry : slices) {
    StackedSlice &slice = entry.slice;
    IRMapping mapping;
    Value view = stacked;
    if (slice.stacked.getType() != stacked.getType()) {
      auto rename =
          llvm::cast<RenameOp>(builder.clone(*slice.stacked.getDefiningOp()));
      rename->setOperand(0, stacked);
      view = rename.getResult();
    }
    mapping.map(slice.stacked, view);
    Operation *mask = builder.clone(*slice.mask, mapping);
    Operation *sum = builder.clone(*slice.sum, mapping);
    for (Operation *op : {view.getDefiningOp(), mask, sum})
      if (op)
        op->setAttr(
            SluiceDialect::getOpNameAttrName(),
            builder.getStringAttr(fusion::reportName(op) + ".recompute"));
    entry.argument.replaceAllUsesWith(sum->getResult(0));
    (void)saved.unsave(slice.sum.getResult());
  }
}

struct RecomputeSlicesPass
    : mlir::sluice::impl::SluiceRecomputeSlicesBase<RecomputeSlicesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto pair = forwardBackwardPair(module);
    if (!pair)
      return;
    GraphOp forward = pair->first, backward = pair->second;
    SavedTensors saved(forward, backward);
    // The saved slices the backward only contracts, by stacked tensor (its
    // source, renames looked through), in program order.
    llvm::MapVector<Value, SmallVector<SavedSlice>> bySource;
    for (ReduceOp sum : forward.getBody().front().getOps<ReduceOp>()) {
      std::optional<StackedSlice> slice = matchSlice(sum.getResult());
      if (!slice)
        continue;
      BlockArgument argument = saved.lookup(sum.getResult());
      if (!argument || !onlyContracted(argument))
        continue;
      // The stacked tensor itself or one rename of it.
      Value source = slice->stacked;
      if (auto rename = source.getDefiningOp<RenameOp>())
        source = rename.getInput();
      if (!source.getDefiningOp() || source.getDefiningOp<RenameOp>())
        continue;
      bySource[source].push_back({*slice, argument});
    }
    bool recorded = false;
    for (auto &[source, slices] : bySource) {
      // Every index saved: the stacked tensor is no more saved memory.
      llvm::SmallDenseSet<int64_t> indices;
      for (const SavedSlice &entry : slices)
        indices.insert(entry.slice.index);
      const StackedSlice &first = slices.front().slice;
      if (llvm::any_of(slices,
                       [&](const SavedSlice &entry) {
                         return entry.slice.dim != first.dim;
                       }) ||
          int64_t(indices.size()) !=
              getTensorType(first.stacked).getDimSize(first.dim))
        continue;
      if (!recorded && failed(recordBaselines(module)))
        return signalPassFailure();
      recorded = true;
      recompute(source, slices, saved, backward);
    }
  }
};
} // namespace
