//===- LegalizeContractions.cpp - relayouts so contractions map to GEMMs --===//
//
// A contraction runs as one strided-batched GEMM only if each group of its
// dimensions (batch, free, contracted) is contiguous and in one order in
// every tensor holding it (dialects/sluice/Analysis/GemmMapping.h). Where that
// fails, this pass relayouts some of the three tensors, the cheapest subset
// that maps (dialects/sluice/Analysis/RelayoutPlan.h). With `streaming`, the
// contractions a streaming kernel will take keep their layouts: the kernel
// reads through strides.
//
//===----------------------------------------------------------------------===//

#include "StreamingChain.h"

#include "dialects/sluice/Analysis/RelayoutPlan.h"
#include "dialects/sluice/Analysis/StreamedContractions.h"
#include "dialects/sluice/SluicePasses.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir::sluice {
#define GEN_PASS_DEF_SLUICELEGALIZECONTRACTIONS
#include "dialects/sluice/SluicePasses.h.inc"
} // namespace mlir::sluice

using namespace mlir;
using namespace mlir::sluice;

namespace {

using Role = ContractionRole;
constexpr Role kLhs = kLhsRole, kRhs = kRhsRole, kResult = kResultRole;
constexpr const char *kRoleSuffix[] = {".relayout_lhs", ".relayout_rhs",
                                       ".relayout_result"};

/// Operand relayouts already made in a graph, by input and type.
using RelayoutCache = llvm::DenseMap<std::pair<Value, Type>, Value>;

/// The cheapest plan for `contract`; an operand relayout already in `cache`
/// costs nothing.
std::optional<RelayoutPlan> choosePlan(ContractOp contract,
                                       const RelayoutCache &cache) {
  std::array<NamedTensorType, 3> types = {
      llvm::cast<NamedTensorType>(contract.getLhs().getType()),
      llvm::cast<NamedTensorType>(contract.getRhs().getType()),
      llvm::cast<NamedTensorType>(contract.getResult().getType())};
  return cheapestRelayouts(types, [&](Role role, NamedTensorType type) {
    return cache.contains({contract->getOperand(role), type});
  });
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
    // unnamed ones (dialects/sluice/Analysis/DataMovement.cpp); their relayouts
    // follow.
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
    llvm::SmallPtrSet<Operation *, 4> streamed;
    if (streaming)
      streamed = streamedContractions(graph.getBody().front());
    // Operand relayouts made for earlier contractions of this graph, by
    // input and type: a later contraction reading the same tensor in the
    // same layout reuses them (they precede it in the graph's one block).
    RelayoutCache operandRelayouts;
    for (auto &[contract, name] : contracts)
      if (!streamed.contains(contract) &&
          failed(legalize(contract, name, operandRelayouts)))
        return failure();
    return success();
  }

  /// The contractions a streaming kernel will take: predicted from the
  /// composites before the decomposition, the planner's groups after it.
  static llvm::SmallPtrSet<Operation *, 4> streamedContractions(Block &body) {
    llvm::SmallPtrSet<Operation *, 4> streamed =
        predictStreamedContractions(body);
    for (const streaming::StreamingGroup &group :
         streaming::findStreamingGroups(body))
      for (Operation *member : group.members)
        if (isa<ContractOp>(member))
          streamed.insert(member);
    return streamed;
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
    std::optional<RelayoutPlan> plan = choosePlan(contract, operandRelayouts);
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
