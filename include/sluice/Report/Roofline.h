//===- Roofline.h - kernels against a target's roofline ---------*- C++ -*-===//
//
// Every kernel placed by arithmetic intensity (flop per byte moved) under the
// roofline of a GPU target: min(peak, intensity x bandwidth). Contractions
// meet the matrix peak of the layer's dtype, everything else the vector
// peak. Written directly as SVG (docs/Report.md, "Pictures").
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_REPORT_ROOFLINE_H
#define SLUICE_REPORT_ROOFLINE_H

#include "sluice/Analysis/Target.h"
#include "sluice/Report/KernelGraph.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::sluice {

/// The numbers a roofline needs.
struct RooflineTarget {
  /// What the numbers describe, e.g. "a100 (A100-SXM4-40GB, sm_80): …".
  std::string description;
  /// DRAM bandwidth, bytes per second.
  double bandwidth = 0;
  /// Peak of contractions, flop per second: the tensor-core peak for f16 and
  /// bf16 layers; for f32 the vector f32 peak (the emitted GEMMs use
  /// CUBLAS_COMPUTE_32F, not TF32).
  double matrixPeak = 0;
  /// Peak of element-wise and normalization work (the f32 vector peak: map
  /// bodies compute in f32), flop per second.
  double vectorPeak = 0;
};

/// The roofline of `target` (targets/*.json, docs/Targets.md) for layers of
/// `dtype` ("f32", "f16", "bf16"). Fails, naming the target and the type,
/// when the target has no peak for them.
llvm::Expected<RooflineTarget> rooflineOf(const GpuTarget &target,
                                          llvm::StringRef dtype);

/// The roofline picture as a standalone SVG document: the two roofs, the
/// ridge points, and one marker per kernel (forward circles, backward
/// squares; colour by class) with its name and a tooltip giving its members,
/// flop, bytes and intensity. Kernels without flop sit at the left edge.
std::string renderRooflineSvg(const KernelGraph &graph,
                              const RooflineTarget &target,
                              llvm::StringRef title);

} // namespace mlir::sluice

#endif // SLUICE_REPORT_ROOFLINE_H
