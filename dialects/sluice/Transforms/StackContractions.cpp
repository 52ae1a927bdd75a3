//===- StackContractions.cpp - one contraction over stacked weights -------===//
//
// Contractions that read the same tensor (through renames) against weights
// of one type, with the same contracted dims and the same result layout
// (Q, K and V: x against wq, wk, wv), become one contraction over the
// weights stacked along a new dim, and each former result a select of the
// stacked result. Autodiff then derives the stacked input and weight
// gradients (one GEMM each) by itself. The stack and the selects are built
// from maps and sum reductions (docs/Layout.md, "Stacked Q/K/V
// contractions").
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/SluiceBuilders.h"
#include "dialects/sluice/SluiceDecompositions.h"
#include "dialects/sluice/SluiceDialect.h"
#include "dialects/sluice/SluicePasses.h"
#include "dialects/sluice/Transforms/Autodiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::sluice {
#define GEN_PASS_DEF_SLUICESTACKCONTRACTIONS
#include "dialects/sluice/SluicePasses.h.inc"
} // namespace mlir::sluice

using namespace mlir;
using namespace mlir::sluice;
using autodiff::getOpName;
using autodiff::setOpName;

namespace {
/// A contraction that may join a stack: its shared operand (renames looked
/// through) and its result type spelled in that operand's dim names.
struct Member {
  ContractOp op;
  NamedTensorType sharedResultType;
};

/// `type` with the dims `from` names renamed to `to`'s names at the same
/// positions (a rename is positional), the other dims unchanged; null if
/// two dims would then share a name.
NamedTensorType renameDims(NamedTensorType type, NamedTensorType from,
                           NamedTensorType to) {
  SmallVector<StringAttr> names(type.getDimNames());
  for (StringAttr &name : names)
    if (std::optional<unsigned> position = from.getDimPosition(name))
      name = to.getDimNames()[*position];
  llvm::StringSet<> distinct;
  for (StringAttr name : names)
    if (!distinct.insert(name.getValue()).second)
      return {};
  return NamedTensorType::get(names, type.getSizes(), type.getElementType());
}

/// A dim name that none of `types` uses: "s", else "s1", "s2", ...
std::string freshDimName(ArrayRef<NamedTensorType> types) {
  auto used = [&](StringRef name) {
    return llvm::any_of(
        types, [&](NamedTensorType type) { return type.hasDim(name); });
  };
  std::string name = "s";
  for (unsigned suffix = 1; used(name); ++suffix)
    name = "s" + std::to_string(suffix);
  return name;
}

/// `type` with dim `name` of `size` inserted at `position`.
NamedTensorType insertDim(NamedTensorType type, unsigned position,
                          StringAttr name, int64_t size) {
  SmallVector<StringAttr> names(type.getDimNames());
  SmallVector<int64_t> sizes(type.getSizes());
  names.insert(names.begin() + position, name);
  sizes.insert(sizes.begin() + position, size);
  return NamedTensorType::get(names, sizes, type.getElementType());
}

/// (index == `which`) as an i1 in a map body.
Value indexIs(OpBuilder &b, Location loc, Value index, int64_t which) {
  Value constant = arith::ConstantIndexOp::create(b, loc, which);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, index,
                               constant);
}

/// The `bias_add` that is the only user of `op`'s result, with a graph
/// argument as its bias; null otherwise.
BiasAddOp biasOf(ContractOp op, Block &body) {
  if (!op.getResult().hasOneUse())
    return {};
  auto bias = llvm::dyn_cast<BiasAddOp>(*op.getResult().getUsers().begin());
  if (!bias || bias.getInput() != op.getResult())
    return {};
  auto argument = llvm::dyn_cast<BlockArgument>(bias.getBias());
  if (!argument || argument.getOwner() != &body)
    return {};
  return bias;
}

/// `tensors` (graph arguments of one type) stacked along a new outermost
/// dim `dim`: `s == 0 ? t0 : s == 1 ? t1 : ...`.
Value buildStack(OpBuilder &builder, Location loc, ValueRange tensors,
                 StringAttr dim, FloatType computeType) {
  int64_t count = tensors.size();
  return buildMap(
      builder, loc, insertDim(getTensorType(tensors.front()), 0, dim, count),
      tensors, computeType,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value index = args.back();
        Value chosen = args[count - 1];
        for (int64_t which = count - 2; which >= 0; --which)
          chosen = arith::SelectOp::create(
              b, loc, indexIs(b, loc, index, which), args[which], chosen);
        return chosen;
      },
      {dim.getValue()});
}

/// Rewrites one group of at least two members sharing operand `shared`.
void stackGroup(Value shared, ArrayRef<Member> members, FloatType computeType) {
  ContractOp first = members.front().op;
  OpBuilder builder(first);
  Location loc = first.getLoc();
  NamedTensorType weightType = first.getRhs().getType();
  NamedTensorType resultType = members.front().sharedResultType;
  int64_t count = members.size();
  // A name no tensor of the group uses, in any of its members' names.
  SmallVector<NamedTensorType> types = {getTensorType(shared), weightType};
  for (Member member : members)
    types.append(
        {member.op.getLhs().getType(), member.op.getResult().getType()});
  std::string dimName = freshDimName(types);
  StringAttr dim = builder.getStringAttr(dimName);

  // The weights stacked along the new dim, outermost.
  SmallVector<Value> weights;
  SmallVector<std::string> names;
  for (Member member : members) {
    weights.push_back(member.op.getRhs());
    names.push_back(getOpName(member.op).str());
  }
  std::string groupName = llvm::join(names, "&");
  Value stacked = buildStack(builder, loc, weights, dim, computeType);
  setOpName(stacked, groupName + ".weights");

  // Biases are stacked too where every member's result is only biased by a
  // graph argument of one type, so that the stacked contraction keeps one
  // bias epilogue (and its gradient one bias gradient).
  Block &body = *first->getBlock();
  SmallVector<BiasAddOp> biasAdds;
  for (Member member : members)
    biasAdds.push_back(biasOf(member.op, body));
  bool stackBiases = llvm::all_of(biasAdds, [&](BiasAddOp add) {
    return add &&
           add.getBias().getType() == biasAdds.front().getBias().getType();
  });

  // The stacked result: the new dim just before the weights' free dims.
  unsigned position = 0;
  while (position < resultType.getRank() &&
         !weightType.hasDim(resultType.getDimNames()[position].getValue()))
    ++position;
  NamedTensorType stackedType = insertDim(resultType, position, dim, count);
  Value product = ContractOp::create(builder, loc, stackedType, shared, stacked,
                                     first.getScaleAttr());
  setOpName(product, groupName);
  if (stackBiases) {
    SmallVector<Value> biases;
    SmallVector<std::string> biasNames;
    for (BiasAddOp add : biasAdds) {
      biases.push_back(add.getBias());
      biasNames.push_back(getOpName(add).str());
    }
    std::string biasName = llvm::join(biasNames, "&");
    Value stackedBias = buildStack(builder, loc, biases, dim, computeType);
    setOpName(stackedBias, biasName + ".biases");
    product =
        BiasAddOp::create(builder, loc, stackedType, product, stackedBias);
    setOpName(product, biasName);
  }

  // Each member's result: its slice (a mask and a sum over the new dim) of
  // the stacked result renamed to the member's dim names first (a view), so
  // that the slice is the member's own tensor, not a rename of one (the
  // streaming rule's backward pairs the forward's saved operands). Each
  // member renames for itself: a streaming kernel that reads K and V as
  // slices keeps them as two inputs.
  NamedTensorType sharedType = getTensorType(shared);
  for (auto [which, member] : llvm::enumerate(members)) {
    ContractOp op = member.op;
    StringRef name = getOpName(op);
    NamedTensorType lhsType = op.getLhs().getType();
    Value source = product;
    if (lhsType != sharedType) {
      NamedTensorType renamed = renameDims(stackedType, sharedType, lhsType);
      source = RenameOp::create(builder, loc, renamed, product);
      setOpName(source, name + ".stacked");
    }
    Value masked = buildMap(
        builder, loc, getTensorType(source), {source}, computeType,
        [&](OpBuilder &b, Location loc, ValueRange args) {
          Value zero = buildConstant(b, loc, computeType, 0.0);
          return arith::SelectOp::create(
                     b, loc, indexIs(b, loc, args[1], which), args[0], zero)
              .getResult();
        },
        {dimName});
    setOpName(masked, name + ".mask");
    Value slice = buildReduce(builder, loc, ReduceKind::sum, masked, {dimName});
    setOpName(slice, name);
    // With stacked biases the slice is the biased result.
    if (stackBiases) {
      biasAdds[which].getResult().replaceAllUsesWith(slice);
      biasAdds[which].erase();
    } else {
      op.getResult().replaceAllUsesWith(slice);
    }
  }
  for (Member member : members) {
    Value lhs = member.op.getLhs();
    member.op.erase();
    // Renames of the shared operand that only the members read.
    while (auto rename = lhs.getDefiningOp<RenameOp>()) {
      if (!rename.getResult().use_empty())
        break;
      lhs = rename.getInput();
      rename.erase();
    }
  }
}

struct StackContractionsPass
    : mlir::sluice::impl::SluiceStackContractionsBase<StackContractionsPass> {
  using SluiceStackContractionsBase::SluiceStackContractionsBase;

  void runOnOperation() override {
    GraphOp graph = getOperation();
    Block &body = graph.getBody().front();
    // Candidates keyed by (shared operand, weight type, scale, result type
    // in the shared operand's names), in program order.
    using Key = std::tuple<Value, Type, Attribute, Type>;
    llvm::MapVector<Key, SmallVector<Member>> groups;
    for (Operation &op : body) {
      auto contract = llvm::dyn_cast<ContractOp>(op);
      if (!contract)
        continue;
      // The weight: an argument of the graph, not a computed tensor.
      auto weight = llvm::dyn_cast<BlockArgument>(contract.getRhs());
      if (!weight || weight.getOwner() != &body)
        continue;
      Value shared = resolveView(contract.getLhs());
      NamedTensorType lhsType = contract.getLhs().getType();
      NamedTensorType resultType = renameDims(contract.getResult().getType(),
                                              lhsType, getTensorType(shared));
      // The renamed result must still name every dim once.
      if (!resultType)
        continue;
      Key key{shared, weight.getType(), contract.getScaleAttr(), resultType};
      groups[key].push_back({contract, resultType});
    }
    FloatType computeType =
        getComputeFloatType(&getContext(), this->computeType);
    for (auto &[key, members] : groups) {
      // Each weight once: two contractions with one weight stay apart.
      llvm::SmallPtrSet<Value, 4> seen;
      SmallVector<Member> distinct;
      for (Member member : members)
        if (seen.insert(member.op.getRhs()).second)
          distinct.push_back(member);
      if (distinct.size() >= 2)
        stackGroup(std::get<0>(key), distinct, computeType);
    }
  }
};
} // namespace
