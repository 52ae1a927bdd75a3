//===- RelayoutPlan.cpp - relayouts that make a contraction a GEMM --------===//
//
// Every subset of {lhs, rhs, result} is tried: the tensors kept fix the
// groups' orders, the relayouted ones get a canonical layout ([batch, free,
// contracted] or [batch, contracted, free] for an operand, [batch, free,
// free] for the result); the cheapest subset that maps wins.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/Analysis/RelayoutPlan.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::sluice;

uint64_t mlir::sluice::relayoutBytes(NamedTensorType type) {
  // Callers checked that the element count fits in int64_t; the byte size
  // may still overflow, then it counts as more than any real tensor.
  return type.getNumBytes().value_or(UINT64_MAX / 4);
}

namespace {

using Types = std::array<NamedTensorType, 3>;

/// `group` ordered by position in `type`.
SmallVector<StringAttr> inLayoutOrder(NamedTensorType type,
                                      ArrayRef<StringAttr> group) {
  SmallVector<StringAttr> ordered(group);
  llvm::stable_sort(ordered, [&](StringAttr x, StringAttr y) {
    return *type.getDimPosition(x.getValue()) <
           *type.getDimPosition(y.getValue());
  });
  return ordered;
}

SmallVector<StringAttr>
concat(std::initializer_list<ArrayRef<StringAttr>> parts) {
  SmallVector<StringAttr> all;
  for (ArrayRef<StringAttr> part : parts)
    all.append(part.begin(), part.end());
  return all;
}

/// The layouts the relayouted tensors of `mask` (bit i: role i) get.
std::array<SmallVector<StringAttr>, 3>
canonicalLayouts(const Types &types, const ContractionDims &dims,
                 unsigned mask) {
  auto kept = [&](ContractionRole role) { return !(mask & (1u << role)); };
  // A group's order is the one of the first kept tensor holding it (they must
  // agree, which the final mapping checks); if none is kept, the result's
  // order for batch and free dimensions and the lhs's for contracted ones
  // (the order classifyContraction lists them in).
  auto order = [&](ArrayRef<StringAttr> group,
                   std::initializer_list<ContractionRole> holders) {
    for (ContractionRole role : holders)
      if (kept(role))
        return inLayoutOrder(types[role], group);
    return SmallVector<StringAttr>(group);
  };
  SmallVector<StringAttr> batch =
      order(dims.batch, {kResultRole, kLhsRole, kRhsRole});
  SmallVector<StringAttr> lhsFree =
      order(dims.lhsFree, {kResultRole, kLhsRole});
  SmallVector<StringAttr> rhsFree =
      order(dims.rhsFree, {kResultRole, kRhsRole});
  SmallVector<StringAttr> contracted =
      order(dims.contracted, {kLhsRole, kRhsRole});

  // The result keeps its free groups in the order they come in it.
  bool lhsFreeFirst = true;
  if (!dims.lhsFree.empty() && !dims.rhsFree.empty())
    lhsFreeFirst =
        *types[kResultRole].getDimPosition(dims.lhsFree.front().getValue()) <
        *types[kResultRole].getDimPosition(dims.rhsFree.front().getValue());
  // An operand is [batch, free, contracted], or [batch, contracted, free]
  // if its innermost dimension is free: the relayout then moves whole rows.
  auto operandLayout = [&](ContractionRole role, ArrayRef<StringAttr> free) {
    ArrayRef<StringAttr> names = types[role].getDimNames();
    if (!names.empty() && llvm::is_contained(free, names.back()))
      return concat({batch, contracted, free});
    return concat({batch, free, contracted});
  };
  return {operandLayout(kLhsRole, lhsFree), operandLayout(kRhsRole, rhsFree),
          lhsFreeFirst ? concat({batch, lhsFree, rhsFree})
                       : concat({batch, rhsFree, lhsFree})};
}

} // namespace

std::optional<RelayoutPlan>
mlir::sluice::planRelayouts(const Types &types, const ContractionDims &dims,
                            unsigned mask) {
  std::array<SmallVector<StringAttr>, 3> canonical =
      canonicalLayouts(types, dims, mask);
  RelayoutPlan plan;
  for (unsigned role = 0; role < 3; ++role) {
    plan.types[role] = types[role];
    if (!(mask & (1u << role)))
      continue;
    plan.types[role] = types[role].withLayout(canonical[role]);
    plan.relayout[role] = true;
    ++plan.count;
    plan.bytes += relayoutBytes(types[role]);
  }
  if (failed(mapContraction(plan.types[kLhsRole], plan.types[kRhsRole],
                            plan.types[kResultRole])))
    return std::nullopt;
  return plan;
}

bool mlir::sluice::isCheaperPlan(const RelayoutPlan &plan,
                                 const RelayoutPlan &other) {
  return plan.bytes < other.bytes ||
         (plan.bytes == other.bytes && plan.count < other.count);
}

std::optional<RelayoutPlan> mlir::sluice::cheapestRelayouts(
    const Types &types,
    llvm::function_ref<bool(ContractionRole, NamedTensorType)> alreadyMade) {
  ContractionDims dims =
      classifyContraction(types[kLhsRole], types[kRhsRole], types[kResultRole]);
  std::optional<RelayoutPlan> best;
  for (unsigned mask = 1; mask < 8; ++mask) {
    std::optional<RelayoutPlan> plan = planRelayouts(types, dims, mask);
    if (!plan)
      continue;
    for (ContractionRole role : {kLhsRole, kRhsRole}) {
      if (plan->relayout[role] && alreadyMade(role, plan->types[role])) {
        plan->bytes -= relayoutBytes(types[role]);
        --plan->count;
      }
    }
    if (!best || isCheaperPlan(*plan, *best))
      best = plan;
  }
  return best;
}
