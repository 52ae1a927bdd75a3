//===- FusionOracle.cpp - judge the fusion with the accounting and oracle -===//
//
// sluice-fusion-oracle SPEC.json: compiles the layer twice with the Sluice
// pipeline (--fuse=off and on), prints the bytes each moves (the accounting)
// and the largest difference between their forward outputs in the reference
// interpreter (f64, the same pseudo-random inputs). A fusion pass is right
// when the difference is rounding and useful when the bytes go down.
//
//===----------------------------------------------------------------------===//

#include "sluice/Interpreter/Interpreter.h"
#include "sluice/Pipeline/Pipeline.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>

using namespace mlir;
using namespace mlir::sluice;

/// The forward graph of a compiled module.
static GraphOp forwardGraph(ModuleOp module) {
  for (GraphOp graph : module.getOps<GraphOp>())
    if (graph.getPhase() == Phase::forward)
      return graph;
  return {};
}

/// Deterministic inputs in [-1, 1) for every argument of `graph`.
static std::vector<Buffer> makeInputs(GraphOp graph) {
  std::vector<Buffer> inputs;
  uint64_t state = 12345;
  for (Type type : graph.getArgumentTypes()) {
    Buffer buffer{llvm::cast<NamedTensorType>(type), {}};
    buffer.data.resize(buffer.type.getNumElements().value_or(0));
    for (double &value : buffer.data) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      value = static_cast<double>(state >> 11) / static_cast<double>(1ULL << 52) - 1.0;
    }
    inputs.push_back(std::move(buffer));
  }
  return inputs;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: sluice-fusion-oracle SPEC.json\n";
    return 2;
  }
  DialectRegistry registry;
  registerSluiceDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  std::vector<Buffer> outputs[2];
  for (bool fuse : {false, true}) {
    PipelineOptions options;
    options.fuse = fuse;
    FailureOr<Compilation> compilation = compile(context, argv[1], options);
    if (failed(compilation))
      return 1;
    GraphOp graph = forwardGraph(*compilation->module);
    llvm::Expected<std::vector<Buffer>> result =
        interpret(graph, makeInputs(graph), InterpreterOptions());
    if (!result) {
      llvm::errs() << "sluice-fusion-oracle: error: "
                   << llvm::toString(result.takeError()) << "\n";
      return 1;
    }
    outputs[fuse] = std::move(*result);
    llvm::outs() << (fuse ? "fused" : "unfused") << ": "
                 << compilation->counts.total.bytesMoved().value_or(0)
                 << " bytes moved, "
                 << llvm::count_if(compilation->counts.ops,
                                   [](const OpCount &count) {
                                     return !count.members.empty();
                                   })
                 << " kernels\n";
  }
  // The first result is the layer output y (saved tensors follow).
  double maxDifference = 0;
  const std::vector<double> &unfused = outputs[0].front().data;
  const std::vector<double> &fused = outputs[1].front().data;
  for (size_t i = 0; i < unfused.size() && i < fused.size(); ++i)
    maxDifference = std::max(maxDifference, std::abs(unfused[i] - fused[i]));
  llvm::outs() << "max |y_fused - y_unfused| = " << maxDifference << "\n";
  return maxDifference < 1e-9 && unfused.size() == fused.size() ? 0 : 1;
}
