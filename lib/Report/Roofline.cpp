//===- Roofline.cpp - kernels against a target's roofline, as SVG ---------===//

#include "sluice/Report/Roofline.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::sluice;

llvm::Expected<RooflineTarget>
mlir::sluice::rooflineOf(const GpuTarget &target, llvm::StringRef dtype) {
  bool halfPrecision = dtype == "f16" || dtype == "bf16";
  std::optional<double> vector = target.vectorFlops.f32;
  std::optional<double> matrix =
      halfPrecision ? target.tensorFlops.forType(dtype) : vector;
  if (!vector || !matrix || target.dramBytesPerSecond <= 0)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "target '" + target.name + "' has no " +
            (vector ? "tensor-core " + dtype.str() : std::string("f32")) +
            " peak or no DRAM bandwidth for the roofline");
  std::string description;
  llvm::raw_string_ostream os(description);
  os << target.name << " (" << target.device << ", " << target.arch
     << "): " << llvm::format("%g", target.dramBytesPerSecond / 1e9)
     << " GB/s, contractions " << formatRate(*matrix)
     << (halfPrecision ? " (" + dtype.str() + " tensor cores)" : " (f32)")
     << ", vector " << formatRate(*vector) << " f32";
  return RooflineTarget{description, target.dramBytesPerSecond, *matrix,
                        *vector};
}

namespace {
/// Plot geometry, in SVG pixels.
constexpr double kWidth = 980, kHeight = 620;
constexpr double kLeft = 90, kRight = 760, kTop = 60, kBottom = 550;
constexpr const char *kClassColour[kNumOpClasses] = {"#4e79a7", "#f28e2b",
                                                     "#59a14f"};

std::string escapeXml(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// Log-log axes from intensity (flop/byte) and flop/s to pixels.
struct Axes {
  double x0, x1, y0, y1; // decades
  double x(double intensity) const {
    return kLeft + (std::log10(intensity) - x0) / (x1 - x0) * (kRight - kLeft);
  }
  double y(double flops) const {
    return kBottom - (std::log10(flops) - y0) / (y1 - y0) * (kBottom - kTop);
  }
};

double intensityOf(const KernelNode &node) {
  uint64_t bytes = node.cost.bytesMoved().value_or(0);
  return bytes ? static_cast<double>(node.cost.flop) / bytes : 0.0;
}

std::string formatIntensity(double value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.3g", value);
  return text;
}

/// Label positions that avoid the labels placed before (roughly: a label is
/// a box 5.5 px per character wide, 10 px high) and stay inside the plot:
/// right of the point when it fits, else left of it.
struct LabelPlacer {
  struct Box {
    double x0, y0, x1, y1;
  };
  struct Placement {
    double x, y;
    bool leftOfPoint;
  };
  std::vector<Box> boxes;

  Placement place(double x, double y, size_t chars) {
    static const double offsets[] = {-8,  12, -18, 22,  -28, 32,
                                     -38, 42, -48, 52, -58, 62};
    double width = 5.5 * chars;
    for (double dy : offsets) {
      for (bool left : {false, true}) {
        Box box = left ? Box{x - 7 - width, y + dy - 9, x - 7, y + dy + 1}
                       : Box{x + 7, y + dy - 9, x + 7 + width, y + dy + 1};
        if (box.x1 > kRight || box.x0 < kLeft)
          continue;
        bool overlaps = llvm::any_of(boxes, [&](const Box &other) {
          return box.x0 < other.x1 && other.x0 < box.x1 &&
                 box.y0 < other.y1 && other.y0 < box.y1;
        });
        if (!overlaps) {
          boxes.push_back(box);
          return {left ? x - 7 : x + 7, y + dy, left};
        }
      }
    }
    return {x + 7, y + offsets[0], false};
  }
};
/// A raw_ostream that prints doubles as SVG coordinates ("123.4"), not in
/// raw_ostream's default exponent form.
struct SvgStream {
  llvm::raw_ostream &os;
};
template <typename T>
SvgStream &operator<<(SvgStream &out, const T &value) {
  out.os << value;
  return out;
}
SvgStream &operator<<(SvgStream &out, double value) {
  out.os << llvm::format("%.1f", value);
  return out;
}
} // namespace

/// Axes spanning the target's roofs and every kernel's intensity, with a
/// factor of two of margin.
static Axes axesFor(const KernelGraph &graph, const RooflineTarget &target) {
  double bandwidth = target.bandwidth;
  double lowPeak = std::min(target.vectorPeak, target.matrixPeak);
  double highPeak = std::max(target.vectorPeak, target.matrixPeak);
  double minIntensity = lowPeak / bandwidth / 10, maxIntensity =
                                                      highPeak / bandwidth * 4;
  for (const KernelNode &node : graph.nodes)
    if (double intensity = intensityOf(node); intensity > 0) {
      minIntensity = std::min(minIntensity, intensity / 2);
      maxIntensity = std::max(maxIntensity, intensity * 2);
    }
  Axes axes;
  axes.x0 = std::floor(std::log10(minIntensity));
  axes.x1 = std::ceil(std::log10(maxIntensity));
  axes.y1 = std::ceil(std::log10(highPeak * 1.5));
  axes.y0 = std::floor(std::log10(std::pow(10.0, axes.x0) * bandwidth));
  return axes;
}

/// The document head, the title, the decade grid with its tick labels, the
/// plot frame and the axis titles.
static void printFrame(SvgStream &os, const Axes &axes,
                       const RooflineTarget &target, llvm::StringRef title) {
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
     << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth
     << "\" height=\"" << kHeight << "\" viewBox=\"0 0 " << kWidth << " "
     << kHeight << "\" font-family=\"Helvetica, Arial, sans-serif\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"" << kLeft << "\" y=\"24\" font-size=\"15\">"
     << escapeXml(title) << ": kernels against the roofline</text>\n"
     << "<text x=\"" << kLeft << "\" y=\"42\" font-size=\"11\" fill=\"#555\">"
     << escapeXml(target.description) << "</text>\n";

  // Grid and decade ticks.
  os << "<g stroke=\"#e0e0e0\" stroke-width=\"1\">\n";
  for (double d = axes.x0; d <= axes.x1; d += 1) {
    double x = axes.x(std::pow(10.0, d));
    os << "<line x1=\"" << x << "\" y1=\"" << kTop << "\" x2=\"" << x
       << "\" y2=\"" << kBottom << "\"/>\n";
  }
  for (double d = axes.y0; d <= axes.y1; d += 1) {
    double y = axes.y(std::pow(10.0, d));
    os << "<line x1=\"" << kLeft << "\" y1=\"" << y << "\" x2=\"" << kRight
       << "\" y2=\"" << y << "\"/>\n";
  }
  os << "</g>\n<g font-size=\"10\" fill=\"#333\">\n";
  for (double d = axes.x0; d <= axes.x1; d += 1)
    os << "<text x=\"" << axes.x(std::pow(10.0, d)) << "\" y=\""
       << kBottom + 16 << "\" text-anchor=\"middle\">"
       << llvm::format("%g", std::pow(10.0, d)) << "</text>\n";
  for (double d = axes.y0; d <= axes.y1; d += 1)
    os << "<text x=\"" << kLeft - 6 << "\" y=\"" << axes.y(std::pow(10.0, d)) + 3
       << "\" text-anchor=\"end\">" << formatRate(std::pow(10.0, d))
       << "</text>\n";
  os << "</g>\n"
     << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\""
     << kRight - kLeft << "\" height=\"" << kBottom - kTop
     << "\" fill=\"none\" stroke=\"#333\"/>\n"
     << "<text x=\"" << (kLeft + kRight) / 2 << "\" y=\"" << kBottom + 38
     << "\" font-size=\"12\" text-anchor=\"middle\">arithmetic intensity "
        "(flop per byte moved)</text>\n"
     << "<text transform=\"translate(18," << (kTop + kBottom) / 2
     << ") rotate(-90)\" font-size=\"12\" text-anchor=\"middle\">attainable "
        "FLOP/s</text>\n";
}

/// One roof: bandwidth-bound slope up to the ridge of `peak`, then flat,
/// with its label (reserved in `placer` so kernel labels avoid it).
static void printRoof(SvgStream &os, LabelPlacer &placer, const Axes &axes,
                      double bandwidth, double peak, const char *colour,
                      llvm::StringRef label) {
  double start = std::pow(10.0, axes.x0);
  double ridge = peak / bandwidth;
  double end = std::pow(10.0, axes.x1);
  std::string text = label.str() + " " + formatRate(peak) + ", ridge at " +
                     formatIntensity(ridge) + " flop/B";
  double width = 5.5 * text.size();
  placer.boxes.push_back(
      {kRight - 4 - width, axes.y(peak) - 15, kRight - 4, axes.y(peak) - 3});
  os << "<polyline fill=\"none\" stroke=\"" << colour
     << "\" stroke-width=\"2\" points=\"" << axes.x(start) << ","
     << axes.y(start * bandwidth) << " " << axes.x(ridge) << "," << axes.y(peak)
     << " " << axes.x(end) << "," << axes.y(peak) << "\"/>\n"
     << "<line x1=\"" << axes.x(ridge) << "\" y1=\"" << axes.y(peak)
     << "\" x2=\"" << axes.x(ridge) << "\" y2=\"" << kBottom << "\" stroke=\""
     << colour << "\" stroke-dasharray=\"4,3\"/>\n"
     << "<text x=\"" << kRight - 4 << "\" y=\"" << axes.y(peak) - 5
     << "\" font-size=\"10\" text-anchor=\"end\" fill=\"" << colour << "\">"
     << escapeXml(text) << "</text>\n";
}

namespace {
/// Kernels drawn at one point, labelled together.
struct Point {
  double x, y;
  std::vector<std::string> forward, backward;
};
} // namespace

/// One kernel's marker (circle forward, square backward) with its tooltip;
/// returns whether it is memory-bound and records it in `points`.
static bool printKernel(SvgStream &os, std::vector<Point> &points,
                        const KernelNode &node, const Axes &axes,
                        const RooflineTarget &target) {
  double bandwidth = target.bandwidth;
  double intensity = intensityOf(node);
  double peak = node.opClass == OpClass::Contraction ? target.matrixPeak
                                                     : target.vectorPeak;
  bool bound = intensity < peak / bandwidth;
  double x = intensity > 0 ? axes.x(intensity) : kLeft;
  double y =
      intensity > 0 ? axes.y(std::min(peak, intensity * bandwidth)) : kBottom;
  const char *colour = kClassColour[static_cast<unsigned>(node.opClass)];
  bool backward = node.phase == Phase::backward;
  std::string members;
  for (auto [i, member] : llvm::enumerate(node.members))
    members += (i ? " + " : "") + member;
  os << "<g class=\"kernel " << stringifyPhase(node.phase) << "\" id=\""
     << escapeXml(node.graph) << ":" << escapeXml(node.name) << "\">";
  os << "<title>" << escapeXml(node.graph) << " " << escapeXml(node.name)
     << " (" << escapeXml(node.kind) << "): " << escapeXml(members) << "; "
     << formatFlop(node.cost.flop) << ", "
     << formatBytes(node.cost.bytesMoved().value_or(0)) << " moved, intensity "
     << formatIntensity(intensity) << " flop/B"
     << (bound ? ", memory-bound" : ", compute-bound") << "</title>";
  if (backward)
    os << "<rect x=\"" << x - 4.5 << "\" y=\"" << y - 4.5
       << "\" width=\"9\" height=\"9\"";
  else
    os << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"5\"";
  os << " fill=\"" << colour
     << "\" fill-opacity=\"0.85\" stroke=\"#222\"/></g>\n";
  auto same = llvm::find_if(points, [&](const Point &point) {
    return std::abs(point.x - x) < 1.5 && std::abs(point.y - y) < 1.5;
  });
  if (same == points.end())
    same = points.insert(points.end(), Point{x, y, {}, {}});
  (backward ? same->backward : same->forward).push_back(node.name);
  return bound;
}

/// The kernels, left to right; kernels at the same point share one label
/// ("fwd k0 k1 · bwd k20") placed clear of the labels before it. Returns
/// how many are memory-bound.
static unsigned printKernels(SvgStream &os, LabelPlacer &placer,
                             const KernelGraph &graph, const Axes &axes,
                             const RooflineTarget &target) {
  std::vector<unsigned> order(graph.nodes.size());
  for (unsigned i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::stable_sort(order, [&](unsigned a, unsigned b) {
    return intensityOf(graph.nodes[a]) < intensityOf(graph.nodes[b]);
  });
  std::vector<Point> points;
  unsigned memoryBound = 0;
  os << "<g>\n";
  for (unsigned index : order)
    memoryBound += printKernel(os, points, graph.nodes[index], axes, target);
  os << "</g>\n<g font-size=\"9\" fill=\"#222\">\n";
  for (const Point &point : points) {
    std::string label;
    if (!point.forward.empty())
      label += "fwd " + llvm::join(point.forward, " ");
    if (!point.backward.empty())
      label += (label.empty() ? "" : " · ") + std::string("bwd ") +
               llvm::join(point.backward, " ");
    LabelPlacer::Placement at = placer.place(point.x, point.y, label.size());
    os << "<text x=\"" << at.x << "\" y=\"" << at.y << "\""
       << (at.leftOfPoint ? " text-anchor=\"end\"" : "") << ">"
       << escapeXml(label) << "</text>\n";
  }
  os << "</g>\n";
  return memoryBound;
}

/// The legend (classes, phases) and the count of memory-bound kernels; closes
/// the document.
static void printLegend(SvgStream &os, unsigned memoryBound,
                        size_t numKernels) {
  double lx = kRight + 20, ly = kTop + 10;
  os << "<g font-size=\"11\">\n";
  const char *classNames[kNumOpClasses] = {"contraction", "normalization",
                                           "element-wise"};
  for (unsigned c = 0; c < kNumOpClasses; ++c, ly += 18)
    os << "<circle cx=\"" << lx + 5 << "\" cy=\"" << ly - 4
       << "\" r=\"5\" fill=\"" << kClassColour[c]
       << "\" stroke=\"#222\"/><text x=\"" << lx + 16 << "\" y=\"" << ly
       << "\">" << classNames[c] << "</text>\n";
  os << "<circle cx=\"" << lx + 5 << "\" cy=\"" << ly - 4
     << "\" r=\"5\" fill=\"white\" stroke=\"#222\"/><text x=\"" << lx + 16
     << "\" y=\"" << ly << "\">forward kernel</text>\n";
  ly += 18;
  os << "<rect x=\"" << lx + 0.5 << "\" y=\"" << ly - 8.5
     << "\" width=\"9\" height=\"9\" fill=\"white\" stroke=\"#222\"/><text x=\""
     << lx + 16 << "\" y=\"" << ly << "\">backward kernel</text>\n";
  ly += 30;
  os << "<text x=\"" << lx << "\" y=\"" << ly << "\">" << memoryBound << " of "
     << numKernels << " kernels</text>\n"
     << "<text x=\"" << lx << "\" y=\"" << ly + 14
     << "\">are memory-bound</text>\n"
     << "<text x=\"" << lx << "\" y=\"" << ly + 28
     << "\">(left of their ridge)</text>\n"
     << "<text x=\"" << lx << "\" y=\"" << ly + 50
     << "\" fill=\"#555\">kernels without flop</text>\n"
     << "<text x=\"" << lx << "\" y=\"" << ly + 64
     << "\" fill=\"#555\">sit on the left edge</text>\n"
     << "</g>\n</svg>\n";
}

std::string mlir::sluice::renderRooflineSvg(const KernelGraph &graph,
                                            const RooflineTarget &target,
                                            llvm::StringRef title) {
  Axes axes = axesFor(graph, target);
  std::string text;
  llvm::raw_string_ostream stream(text);
  SvgStream os{stream};
  printFrame(os, axes, target, title);
  LabelPlacer placer;
  printRoof(os, placer, axes, target.bandwidth, target.matrixPeak, "#444",
            "contraction peak");
  if (target.vectorPeak != target.matrixPeak)
    printRoof(os, placer, axes, target.bandwidth, target.vectorPeak, "#888",
              "vector peak");
  unsigned memoryBound = printKernels(os, placer, graph, axes, target);
  printLegend(os, memoryBound, graph.nodes.size());
  return text;
}
