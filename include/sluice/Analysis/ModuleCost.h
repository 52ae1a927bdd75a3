//===- ModuleCost.h - predicted times of a module's kernels ------*- C++ -*-===//
//
// Applies the cost model (CostModel.h) to every kernel the accounting counted:
// reads each kernel's layout and configuration from the IR (its thread
// schedule, or its GEMM mapping), predicts its time on a target, and sums
// the phases. A profile database overrides the model where it has an entry.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_ANALYSIS_MODULECOST_H
#define SLUICE_ANALYSIS_MODULECOST_H

#include "dialects/sluice/Analysis/DataMovement.h"
#include "sluice/Analysis/CostModel.h"
#include "sluice/Analysis/ProfileDatabase.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace mlir::sluice {

struct GemmMapping;

/// The cost model's shape of the GEMM `mapping` describes, on operands of
/// `lhs`'s element type: sizes, batch, transposes, leading dimensions and the
/// element type. The flop and bytes are left to the caller, which knows what
/// the GEMM is charged.
GemmShape gemmShapeOf(const GemmMapping &mapping, NamedTensorType lhs);

/// One kernel's prediction.
struct PredictedKernel {
  /// The accounting's name for it (OpCount::name) and its phase.
  std::string name;
  Phase phase = Phase::forward;
  /// "gemm:contract,map" or "fused:random_mask,map,...": the kernel kind
  /// and its members' mnemonics (the profile database's key, with layout).
  std::string signature;
  /// "(operand types) -> (result types)", layouts included.
  std::string layout;
  KernelPrediction prediction;
};

/// The predicted times of a module on one target.
struct ModulePrediction {
  std::string targetName;
  /// In the accounting's (program) order.
  std::vector<PredictedKernel> kernels;
  std::array<double, kNumPhases> phaseSeconds{};
  double totalSeconds = 0;
  /// How many kernel times came from the profile database.
  unsigned measuredKernels = 0;

  double phase(Phase p) const { return phaseSeconds[static_cast<unsigned>(p)]; }
};

/// The shape the cost model sees for a counted op: a streaming attention
/// for a streaming kernel, a GEMM for a gemm kernel or a contraction, a
/// memory-bound kernel otherwise. Emits an error and
/// fails only on IR no kernel could run.
FailureOr<KernelPrediction> predictOp(const OpCount &count,
                                      const GpuTarget &target);

/// Predicts every op of `counts` on `target`; `profile`, when given, must be
/// for the same target and overrides the model where it has an entry.
FailureOr<ModulePrediction> predictModule(const ModuleCounts &counts,
                                          const GpuTarget &target,
                                          const ProfileDatabase *profile);

/// The signature and layout strings of a counted op (the profile keys).
std::string kernelSignature(Operation *op);
std::string kernelLayout(Operation *op);

} // namespace mlir::sluice

#endif // SLUICE_ANALYSIS_MODULECOST_H
