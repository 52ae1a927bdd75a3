//===- FusionPlannerWorkTest.cpp - the planner's work grows with the ops --===//
//
// The fusion planner's merges keep the kernels acyclic through GroupOrder
// (a topological order kept under merges): its cycle answers equal a search
// of the whole graph on random DAGs, and the order stays topological. On a
// chain of layers, the planner's work (candidate merges priced, groups its
// cycle checks visit) grows with the number of layers, not faster: the
// compile-time must-show of docs/Layout.md, checked by counting work rather
// than timing it.
//
//===----------------------------------------------------------------------===//

#include "SluiceTestFixture.h"

#include "dialects/sluice/SluicePasses.h"
#include "dialects/sluice/Transforms/FusionPlan.h"
#include "dialects/sluice/Transforms/GroupOrder.h"

#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/DenseSet.h"

#include <random>
#include <set>
#include <string>

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::fusion;

namespace {

/// A DAG over groups: edge sets that merges contract.
struct GroupGraph {
  std::vector<std::set<unsigned>> successors, predecessors;
  std::vector<bool> alive;

  SmallVector<unsigned> next(unsigned g) const {
    return SmallVector<unsigned>(successors[g].begin(), successors[g].end());
  }
  SmallVector<unsigned> previous(unsigned g) const {
    return SmallVector<unsigned>(predecessors[g].begin(),
                                 predecessors[g].end());
  }
  /// `from` reaches `to` through a third group (a full search).
  bool reachesThroughOther(unsigned from, unsigned to) const {
    std::vector<unsigned> stack;
    std::set<unsigned> seen;
    for (unsigned n : successors[from])
      if (n != to && seen.insert(n).second)
        stack.push_back(n);
    while (!stack.empty()) {
      unsigned current = stack.back();
      stack.pop_back();
      if (current == to)
        return true;
      for (unsigned n : successors[current])
        if (seen.insert(n).second)
          stack.push_back(n);
    }
    return false;
  }
  void merge(unsigned kept, unsigned removed) {
    for (unsigned n : successors[removed]) {
      predecessors[n].erase(removed);
      if (n != kept) {
        successors[kept].insert(n);
        predecessors[n].insert(kept);
      }
    }
    for (unsigned p : predecessors[removed]) {
      successors[p].erase(removed);
      if (p != kept) {
        predecessors[kept].insert(p);
        successors[p].insert(kept);
      }
    }
    successors[kept].erase(removed);
    predecessors[kept].erase(removed);
    successors[removed].clear();
    predecessors[removed].clear();
    alive[removed] = false;
  }
};

TEST(GroupOrderTest, CycleAnswersEqualAFullSearchOnRandomDags) {
  std::mt19937 rng(7);
  for (unsigned trial = 0; trial < 200; ++trial) {
    unsigned size = 4 + rng() % 20;
    GroupGraph graph;
    graph.successors.resize(size);
    graph.predecessors.resize(size);
    graph.alive.assign(size, true);
    // Edges only from lower to higher numbers, sometimes far apart.
    for (unsigned a = 0; a < size; ++a)
      for (unsigned b = a + 1; b < size; ++b)
        if (rng() % 4 == 0) {
          graph.successors[a].insert(b);
          graph.predecessors[b].insert(a);
        }
    SmallVector<unsigned> initial;
    for (unsigned g = 0; g < size; ++g)
      initial.push_back(g);
    GroupOrder order(size, initial);
    auto next = [&](unsigned g) { return graph.next(g); };
    auto previous = [&](unsigned g) { return graph.previous(g); };
    for (unsigned attempt = 0; attempt < 3 * size; ++attempt) {
      unsigned a = rng() % size, b = rng() % size;
      if (a == b || !graph.alive[a] || !graph.alive[b])
        continue;
      bool expected =
          graph.reachesThroughOther(a, b) || graph.reachesThroughOther(b, a);
      ASSERT_EQ(order.reachesThroughOther(a, b, next), expected)
          << "trial " << trial << ", groups " << a << " and " << b;
      if (expected)
        continue;
      order.merge(a, b, next, previous);
      graph.merge(a, b);
      for (unsigned g = 0; g < size; ++g)
        if (graph.alive[g])
          for (unsigned n : graph.successors[g])
            ASSERT_LT(order.placeOf(g), order.placeOf(n))
                << "trial " << trial << ": edge " << g << " -> " << n
                << " runs backward after merging " << a << " and " << b;
    }
  }
}

/// `layers` chained copies of a layer: a projection with its bias, dropout,
/// a residual and a layernorm (decomposed: about 20 primitives each).
std::string chainOfLayers(unsigned layers) {
  std::string args, body;
  std::string x = "%x";
  const char *row = "!sluice.tensor<[j=16, i=32], f32>";
  const char *vec = "!sluice.tensor<[i=32], f32>";
  const char *weight = "!sluice.tensor<[o=32, i=32], f32>";
  for (unsigned n = 0; n < layers; ++n) {
    std::string l = std::to_string(n);
    for (auto [name, type] : {std::pair<std::string, const char *>{"w", weight},
                              {"b", vec},
                              {"g", vec},
                              {"e", vec}})
      args += ", %" + name + l + ": " + type + " {sluice.name = \"" + name + l +
              "\"}";
    body += "  %p" + l + " = sluice.contract " + x + ", %w" + l + " : (" + row +
            ", " + weight + ") -> !sluice.tensor<[j=16, o=32], f32>\n";
    body += "  %q" + l + " = sluice.rename %p" + l +
            " : !sluice.tensor<[j=16, o=32], f32> -> " + row + "\n";
    body += "  %a" + l + " = sluice.bias_add %q" + l + ", %b" + l + " : (" +
            row + ", " + vec + ") -> " + row + "\n";
    body += "  %d" + l + ", %m" + l + " = sluice.dropout %a" + l +
            " {probability = 0.1 : f64, stream = " + std::to_string(n + 1) +
            " : i64} : " + row + " -> " + row + ", " + row + "\n";
    body += "  %r" + l + " = sluice.residual_add " + x + ", %d" + l + " : (" +
            row + ", " + row + ") -> " + row + "\n";
    body += "  %y" + l + ", %mean" + l + ", %rstd" + l +
            " = sluice.layernorm %r" + l + ", %g" + l + ", %e" + l +
            " over [\"i\"] : (" + row + ", " + vec + ", " + vec + ") -> (" +
            row +
            ", !sluice.tensor<[j=16], f32>, !sluice.tensor<[j=16], "
            "f32>)\n";
    x = "%y" + l;
  }
  return std::string("sluice.graph @chain(%x: ") + row +
         " {sluice.name = \"x\"}" + args + ") -> (" + row +
         " {sluice.name = \"y\"}) {\n" + body + "  sluice.return " + x + " : " +
         row + "\n}\n";
}

class FusionPlannerWorkTest : public SluiceTest {
protected:
  /// The planner's work on `layers` chained layers, and the ops it planned.
  std::pair<PlannerWork, size_t> workOn(unsigned layers) {
    OwningOpRef<ModuleOp> module = parse(chainOfLayers(layers));
    EXPECT_TRUE(module);
    if (!module)
      return {};
    PassManager pm(&context);
    pm.addNestedPass<GraphOp>(createSluiceDecompose());
    EXPECT_TRUE(succeeded(pm.run(*module)));
    GraphOp graph = *module->getOps<GraphOp>().begin();
    FuseOptions options;
    FailureOr<FusionPlan> plan = planFusion(graph, options);
    EXPECT_TRUE(succeeded(plan));
    if (failed(plan))
      return {};
    return {plan->work, plan->ops.size()};
  }
};

TEST_F(FusionPlannerWorkTest, WorkGrowsLinearlyWithTheLayers) {
  auto [small, smallOps] = workOn(4);
  auto [large, largeOps] = workOn(32);
  ASSERT_GT(smallOps, 40u);
  ASSERT_GE(largeOps, 8 * smallOps - 8);
  double growth = static_cast<double>(largeOps) / smallOps;
  // Per op, the work of 32 layers stays within 25% of that of 4 layers.
  EXPECT_GT(small.candidatesPriced, 0u);
  EXPECT_GT(small.groupsVisited, 0u);
  EXPECT_LE(static_cast<double>(large.candidatesPriced),
            1.25 * growth * small.candidatesPriced)
      << small.candidatesPriced << " candidates priced for " << smallOps
      << " ops, " << large.candidatesPriced << " for " << largeOps;
  EXPECT_LE(static_cast<double>(large.groupsVisited),
            1.25 * growth * small.groupsVisited)
      << small.groupsVisited << " groups visited for " << smallOps << " ops, "
      << large.groupsVisited << " for " << largeOps;
}

} // namespace
