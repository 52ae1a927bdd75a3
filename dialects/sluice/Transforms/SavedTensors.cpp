//===- SavedTensors.cpp - the tensors a forward saves for its backward ----===//

#include "SavedTensors.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::sluice;

std::optional<unsigned> SavedTensors::resultIndex(Value value) {
  ReturnOp ret = forward.getReturnOp();
  for (unsigned index = 0; index < ret.getNumOperands(); ++index)
    if (ret.getOperand(index) == value && forward.isSavedResult(index))
      return index;
  return std::nullopt;
}

std::optional<unsigned> SavedTensors::argumentIndex(StringRef source) {
  for (unsigned index = 0; index < backward.getNumArguments(); ++index)
    if (backward.isSavedArg(index) &&
        backward.getSavedArgSource(index) == source)
      return index;
  return std::nullopt;
}

BlockArgument SavedTensors::lookup(Value value) {
  std::optional<unsigned> result = resultIndex(value);
  if (!result)
    return nullptr;
  std::optional<unsigned> arg =
      argumentIndex(forward.getSavedResultSource(*result));
  return arg ? backward.getArgument(*arg) : nullptr;
}

BlockArgument SavedTensors::lookupView(Value value) {
  if (BlockArgument arg = lookup(value))
    return arg;
  for (Operation *user : value.getUsers())
    if (llvm::isa<RelayoutOp, RenameOp>(user))
      if (BlockArgument arg = lookupView(user->getResult(0)))
        return arg;
  return nullptr;
}

BlockArgument SavedTensors::save(Value value, StringRef name) {
  if (BlockArgument arg = lookup(value))
    return arg;
  MLIRContext *context = forward.getContext();
  std::string source = name.str();
  for (unsigned suffix = 1; argumentIndex(source); ++suffix)
    source = (name + "." + Twine(suffix)).str();
  Builder builder(context);
  auto attrs = builder.getDictionaryAttr(
      {builder.getNamedAttr(SluiceDialect::getNameAttrName(),
                            builder.getStringAttr("saved." + source)),
       builder.getNamedAttr(SluiceDialect::getSavedAttrName(),
                            builder.getStringAttr(source))});
  ReturnOp ret = forward.getReturnOp();
  unsigned resultPosition = ret.getNumOperands();
  (void)forward.insertResult(resultPosition, value.getType(), attrs);
  ret->insertOperands(resultPosition, value);
  // Saved arguments come first, then the cotangents.
  unsigned argPosition = 0;
  while (argPosition < backward.getNumArguments() &&
         backward.isSavedArg(argPosition))
    ++argPosition;
  (void)backward.insertArgument(argPosition, value.getType(), attrs,
                                value.getLoc());
  return backward.getArgument(argPosition);
}

LogicalResult SavedTensors::unsave(Value value) {
  std::optional<unsigned> result = resultIndex(value);
  if (!result)
    return failure();
  std::optional<unsigned> arg =
      argumentIndex(forward.getSavedResultSource(*result));
  if (arg) {
    if (!backward.getArgument(*arg).use_empty())
      return failure();
    if (failed(backward.eraseArgument(*arg)))
      return failure();
  }
  forward.getReturnOp()->eraseOperand(*result);
  return forward.eraseResult(*result);
}
