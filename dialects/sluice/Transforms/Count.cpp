//===- Count.cpp - annotate ops with their flop and bytes -----------------===//

#include "dialects/sluice/Analysis/DataMovement.h"
#include "dialects/sluice/SluicePasses.h"

namespace mlir::sluice {
#define GEN_PASS_DEF_SLUICECOUNT
#include "dialects/sluice/SluicePasses.h.inc"
} // namespace mlir::sluice

using namespace mlir;
using namespace mlir::sluice;

namespace {
struct CountPass : mlir::sluice::impl::SluiceCountBase<CountPass> {
  using SluiceCountBase::SluiceCountBase;

  void runOnOperation() override {
    FailureOr<ModuleCounts> counts = countModule(getOperation());
    if (failed(counts))
      return signalPassFailure();
    Builder builder(&getContext());
    Type u64 = builder.getIntegerType(64, /*isSigned=*/false);
    auto annotate = [&](Operation *op, StringRef prefix, const Cost &cost) {
      op->setAttr((prefix + "flop").str(),
                  builder.getIntegerAttr(u64, cost.flop));
      op->setAttr((prefix + "bytes_read").str(),
                  builder.getIntegerAttr(u64, cost.bytesRead));
      op->setAttr((prefix + "bytes_written").str(),
                  builder.getIntegerAttr(u64, cost.bytesWritten));
    };
    for (const OpCount &count : counts->ops) {
      count.op->setAttr("sluice.class",
                        builder.getStringAttr(stringifyOpClass(count.opClass)));
      annotate(count.op, "sluice.", count.cost);
    }
    for (GraphOp graph : getOperation().getOps<GraphOp>()) {
      Cost total;
      for (const OpCount &count : counts->ops)
        if (graph->isAncestor(count.op))
          (void)total.add(count.cost); // Cannot overflow: a subset of total.
      annotate(graph, "sluice.total_", total);
    }
  }
};
} // namespace
