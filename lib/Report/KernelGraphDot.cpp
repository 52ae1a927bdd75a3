//===- KernelGraphDot.cpp - the kernel graph as Graphviz DOT --------------===//

#include "sluice/Report/KernelGraph.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::sluice;

namespace {
/// Fill colours by class (contraction, normalization, element-wise).
constexpr const char *kClassColour[kNumOpClasses] = {"#9ecae1", "#fdae6b",
                                                     "#a1d99b"};
/// Members per label line: long fused kernels wrap instead of growing wide.
constexpr size_t kLineWidth = 44;

/// `text` as the inside of a DOT double-quoted string.
std::string escape(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

/// `items` joined by `separator`, broken into lines of about kLineWidth
/// characters (DOT "\n" escapes), after `prefix`.
std::string wrapList(llvm::StringRef prefix,
                     const std::vector<std::string> &items,
                     llvm::StringRef separator) {
  std::string text = prefix.str();
  size_t lineStart = 0;
  for (auto [index, item] : llvm::enumerate(items)) {
    if (index) {
      text += separator.str();
      if (text.size() - lineStart + item.size() > kLineWidth) {
        text += "\\n";
        lineStart = text.size();
      }
    }
    text += escape(item);
  }
  return text;
}

std::string nodeId(unsigned index) { return "n" + std::to_string(index); }

std::string nodeLabel(const KernelNode &node) {
  std::string label = escape(node.name) + "  ·  " + escape(node.kind);
  if (!node.epilogue.empty())
    label += " (" + escape(node.epilogue) + ")";
  label += "\\n";
  if (!node.members.empty())
    label += wrapList("", node.members, " + ") + "\\n";
  label += formatFlop(node.cost.flop) + "  ·  " +
           formatBytes(node.cost.bytesMoved().value_or(0)) + " moved";
  if (!node.reads.empty())
    label += "\\n" + wrapList("reads ", node.reads, ", ");
  if (!node.readsSaved.empty())
    label += "\\n" + wrapList("reads saved ", node.readsSaved, ", ");
  if (!node.writes.empty())
    label += "\\n" + wrapList("writes ", node.writes, ", ");
  if (!node.saves.empty())
    label += "\\n" + wrapList("saves ", node.saves, ", ");
  return label;
}
} // namespace

std::string mlir::sluice::renderKernelGraphDot(const KernelGraph &graph,
                                               llvm::StringRef title) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "digraph \"" << escape(title) << "\" {\n"
     << "  graph [fontname=\"Helvetica\", fontsize=12, rankdir=TB, "
        "newrank=true, label=\""
     << escape(title)
     << ": kernels (blue contraction, orange normalization, green "
        "element-wise); dashed red edges are saved tensors\", labelloc=t];\n"
     << "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", "
        "fontsize=10];\n"
     << "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#555555\"];\n";
  // One cluster per graph, in node order (forward graphs first).
  std::vector<std::string> graphs;
  for (const KernelNode &node : graph.nodes)
    if (!llvm::is_contained(graphs, node.graph))
      graphs.push_back(node.graph);
  for (auto [clusterIndex, graphName] : llvm::enumerate(graphs)) {
    os << "  subgraph cluster_" << clusterIndex << " {\n";
    bool backward = false;
    for (const KernelNode &node : graph.nodes)
      if (node.graph == graphName)
        backward = node.phase == Phase::backward;
    os << "    label=\"" << escape(graphName) << " ("
       << (backward ? "backward" : "forward") << ")\"; style=rounded; "
       << "color=\"" << (backward ? "#b07aa1" : "#4e79a7") << "\";\n";
    for (auto [index, node] : llvm::enumerate(graph.nodes)) {
      if (node.graph != graphName)
        continue;
      os << "    " << nodeId(index) << " [id=\"" << escape(node.graph) << ":"
         << escape(node.name) << "\", class=\"kernel "
         << stringifyPhase(node.phase) << "\", label=\"" << nodeLabel(node)
         << "\", fillcolor=\""
         << kClassColour[static_cast<unsigned>(node.opClass)] << "\"";
      if (!node.saves.empty())
        os << ", penwidth=2, color=\"#d62728\"";
      os << "];\n";
    }
    os << "  }\n";
  }
  for (const KernelEdge &edge : graph.edges) {
    os << "  " << nodeId(edge.from) << " -> " << nodeId(edge.to)
       << " [label=\"" << escape(edge.tensor) << "\\n"
       << formatBytes(edge.bytes) << "\"";
    if (edge.saved)
      os << ", style=dashed, color=\"#d62728\", fontcolor=\"#d62728\", "
            "constraint=false";
    os << "];\n";
  }
  os << "}\n";
  return text;
}
