//===- LegalizeContractions.cpp - relayouts so contractions map to GEMMs --===//
//
// A contraction runs as one strided-batched GEMM only if each group of its
// dimensions (batch, free, contracted) is contiguous and in one order in
// every tensor holding it (sluice/Codegen/GemmMapping.h). Where that fails,
// this pass relayouts some of the three tensors. Which ones: every subset is
// tried, the tensors kept fix the groups' orders, the relayouted ones get a
// canonical layout ([batch, free, contracted] or [batch, contracted, free]
// for an operand, [batch, free, free] for the result); the cheapest subset
// that maps wins.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/SluicePasses.h"
#include "sluice/Codegen/GemmMapping.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::sluice {
#define GEN_PASS_DEF_SLUICELEGALIZECONTRACTIONS
#include "dialects/sluice/SluicePasses.h.inc"
} // namespace mlir::sluice

using namespace mlir;
using namespace mlir::sluice;

namespace {

enum Role : unsigned { kLhs = 0, kRhs = 1, kResult = 2 };
constexpr const char *kRoleSuffix[] = {".relayout_lhs", ".relayout_rhs",
                                       ".relayout_result"};

/// Operand relayouts already made in a graph, by input and type.
using RelayoutCache = llvm::DenseMap<std::pair<Value, Type>, Value>;

/// The bytes a relayout of `type` writes (and reads).
uint64_t relayoutBytes(NamedTensorType type) {
  // Callers checked that the element count fits in int64_t; the byte size
  // may still overflow, then it counts as more than any real tensor.
  return type.getNumBytes().value_or(UINT64_MAX / 4);
}

/// Which of lhs, rhs and result to relayout, and into what.
struct LayoutPlan {
  std::array<NamedTensorType, 3> types;
  std::array<bool, 3> relayout = {false, false, false};
  /// The bytes of the relayouted tensors (each is read once, written once).
  uint64_t bytes = 0;
  unsigned count = 0;
};

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

/// The plan that relayouts the tensors in `mask` (bit i: role i), or
/// std::nullopt if the contraction still does not map.
std::optional<LayoutPlan> planFor(const std::array<NamedTensorType, 3> &types,
                                  const ContractionDims &dims, unsigned mask) {
  auto kept = [&](Role role) { return !(mask & (1u << role)); };
  // A group's order is the one of the first kept tensor holding it (they must
  // agree, which the final mapping checks); if none is kept, the result's
  // order for batch and free dimensions and the lhs's for contracted ones
  // (the order classifyContraction lists them in).
  auto order = [&](ArrayRef<StringAttr> group,
                   std::initializer_list<Role> holders) {
    for (Role role : holders)
      if (kept(role))
        return inLayoutOrder(types[role], group);
    return SmallVector<StringAttr>(group);
  };
  SmallVector<StringAttr> batch = order(dims.batch, {kResult, kLhs, kRhs});
  SmallVector<StringAttr> lhsFree = order(dims.lhsFree, {kResult, kLhs});
  SmallVector<StringAttr> rhsFree = order(dims.rhsFree, {kResult, kRhs});
  SmallVector<StringAttr> contracted = order(dims.contracted, {kLhs, kRhs});

  // The result keeps its free groups in the order they come in it.
  bool lhsFreeFirst = true;
  if (!dims.lhsFree.empty() && !dims.rhsFree.empty())
    lhsFreeFirst =
        *types[kResult].getDimPosition(dims.lhsFree.front().getValue()) <
        *types[kResult].getDimPosition(dims.rhsFree.front().getValue());
  auto concat = [](std::initializer_list<ArrayRef<StringAttr>> parts) {
    SmallVector<StringAttr> all;
    for (ArrayRef<StringAttr> part : parts)
      all.append(part.begin(), part.end());
    return all;
  };
  // An operand is [batch, free, contracted], or [batch, contracted, free]
  // if its innermost dimension is free: the relayout then moves whole rows.
  auto operandLayout = [&](Role role, ArrayRef<StringAttr> free) {
    ArrayRef<StringAttr> names = types[role].getDimNames();
    if (!names.empty() && llvm::is_contained(free, names.back()))
      return concat({batch, contracted, free});
    return concat({batch, free, contracted});
  };
  std::array<SmallVector<StringAttr>, 3> canonical = {
      operandLayout(kLhs, lhsFree), operandLayout(kRhs, rhsFree),
      lhsFreeFirst ? concat({batch, lhsFree, rhsFree})
                   : concat({batch, rhsFree, lhsFree})};

  LayoutPlan plan;
  for (unsigned role = 0; role < 3; ++role) {
    plan.types[role] = types[role];
    if (kept(static_cast<Role>(role)))
      continue;
    plan.types[role] = types[role].withLayout(canonical[role]);
    plan.relayout[role] = true;
    ++plan.count;
    plan.bytes += relayoutBytes(types[role]);
  }
  if (failed(mapContraction(plan.types[kLhs], plan.types[kRhs],
                            plan.types[kResult])))
    return std::nullopt;
  return plan;
}

/// The cheapest plan: fewest new bytes, then fewest new relayouts, then the
/// lowest mask (lhs before rhs before result), so the choice is
/// deterministic. An operand relayout already in `cache` costs nothing.
std::optional<LayoutPlan> choosePlan(ContractOp contract,
                                     const RelayoutCache &cache) {
  std::array<NamedTensorType, 3> types = {
      llvm::cast<NamedTensorType>(contract.getLhs().getType()),
      llvm::cast<NamedTensorType>(contract.getRhs().getType()),
      llvm::cast<NamedTensorType>(contract.getResult().getType())};
  ContractionDims dims =
      classifyContraction(types[kLhs], types[kRhs], types[kResult]);
  std::optional<LayoutPlan> best;
  for (unsigned mask = 1; mask < 8; ++mask) {
    std::optional<LayoutPlan> plan = planFor(types, dims, mask);
    if (!plan)
      continue;
    for (Role role : {kLhs, kRhs}) {
      Value operand = contract->getOperand(role);
      if (plan->relayout[role] &&
          cache.contains({operand, plan->types[role]})) {
        plan->bytes -= relayoutBytes(types[role]);
        --plan->count;
      }
    }
    if (!best || plan->bytes < best->bytes ||
        (plan->bytes == best->bytes && plan->count < best->count))
      best = plan;
  }
  return best;
}

bool fitsGemmIndex(Type type) {
  std::optional<uint64_t> elements =
      llvm::cast<NamedTensorType>(type).getNumElements();
  return elements && *elements <= static_cast<uint64_t>(INT64_MAX);
}

struct LegalizeContractionsPass
    : mlir::sluice::impl::SluiceLegalizeContractionsBase<
          LegalizeContractionsPass> {
  using SluiceLegalizeContractionsBase::SluiceLegalizeContractionsBase;

  void runOnOperation() override {
    if (failed(legalizeGraph(getOperation())))
      return signalPassFailure();
  }

  LogicalResult legalizeGraph(GraphOp graph) {
    // Unnamed contractions are named in reports by their index among the
    // unnamed ones (lib/Analysis/DataMovement.cpp); their relayouts follow.
    SmallVector<std::pair<ContractOp, std::string>> contracts;
    unsigned unnamed = 0;
    graph.walk([&](ContractOp contract) {
      std::string name;
      if (auto attr = contract->getAttrOfType<StringAttr>(
              SluiceDialect::getOpNameAttrName()))
        name = attr.getValue().str();
      else
        name = "contract_" + std::to_string(unnamed++);
      if (contract->getParentOp() == graph.getOperation())
        contracts.emplace_back(contract, std::move(name));
    });
    // Operand relayouts made for earlier contractions of this graph, by
    // input and type: a later contraction reading the same tensor in the
    // same layout reuses them (they precede it in the graph's one block).
    RelayoutCache operandRelayouts;
    for (auto &[contract, name] : contracts)
      if (failed(legalize(contract, name, operandRelayouts)))
        return failure();
    return success();
  }

  LogicalResult legalize(ContractOp contract, StringRef name,
                         RelayoutCache &operandRelayouts) {
    if (succeeded(mapContraction(contract)))
      return success();
    // GEMM sizes, leading dimensions and strides are int64_t.
    for (auto [role, value] : llvm::enumerate(contract->getOperands()))
      if (!fitsGemmIndex(value.getType()))
        return contract.emitOpError()
               << (role == kLhs ? "lhs" : "rhs")
               << " has more elements than a GEMM can index (2^63 - 1)";
    if (!fitsGemmIndex(contract.getResult().getType()))
      return contract.emitOpError()
             << "result has more elements than a GEMM can index (2^63 - 1)";
    std::optional<LayoutPlan> plan = choosePlan(contract, operandRelayouts);
    if (!plan)
      return contract.emitOpError()
             << "has no strided-batched GEMM mapping even with its operands "
                "and result relayouted";

    OpBuilder builder(contract);
    Location loc = contract.getLoc();
    auto relayout = [&](Value input, NamedTensorType type, Role role) {
      auto op = RelayoutOp::create(builder, loc, type, input);
      op->setAttr(SluiceDialect::getOpNameAttrName(),
                  builder.getStringAttr(name + kRoleSuffix[role]));
      setOriginKind(op, OriginKind::layout);
      return op;
    };
    auto relayoutOperand = [&](OpOperand &operand, Role role) {
      Value &copy = operandRelayouts[{operand.get(), plan->types[role]}];
      if (!copy)
        copy = relayout(operand.get(), plan->types[role], role);
      operand.set(copy);
    };
    if (plan->relayout[kLhs])
      relayoutOperand(contract.getLhsMutable(), kLhs);
    if (plan->relayout[kRhs])
      relayoutOperand(contract.getRhsMutable(), kRhs);
    if (plan->relayout[kResult]) {
      Value result = contract.getResult();
      auto originalType = llvm::cast<NamedTensorType>(result.getType());
      result.setType(plan->types[kResult]);
      builder.setInsertionPointAfter(contract);
      RelayoutOp back = relayout(result, originalType, kResult);
      result.replaceAllUsesExcept(back.getResult(), back);
    }
    if (failed(mapContraction(contract)))
      return contract.emitOpError()
             << "still has no strided-batched GEMM mapping after its "
                "relayouts were inserted";
    return success();
  }
};

} // namespace
