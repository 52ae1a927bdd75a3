//===- KernelGraph.h - the fused graph as plain data ------------*- C++ -*-===//
//
// What the pictures show (docs/Report.md, "Pictures"): one node per top-level
// kernel with its counts, the tensors that flow between kernels, and the
// tensors the forward saves for the backward. Collected from the compiled
// module and its counts; serialized to DOT (KernelGraphDot) and to the
// roofline SVG (Roofline) separately.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_REPORT_KERNELGRAPH_H
#define SLUICE_REPORT_KERNELGRAPH_H

#include "dialects/sluice/Analysis/DataMovement.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::sluice {

/// One kernel (or a top-level op the fusion left alone).
struct KernelNode {
  /// The op's report name ("k12"); unique within its graph only.
  std::string name;
  /// The symbol of the graph holding it.
  std::string graph;
  Phase phase = Phase::forward;
  /// "gemm", "fused", or the mnemonic of an unfused op.
  std::string kind;
  OpClass opClass = OpClass::ElementWise;
  /// The member ops' report names, in program order.
  std::vector<std::string> members;
  /// The folded GEMM epilogue, if any.
  std::string epilogue;
  Cost cost;
  /// Boundary tensors it reads (graph arguments other than saved tensors)
  /// and writes (graph results other than saved tensors), by boundary name.
  std::vector<std::string> reads, writes;
  /// Saved tensors it writes (forward) or reads (backward), without the
  /// "saved." prefix.
  std::vector<std::string> saves, readsSaved;
};

/// A tensor that one kernel writes and another reads.
struct KernelEdge {
  /// Indices into KernelGraph::nodes.
  unsigned from = 0, to = 0;
  /// The tensor's name: the producer's result name, or the saved tensor's
  /// boundary name ("saved.ln1.rstd").
  std::string tensor;
  uint64_t bytes = 0;
  /// True for a saved tensor, from the forward kernel that writes it to a
  /// backward kernel that reads it.
  bool saved = false;
};

struct KernelGraph {
  /// Forward graphs first, each in program order, then backward graphs.
  std::vector<KernelNode> nodes;
  std::vector<KernelEdge> edges;
};

/// The kernel graph of `module` (after the pipeline) from its counts. Every
/// counted top-level op becomes a node; ops inside kernels are members.
KernelGraph collectKernelGraph(ModuleOp module, const ModuleCounts &counts);

/// Graphviz DOT text: one cluster per graph (forward, backward), nodes
/// coloured by class and labelled with members, flop and bytes, edges
/// labelled with tensor and bytes, saved tensors as dashed red edges.
std::string renderKernelGraphDot(const KernelGraph &graph,
                                 llvm::StringRef title);

/// "1.23 GB", "456 kB", "12 B" (decimal units).
std::string formatBytes(uint64_t bytes);
/// "3.4 GFLOP", "12 kFLOP", "0 FLOP".
std::string formatFlop(uint64_t flop);
/// "19.5 TFLOP/s".
std::string formatRate(double flopPerSecond);

} // namespace mlir::sluice

#endif // SLUICE_REPORT_KERNELGRAPH_H
