//===- DataMovement.h - flop and byte accounting ----------------*- C++ -*-===//
//
// The analysis every other pass is judged by: for each op its class, flop,
// bytes read and bytes written, and the totals by class and by phase. The
// counting rules are documented in docs/Accounting.md.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DIALECT_ANALYSIS_DATAMOVEMENT_H
#define SLUICE_DIALECT_ANALYSIS_DATAMOVEMENT_H

#include "dialects/sluice/SluiceOps.h"

#include "llvm/ADT/StringRef.h"
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::sluice {

/// The paper's three operator classes.
enum class OpClass { Contraction = 0, Normalization = 1, ElementWise = 2 };
constexpr unsigned kNumOpClasses = 3;
constexpr unsigned kNumPhases = 2;

/// "contraction", "normalization" or "element-wise".
llvm::StringRef stringifyOpClass(OpClass opClass);

/// Flop and bytes of one op or a sum of ops.
struct Cost {
  uint64_t flop = 0;
  uint64_t bytesRead = 0;
  uint64_t bytesWritten = 0;

  /// Adds `other`; returns false (leaving this unchanged) on overflow.
  [[nodiscard]] bool add(const Cost &other);
  /// bytesRead + bytesWritten, or std::nullopt on overflow.
  std::optional<uint64_t> bytesMoved() const;
};

/// One op inside a sluice.kernel: its name, mnemonic, class and flop (its
/// bytes are the kernel's).
struct MemberCount {
  std::string name;
  std::string kind;
  OpClass opClass = OpClass::ElementWise;
  uint64_t flop = 0;
};

/// The counts of one op.
struct OpCount {
  Operation *op = nullptr;
  /// The op's `sluice.name`, or "<mnemonic>_<n>" numbered per graph.
  std::string name;
  /// The op's mnemonic, e.g. "contract" or "layernorm".
  std::string kind;
  OpClass opClass = OpClass::ElementWise;
  Phase phase = Phase::forward;
  Cost cost;
  /// For a sluice.kernel: the ops it holds, in program order.
  std::vector<MemberCount> members;
  /// For a gemm kernel: the folded epilogue ("bias", "bias_gelu", ...).
  std::string epilogue;
};

/// Bytes per phase and in total.
struct PhaseBytes {
  std::array<uint64_t, kNumPhases> byPhase{};
  uint64_t total = 0;
  uint64_t phase(Phase p) const { return byPhase[static_cast<unsigned>(p)]; }
};

/// The counts of every op in a module, in program order, and their totals.
struct ModuleCounts {
  std::vector<OpCount> ops;
  Cost total;
  std::array<Cost, kNumOpClasses> byClass;
  std::array<Cost, kNumPhases> byPhase;
  /// byPhaseAndClass[phase][class].
  std::array<std::array<Cost, kNumOpClasses>, kNumPhases> byPhaseAndClass;
  /// What a framework moves running the same graphs one kernel per
  /// composite op (docs/Accounting.md, "The baseline").
  PhaseBytes baseline;
  /// Bytes that must move whatever the kernels: boundary inputs and
  /// parameters read, outputs, gradients and saved tensors written.
  PhaseBytes lowerBound;

  const Cost &classTotal(OpClass c) const {
    return byClass[static_cast<unsigned>(c)];
  }
  const Cost &phaseTotal(Phase p) const {
    return byPhase[static_cast<unsigned>(p)];
  }
  const Cost &phaseClassTotal(Phase p, OpClass c) const {
    return byPhaseAndClass[static_cast<unsigned>(p)][static_cast<unsigned>(c)];
  }
};

/// True for ops that the accounting counts (every sluice op that computes;
/// not graphs, terminators, or `rename`, which is a view).
bool isCountedOp(Operation *op);

/// The class of a counted op.
OpClass classifyOp(Operation *op);

/// The graph attribute recording a graph's framework baseline (bytes) taken
/// before a rewrite that changes what the graph saves
/// (--sluice-recompute-row-statistics): a framework saves the softmax
/// probabilities, so the baseline stays the one of the original layer.
inline constexpr llvm::StringLiteral kBaselineBytesAttrName =
    "sluice.baseline_bytes";

/// The framework baseline bytes of one graph (docs/Accounting.md): the
/// recorded `sluice.baseline_bytes` if present, else computed.
FailureOr<uint64_t> graphBaselineBytes(GraphOp graph);

/// The baseline and lower bound of `module` (docs/Accounting.md). Fails with
/// a diagnostic on overflow.
LogicalResult countBaseline(ModuleOp module, PhaseBytes &baseline,
                            PhaseBytes &lowerBound);

/// One tensor an op is charged for: an operand read (each distinct source
/// tensor once; a view is its source) or a result written.
struct ChargedTensor {
  /// The operand or result as the op sees it (its type carries the layout).
  Value value;
  uint64_t bytes = 0;
  bool written = false;
  /// A bit-packed mask, charged one bit per element.
  bool packed = false;
};

/// The tensors `op` reads and writes and the bytes charged for each: the
/// byte half of countOp, for analyses that need bytes per tensor (the cost
/// model). Emits an error at the op and fails on overflow.
FailureOr<SmallVector<ChargedTensor>> chargedTensors(Operation *op);

/// Counts one counted op. Emits an error at the op and fails if a number
/// overflows 64 bits.
FailureOr<Cost> countOp(Operation *op);

/// Counts every counted op in every graph of `module`. Emits an error at the
/// op and fails on overflow.
FailureOr<ModuleCounts> countModule(ModuleOp module);

} // namespace mlir::sluice

#endif // SLUICE_DIALECT_ANALYSIS_DATAMOVEMENT_H
