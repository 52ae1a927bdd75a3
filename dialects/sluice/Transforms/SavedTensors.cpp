//===- SavedTensors.cpp - the tensors a forward saves for its backward ----===//

#include "SavedTensors.h"

#include "FusionPlan.h"

#include "dialects/sluice/Analysis/DataMovement.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::sluice;

std::optional<unsigned> SavedTensors::resultIndex(Value value) {
  ReturnOp ret = forward.getReturnOp();
  for (unsigned index = 0; index < ret.getNumOperands(); ++index)
    if (ret.getOperand(index) == value && forward.isSavedResult(index))
      return index;
  return std::nullopt;
}

SavedTensors::SavedTensors(GraphOp forward, GraphOp backward)
    : forward(forward), backward(backward) {
  // The first argument of a source wins, as the first result of a value.
  for (unsigned index = 0; index < backward.getNumArguments(); ++index)
    if (backward.isSavedArg(index))
      argumentOf.try_emplace(backward.getSavedArgSource(index),
                             backward.getArgument(index));
  ReturnOp ret = forward.getReturnOp();
  for (unsigned index = 0; index < ret.getNumOperands(); ++index)
    if (forward.isSavedResult(index))
      sourceOf.try_emplace(ret.getOperand(index),
                           forward.getSavedResultSource(index).str());
}

void SavedTensors::indexResult(Value value) {
  sourceOf.erase(value);
  if (std::optional<unsigned> result = resultIndex(value))
    sourceOf[value] = forward.getSavedResultSource(*result).str();
}

BlockArgument SavedTensors::lookup(Value value) {
  auto source = sourceOf.find(value);
  if (source == sourceOf.end())
    return nullptr;
  return argumentOf.lookup(source->second);
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
  for (unsigned suffix = 1; argumentOf.contains(source); ++suffix)
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
  BlockArgument arg = backward.getArgument(argPosition);
  argumentOf.try_emplace(source, arg);
  sourceOf.try_emplace(value, source);
  return arg;
}

LogicalResult SavedTensors::unsave(Value value) {
  std::optional<unsigned> result = resultIndex(value);
  if (!result)
    return failure();
  std::string source = forward.getSavedResultSource(*result).str();
  if (BlockArgument arg = argumentOf.lookup(source)) {
    if (!arg.use_empty())
      return failure();
    if (failed(backward.eraseArgument(arg.getArgNumber())))
      return failure();
    argumentOf.erase(source);
    // A later argument of the same source now comes first.
    for (unsigned index = 0; index < backward.getNumArguments(); ++index)
      if (backward.isSavedArg(index) &&
          backward.getSavedArgSource(index) == source) {
        argumentOf[source] = backward.getArgument(index);
        break;
      }
  }
  forward.getReturnOp()->eraseOperand(*result);
  LogicalResult erased = forward.eraseResult(*result);
  indexResult(value);
  return erased;
}

LogicalResult mlir::sluice::recordBaselines(ModuleOp module) {
  for (GraphOp graph : module.getOps<GraphOp>()) {
    if (graph->hasAttr(kBaselineBytesAttrName))
      continue;
    fusion::forwardBroadcasts(graph.getBody().front());
    FailureOr<uint64_t> bytes = graphBaselineBytes(graph);
    if (failed(bytes))
      return failure();
    graph->setAttr(kBaselineBytesAttrName,
                   IntegerAttr::get(IntegerType::get(module.getContext(), 64),
                                    static_cast<int64_t>(*bytes)));
  }
  return success();
}

std::optional<std::pair<GraphOp, GraphOp>>
mlir::sluice::forwardBackwardPair(ModuleOp module) {
  GraphOp forward, backward;
  for (GraphOp graph : module.getOps<GraphOp>()) {
    GraphOp &slot = graph.getPhase() == Phase::forward ? forward : backward;
    if (slot)
      return std::nullopt;
    slot = graph;
  }
  if (!forward || !backward)
    return std::nullopt;
  return std::make_pair(forward, backward);
}
