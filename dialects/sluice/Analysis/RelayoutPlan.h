//===- RelayoutPlan.h - relayouts that make a contraction a GEMM -*- C++
//-*-===//
//
// Which of a contraction's lhs, rhs and result to relayout, and into what,
// so that it maps to one strided-batched GEMM (GemmMapping.h). Shared by
// --sluice-legalize-contractions, which inserts the relayouts, and by
// --sluice-select-layouts, which prices them. docs/Codegen.md has the rules.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DIALECT_ANALYSIS_RELAYOUTPLAN_H
#define SLUICE_DIALECT_ANALYSIS_RELAYOUTPLAN_H

#include "dialects/sluice/Analysis/GemmMapping.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>
#include <optional>

namespace mlir::sluice {

/// The three tensors of a contraction, by role.
enum ContractionRole : unsigned { kLhsRole = 0, kRhsRole = 1, kResultRole = 2 };

/// Which of lhs, rhs and result to relayout, and into what.
struct RelayoutPlan {
  std::array<NamedTensorType, 3> types;
  std::array<bool, 3> relayout = {false, false, false};
  /// The bytes of the new relayouted tensors (each read once, written once).
  uint64_t bytes = 0;
  unsigned count = 0;
};

/// The bytes a relayout of `type` writes (and reads); saturates.
uint64_t relayoutBytes(NamedTensorType type);

/// The plan that relayouts the roles in `mask` (bit i: role i) of a
/// contraction of `types` classified as `dims`, or std::nullopt if it still
/// does not map. It depends only on the kept tensors' types and, for each
/// relayouted operand, on its dimensions and which one is innermost.
std::optional<RelayoutPlan>
planRelayouts(const std::array<NamedTensorType, 3> &types,
              const ContractionDims &dims, unsigned mask);

/// True if `plan` is preferred to `other`: fewer new bytes, then fewer new
/// relayouts (then, by the callers' order, the lower subset).
bool isCheaperPlan(const RelayoutPlan &plan, const RelayoutPlan &other);

/// The cheapest plan for a contraction of these `types` (lhs, rhs, result):
/// fewest new bytes, then fewest new relayouts, then the lowest subset
/// (lhs before rhs before result). `alreadyMade(role, type)` says that an
/// operand relayout into `type` exists and costs nothing. std::nullopt if
/// no subset maps. The empty subset (no relayout) is not considered.
std::optional<RelayoutPlan> cheapestRelayouts(
    const std::array<NamedTensorType, 3> &types,
    llvm::function_ref<bool(ContractionRole, NamedTensorType)> alreadyMade);

} // namespace mlir::sluice

#endif // SLUICE_DIALECT_ANALYSIS_RELAYOUTPLAN_H
