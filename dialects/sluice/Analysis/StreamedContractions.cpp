//===- StreamedContractions.cpp - contractions the streaming rule takes ---===//
//
// See StreamedContractions.h.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/Analysis/StreamedContractions.h"

using namespace mlir;
using namespace mlir::sluice;

namespace {

NamedTensorType tensorOf(Value value) {
  return llvm::cast<NamedTensorType>(value.getType());
}

bool hasDim(Value value, StringRef name) {
  return tensorOf(value).hasDim(name);
}

/// The only user of `value`, or null.
Operation *onlyUser(Value value) {
  return value.hasOneUse() ? *value.getUsers().begin() : nullptr;
}

/// The elements `value` spans over its dims that `other` lacks (1 if none).
int64_t extentBeside(Value value, Value other) {
  int64_t extent = 1;
  NamedTensorType type = tensorOf(value);
  for (Attribute name : type.getDimNames()) {
    StringRef dim = llvm::cast<StringAttr>(name).getValue();
    if (!hasDim(other, dim))
      extent *= type.getDimSize(dim);
  }
  return extent;
}

/// The chain's second contraction if `scores` starts one.
ContractOp matchChain(ContractOp scores) {
  Value t = scores.getResult();
  Operation *user = onlyUser(t);
  while (auto mask = llvm::dyn_cast_or_null<CausalMaskOp>(user)) {
    t = mask.getResult();
    user = onlyUser(t);
  }
  auto softmax = llvm::dyn_cast_or_null<SoftmaxOp>(user);
  if (!softmax)
    return {};
  StringRef cols = softmax.getDim();
  Value q = scores.getLhs(), k = scores.getRhs(), s = scores.getResult();
  // cols comes from k alone (either operand may be k).
  if (hasDim(q, cols) && !hasDim(k, cols))
    std::swap(q, k);
  if (!hasDim(k, cols) || hasDim(q, cols))
    return {};
  Value p = softmax.getResult();
  user = onlyUser(p);
  if (auto dropout = llvm::dyn_cast_or_null<DropoutOp>(user)) {
    p = dropout.getResult();
    user = onlyUser(p);
  }
  auto output = llvm::dyn_cast_or_null<ContractOp>(user);
  if (!output || hasDim(output.getResult(), cols))
    return {};
  Value v = output.getLhs() == p ? output.getRhs() : output.getLhs();
  if (!hasDim(v, cols))
    return {};
  int64_t batchDims = static_cast<int64_t>(tensorOf(s).getRank()) - 2;
  if (batchDims > streaming::kMaxBatchDims ||
      extentBeside(q, s) > streaming::kMaxHeadDim ||
      extentBeside(v, s) > streaming::kMaxHeadDim)
    return {};
  return output;
}

} // namespace

llvm::SmallPtrSet<Operation *, 4>
mlir::sluice::predictStreamedContractions(Block &body) {
  llvm::SmallPtrSet<Operation *, 4> streamed;
  for (ContractOp scores : body.getOps<ContractOp>())
    if (ContractOp output = matchChain(scores)) {
      streamed.insert(scores);
      streamed.insert(output);
    }
  return streamed;
}
