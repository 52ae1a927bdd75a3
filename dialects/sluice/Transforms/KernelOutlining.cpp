//===- KernelOutlining.cpp - planned groups as sluice.kernel ops ----------===//
//
// The rewriting half of --sluice-fuse: each group of a FusionPlan becomes one
// sluice.kernel holding clones of its members (and of the masks it
// regenerates), emitted at the end of the body in the plan's order; renames
// follow as soon as their source exists; then the original ops are erased.
//
//===----------------------------------------------------------------------===//

#include "FusionPlan.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <set>

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::fusion;

std::string mlir::sluice::fusion::reportName(Operation *op) {
  if (auto name =
          op->getAttrOfType<StringAttr>(SluiceDialect::getOpNameAttrName()))
    return name.getValue().str();
  std::string mnemonic = op->getName().stripDialect().str();
  if (auto origin =
          op->getAttrOfType<StringAttr>(SluiceDialect::getOriginAttrName()))
    return origin.getValue().str() + "." + mnemonic;
  return mnemonic;
}

namespace {

/// Clones the renames of the original body into the new program as soon as
/// their source has a value there, in body order (a rename of a rename comes
/// after its source, so one pass over the ready ones emits chains whole).
class RenameMover {
public:
  RenameMover(Block &body, OpBuilder &builder, IRMapping &outside)
      : builder(builder), outside(outside) {
    for (Operation &op : body.without_terminator())
      if (auto rename = llvm::dyn_cast<RenameOp>(op)) {
        waiting[rename.getInput()].push_back(renames.size());
        renames.push_back(rename);
      }
  }

  /// Emits the renames whose source just got a value (`mapped`, or a
  /// block argument) and those of their results.
  void emitReady(ValueRange mapped) {
    for (Value value : mapped)
      release(value);
    while (!ready.empty()) {
      unsigned index = *ready.begin();
      ready.erase(ready.begin());
      RenameOp rename = renames[index];
      Operation *clone = builder.clone(*rename, outside);
      outside.map(rename.getResult(), clone->getResult(0));
      ++emitted;
      release(rename.getResult());
    }
  }

  bool allEmitted() const { return emitted == renames.size(); }

private:
  void release(Value source) {
    auto it = waiting.find(source);
    if (it == waiting.end())
      return;
    ready.insert(it->second.begin(), it->second.end());
    waiting.erase(it);
  }

  OpBuilder &builder;
  IRMapping &outside;
  SmallVector<RenameOp> renames;
  /// Renames by source, until the source has a value; then by body order.
  llvm::DenseMap<Value, SmallVector<unsigned>> waiting;
  std::set<unsigned> ready;
  size_t emitted = 0;
};

/// Puts a streaming kernel's inputs and outputs in their fixed order
/// (docs/Fusion.md); they must be the planned ones.
LogicalResult orderStreamingBoundary(GraphOp graph,
                                     const streaming::StreamingGroup &planned,
                                     llvm::SetVector<Value> &inputs,
                                     SmallVector<Value> &outputs) {
  llvm::SetVector<Value> plannedInputs(planned.inputs.begin(),
                                       planned.inputs.end());
  llvm::SetVector<Value> plannedOutputs(planned.outputs.begin(),
                                        planned.outputs.end());
  if (plannedInputs.size() != inputs.size() ||
      !llvm::all_of(inputs,
                    [&](Value v) { return plannedInputs.contains(v); }) ||
      plannedOutputs.size() != outputs.size() ||
      !llvm::all_of(outputs,
                    [&](Value v) { return plannedOutputs.contains(v); }))
    return graph.emitOpError() << "--sluice-fuse: a streaming kernel's "
                                  "boundary is not the planned one (a bug "
                                  "in the pass)";
  inputs = std::move(plannedInputs);
  outputs.assign(planned.outputs.begin(), planned.outputs.end());
  return success();
}

/// Builds the kernel of group `g` before the builder's insertion point,
/// reading its inputs through `outside` and mapping its `outputs` (values
/// of the original body) there.
LogicalResult outlineGroup(GraphOp graph, const FusionPlan &plan, unsigned g,
                           unsigned kernelNumber, OpBuilder &builder,
                           IRMapping &outside, SmallVector<Value> &outputs) {
  MLIRContext *context = graph.getContext();
  const Group &group = plan.groups[g];
  SmallVector<Operation *> members;
  for (unsigned index : plan.regenerated.lookup(g))
    members.push_back(plan.ops[index]);
  for (unsigned index : group.members)
    members.push_back(plan.ops[index]);
  llvm::SmallDenseSet<Operation *, 16> inside(members.begin(), members.end());
  // Inputs: values read from outside (each once); outputs: values used
  // outside or returned.
  llvm::SetVector<Value> inputs;
  for (Operation *op : members)
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || !inside.contains(producer))
        inputs.insert(operand);
    }
  for (Operation *op : members)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !inside.contains(user);
          }))
        outputs.push_back(result);

  if (group.streaming &&
      failed(orderStreamingBoundary(graph, plan.streaming.at(g), inputs,
                                    outputs)))
    return failure();

  SmallVector<Value> kernelInputs;
  for (Value input : inputs) {
    Value mapped = outside.lookupOrNull(input);
    if (!mapped)
      return graph.emitOpError()
             << "--sluice-fuse: a kernel input is not available (a bug in "
                "the pass)";
    kernelInputs.push_back(mapped);
  }
  auto kernel = KernelOp::create(builder, graph.getLoc(),
                                 ValueRange(outputs).getTypes(), kernelInputs);
  Block *kernelBody = new Block();
  kernel.getBody().push_back(kernelBody);
  IRMapping inner;
  for (Value input : inputs)
    inner.map(input, kernelBody->addArgument(input.getType(), input.getLoc()));
  OpBuilder bodyBuilder = OpBuilder::atBlockEnd(kernelBody);
  SmallVector<Attribute> memberNames;
  for (Operation *op : members) {
    bodyBuilder.clone(*op, inner);
    memberNames.push_back(StringAttr::get(context, reportName(op)));
  }
  SmallVector<Value> yielded;
  for (Value output : outputs)
    yielded.push_back(inner.lookup(output));
  KernelYieldOp::create(bodyBuilder, graph.getLoc(), yielded);

  kernel.setKind(group.library     ? KernelKind::gemm
                 : group.streaming ? KernelKind::streaming
                                   : KernelKind::fused);
  if (group.streaming)
    kernel.setStreamingAttr(plan.streaming.at(g).attr);
  kernel.setMembersAttr(ArrayAttr::get(context, memberNames));
  if (group.library && group.epilogue)
    kernel.setEpilogue(*group.epilogue);
  if (llvm::is_contained(plan.packedGroups, static_cast<int64_t>(g))) {
    SmallVector<int64_t> packed;
    for (auto [index, output] : llvm::enumerate(outputs))
      if (llvm::isa_and_nonnull<RandomMaskOp>(output.getDefiningOp()))
        packed.push_back(index);
    kernel.setPacked(packed);
  }
  kernel->setAttr(SluiceDialect::getOpNameAttrName(),
                  StringAttr::get(context, "k" + Twine(kernelNumber)));
  for (auto [output, result] : llvm::zip(outputs, kernel.getResults()))
    outside.map(output, result);
  return success();
}
} // namespace

LogicalResult mlir::sluice::fusion::outlineKernels(GraphOp graph,
                                                   const FusionPlan &plan) {
  Block &body = graph.getBody().front();
  // Emit the kernels at the end of the body, then erase the originals.
  SmallVector<Operation *> original;
  for (Operation &op : body.without_terminator())
    original.push_back(&op);
  Operation *terminator = body.getTerminator();
  OpBuilder builder(terminator);
  IRMapping outside; // original value -> value in the new program
  for (BlockArgument arg : body.getArguments())
    outside.map(arg, arg);
  RenameMover renames(body, builder, outside);
  renames.emitReady(body.getArguments());
  unsigned kernelNumber = 0;
  for (unsigned g : plan.order) {
    SmallVector<Value> outputs;
    if (failed(outlineGroup(graph, plan, g, kernelNumber++, builder, outside,
                            outputs)))
      return failure();
    renames.emitReady(outputs);
  }

  // Point the terminator at the new values and drop the old program.
  for (OpOperand &operand : terminator->getOpOperands()) {
    Value mapped = outside.lookupOrNull(operand.get());
    if (!mapped)
      return graph.emitOpError()
             << "--sluice-fuse: a result is not available (a bug in the pass)";
    operand.set(mapped);
  }
  if (!renames.allEmitted())
    return graph.emitOpError()
           << "--sluice-fuse: a rename's source is not available (a bug in "
              "the pass)";
  for (Operation *op : llvm::reverse(original)) {
    op->dropAllUses();
    op->erase();
  }
  return success();
}
