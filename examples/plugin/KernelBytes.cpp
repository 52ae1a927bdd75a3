//===- KernelBytes.cpp - an example pass plugin for sluice-opt ------------===//
//
// --sluice-example-kernel-bytes: for every graph, each top-level kernel's
// bytes moved and its share of the graph's total, the graph's total against
// the lower bound (docs/Accounting.md), and the fusion candidates: a kernel
// result that exactly one other kernel reads and the graph does not return,
// whose write and read a merge of the two kernels would save (if the fusion
// rules of docs/Fusion.md allow it; this pass does not check them).
//
// It only reads the IR and the accounting; the IR is left unchanged.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/Analysis/DataMovement.h"
#include "dialects/sluice/SluiceBuilders.h"
#include "dialects/sluice/SluiceOps.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::sluice;

namespace {
struct KernelBytesPass
    : public PassWrapper<KernelBytesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(KernelBytesPass)

  StringRef getArgument() const final { return "sluice-example-kernel-bytes"; }
  StringRef getDescription() const final {
    return "Print each kernel's bytes, the lower bound and the fusion "
           "candidates (an example plugin)";
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<ModuleCounts> counts = countModule(module);
    if (failed(counts))
      return signalPassFailure();
    PhaseBytes baseline, lowerBound;
    if (failed(countBaseline(module, baseline, lowerBound)))
      return signalPassFailure();
    llvm::raw_ostream &os = llvm::outs();
    for (Phase phase : {Phase::forward, Phase::backward}) {
      uint64_t total = counts->phaseTotal(phase).bytesMoved().value_or(0);
      if (total == 0)
        continue;
      os << stringifyPhase(phase) << ":\n";
      for (const OpCount &count : counts->ops) {
        if (count.phase != phase)
          continue;
        uint64_t bytes = count.cost.bytesMoved().value_or(0);
        os << "  " << count.name << " (" << count.kind << ", "
           << count.members.size() << " members): " << bytes << " bytes, "
           << (100 * bytes / total) << "% of the " << stringifyPhase(phase)
           << "\n";
      }
      uint64_t bound = lowerBound.phase(phase);
      os << "  total " << total << " bytes, lower bound " << bound;
      if (bound)
        os << " (" << llvm::format("%.2f", static_cast<double>(total) / bound)
           << "x)";
      os << "\n";
    }
    for (GraphOp graph : module.getOps<GraphOp>())
      printCandidates(graph, os);
  }

  static StringRef reportName(Operation *op) {
    if (auto name = op->getAttrOfType<StringAttr>(
            SluiceDialect::getOpNameAttrName()))
      return name.getValue();
    return "?";
  }

  /// A kernel result read by exactly one other kernel and not returned:
  /// merging the two would save its write and its read.
  static void printCandidates(GraphOp graph, llvm::raw_ostream &os) {
    for (auto producer : graph.getBody().front().getOps<KernelOp>()) {
      for (Value result : producer->getResults()) {
        llvm::SmallPtrSet<Operation *, 2> readers;
        bool returned = false;
        llvm::SmallVector<Value> worklist = {result};
        while (!worklist.empty()) {
          Value value = worklist.pop_back_val();
          for (Operation *user : value.getUsers()) {
            if (auto rename = llvm::dyn_cast<RenameOp>(user))
              worklist.push_back(rename.getResult());
            else if (llvm::isa<KernelOp>(user))
              readers.insert(user);
            else
              returned = true;
          }
        }
        if (returned || readers.size() != 1)
          continue;
        auto bytes = llvm::cast<NamedTensorType>(result.getType())
                         .getNumBytes()
                         .value_or(0);
        os << "candidate: " << graph.getSymName() << " "
           << reportName(producer) << " -> " << reportName(*readers.begin())
           << " saves " << 2 * bytes << " bytes\n";
      }
    }
  }
};
} // namespace

/// The entry point sluice-opt's --load-pass-plugin looks up.
extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "SluiceKernelBytes", LLVM_VERSION_STRING,
          []() { PassRegistration<KernelBytesPass>(); }};
}
