//===- KernelGraphTest.cpp - the data behind graph.svg and roofline.svg ---===//
//
// collectKernelGraph on a hand-written forward/backward pair: nodes in
// program order (forward first), edges between top-level ops by tensor name
// and bytes (through renames), saved tensors as edges from the forward
// producer to the backward reader, boundary reads/writes in the nodes. The
// DOT and SVG serializations carry one element per node.
//
//===----------------------------------------------------------------------===//

#include "sluice/Report/KernelGraph.h"
#include "SluiceTestFixture.h"
#include "dialects/sluice/Analysis/DataMovement.h"
#include "sluice/Report/Roofline.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::sluice;

namespace {

class KernelGraphTest : public SluiceTest {};

constexpr llvm::StringLiteral kModule = R"mlir(
  sluice.graph @g_forward(%x: !sluice.tensor<[j=4, i=64], f32> {sluice.name = "x"})
      -> (!sluice.tensor<[j=4, i=64], f32> {sluice.name = "y"},
          !sluice.tensor<[j=4, i=64], f32> {sluice.name = "saved.h", sluice.saved = "h"},
          !sluice.tensor<[j=4, i=64], f32> {sluice.name = "saved.x", sluice.saved = "x"},
          !sluice.tensor<[j=4, i=64], f32> {sluice.name = "saved.y", sluice.saved = "y"}) {
    %h = sluice.relayout %x {sluice.name = "h"} : !sluice.tensor<[j=4, i=64], f32> -> !sluice.tensor<[j=4, i=64], f32>
    %t = sluice.relayout %h {sluice.name = "t"} : !sluice.tensor<[j=4, i=64], f32> -> !sluice.tensor<[j=4, i=64], f32>
    %y = sluice.relayout %t {sluice.name = "out"} : !sluice.tensor<[j=4, i=64], f32> -> !sluice.tensor<[j=4, i=64], f32>
    sluice.return %y, %h, %x, %y : !sluice.tensor<[j=4, i=64], f32>, !sluice.tensor<[j=4, i=64], f32>, !sluice.tensor<[j=4, i=64], f32>, !sluice.tensor<[j=4, i=64], f32>
  }
  sluice.graph @g_backward(%sh: !sluice.tensor<[j=4, i=64], f32> {sluice.name = "saved.h", sluice.saved = "h"},
                           %sx: !sluice.tensor<[j=4, i=64], f32> {sluice.name = "saved.x", sluice.saved = "x"},
                           %sy: !sluice.tensor<[j=4, i=64], f32> {sluice.name = "saved.y", sluice.saved = "y"},
                           %dy: !sluice.tensor<[j=4, i=64], f32> {sluice.name = "dy"})
      -> (!sluice.tensor<[j=4, i=64], f32> {sluice.name = "d_x"})
      attributes {phase = #sluice<phase backward>} {
    %u = sluice.residual_add %dy, %sy {sluice.name = "u"} : (!sluice.tensor<[j=4, i=64], f32>, !sluice.tensor<[j=4, i=64], f32>) -> !sluice.tensor<[j=4, i=64], f32>
    %v = sluice.residual_add %u, %sx {sluice.name = "v"} : (!sluice.tensor<[j=4, i=64], f32>, !sluice.tensor<[j=4, i=64], f32>) -> !sluice.tensor<[j=4, i=64], f32>
    %w = sluice.residual_add %v, %sh {sluice.name = "w"} : (!sluice.tensor<[j=4, i=64], f32>, !sluice.tensor<[j=4, i=64], f32>) -> !sluice.tensor<[j=4, i=64], f32>
    sluice.return %w : !sluice.tensor<[j=4, i=64], f32>
  })mlir";

/// The index of the node named `name` in `graph` (phase-qualified).
int nodeIndex(const KernelGraph &graph, Phase phase, llvm::StringRef name) {
  for (auto [index, node] : llvm::enumerate(graph.nodes))
    if (node.phase == phase && node.name == name)
      return index;
  return -1;
}

TEST_F(KernelGraphTest, NodesEdgesAndSavedTensors) {
  OwningOpRef<ModuleOp> module = parse(kModule);
  ASSERT_TRUE(module);
  FailureOr<ModuleCounts> counts = countModule(*module);
  ASSERT_TRUE(succeeded(counts));
  KernelGraph graph = collectKernelGraph(*module, *counts);

  ASSERT_EQ(graph.nodes.size(), 6u);
  int h = nodeIndex(graph, Phase::forward, "h");
  int t = nodeIndex(graph, Phase::forward, "t");
  int out = nodeIndex(graph, Phase::forward, "out");
  int u = nodeIndex(graph, Phase::backward, "u");
  int v = nodeIndex(graph, Phase::backward, "v");
  int w = nodeIndex(graph, Phase::backward, "w");
  EXPECT_EQ(h, 0);
  EXPECT_EQ(out, 2);
  EXPECT_EQ(u, 3);
  EXPECT_EQ(graph.nodes[h].graph, "g_forward");
  EXPECT_EQ(graph.nodes[w].graph, "g_backward");

  // Boundary tensors and saved tensors in the nodes.
  EXPECT_EQ(graph.nodes[h].reads, std::vector<std::string>{"x"});
  EXPECT_EQ(graph.nodes[h].saves, std::vector<std::string>{"h"});
  EXPECT_EQ(graph.nodes[out].writes, std::vector<std::string>{"y"});
  EXPECT_EQ(graph.nodes[out].saves, std::vector<std::string>{"y"});
  EXPECT_EQ(graph.nodes[u].reads, std::vector<std::string>{"dy"});
  // saved.x is the forward's argument: no producer to draw an edge from.
  EXPECT_EQ(graph.nodes[v].readsSaved, std::vector<std::string>{"x"});
  EXPECT_EQ(graph.nodes[w].writes, std::vector<std::string>{"d_x"});

  // 4 tensors between ops of one graph, 2 saved from forward to backward.
  auto hasEdge = [&](int from, int to, llvm::StringRef tensor, bool saved) {
    return llvm::any_of(graph.edges, [&](const KernelEdge &edge) {
      return static_cast<int>(edge.from) == from &&
             static_cast<int>(edge.to) == to && edge.tensor == tensor &&
             edge.saved == saved && edge.bytes == 4 * 64 * 4;
    });
  };
  EXPECT_EQ(graph.edges.size(), 6u);
  EXPECT_TRUE(hasEdge(h, t, "h", false));
  EXPECT_TRUE(hasEdge(t, out, "t", false));
  EXPECT_TRUE(hasEdge(u, v, "u", false));
  EXPECT_TRUE(hasEdge(v, w, "v", false));
  EXPECT_TRUE(hasEdge(h, w, "saved.h", true));
  EXPECT_TRUE(hasEdge(out, u, "saved.y", true));

  // One DOT node and one roofline marker per node.
  std::string dot = renderKernelGraphDot(graph, "g \"quoted\"");
  EXPECT_NE(dot.find("digraph \"g \\\"quoted\\\"\""), std::string::npos);
  EXPECT_NE(dot.find("[id=\"g_backward:w\", class=\"kernel backward\""),
            std::string::npos);
  EXPECT_NE(dot.find("style=dashed"), std::string::npos);
  RooflineTarget target{"test target", 1e12, 100e12, 10e12};
  std::string svg = renderRooflineSvg(graph, target, "g");
  size_t markers = 0;
  for (size_t at = svg.find("<g class=\"kernel "); at != std::string::npos;
       at = svg.find("<g class=\"kernel ", at + 1))
    ++markers;
  EXPECT_EQ(markers, 6u);
  EXPECT_NE(svg.find("6 kernels</text>"), std::string::npos);
}

TEST_F(KernelGraphTest, Units) {
  EXPECT_EQ(formatBytes(0), "0 B");
  EXPECT_EQ(formatBytes(999), "999 B");
  EXPECT_EQ(formatBytes(8388608), "8.39 MB");
  EXPECT_EQ(formatFlop(8594128896), "8.59 GFLOP");
  EXPECT_EQ(formatRate(19.5e12), "19.5 TFLOP/s");
}

} // namespace
