//===- StreamingGradientStack.cpp - dQ, dK, dV written into their stack ---===//
//
// With stacked projections (--sluice-stack-contractions), the backward
// stacks the streaming kernel's dQ, dK and dV into one gradient
// (--sluice-stack-slice-gradients), which the fusion puts in a kernel of
// its own: a copy of 3 x |dQ| bytes. After outlining, this rewrite moves
// that stack into the streaming kernel, which then writes dQ, dK and dV
// through the stack's strides (docs/Layout.md, "Stacked Q/K/V
// contractions"). The stack's renames (K and V name the sequence `k`) go
// into the streaming kernel's body with it: a kernel body may hold renames,
// and the streaming lowering reads the body only to find its operands.
//
//===----------------------------------------------------------------------===//

#include "FusionPlan.h"

#include "dialects/sluice/Analysis/GemmMapping.h"
#include "dialects/sluice/SluiceBuilders.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::sluice;

namespace {
/// What one rewrite needs, found before anything changes.
struct GradientStack {
  KernelOp streaming, reader;
  /// Per result of the streaming kernel: the rename it goes through (or
  /// null) and the reader's operand it arrives at.
  SmallVector<RenameOp> renames;
  SmallVector<unsigned> operands;
  MapOp stack;
  /// The stack index of each result.
  SmallVector<int64_t> slots;
};

/// The stack of `streaming`'s three results, if each is read once, through
/// at most one rename, by one map of one fused kernel that stacks exactly
/// them along a dim of their number.
std::optional<GradientStack> findStack(KernelOp streaming) {
  GradientStack found;
  found.streaming = streaming;
  for (Value result : streaming.getResults()) {
    if (!result.hasOneUse())
      return std::nullopt;
    OpOperand *use = &*result.use_begin();
    auto rename = llvm::dyn_cast<RenameOp>(use->getOwner());
    if (rename) {
      if (!rename.getResult().hasOneUse())
        return std::nullopt;
      use = &*rename.getResult().use_begin();
    }
    auto reader = llvm::dyn_cast<KernelOp>(use->getOwner());
    if (!reader || reader.getKind() != KernelKind::fused ||
        !reader.getPacked().empty() || (found.reader && reader != found.reader))
      return std::nullopt;
    found.reader = reader;
    found.renames.push_back(rename);
    found.operands.push_back(use->getOperandNumber());
  }
  for (unsigned operand : found.operands) {
    BlockArgument argument = found.reader.getBlock().getArgument(operand);
    if (!argument.hasOneUse())
      return std::nullopt;
    auto map = llvm::dyn_cast<MapOp>(*argument.getUsers().begin());
    if (!map || (found.stack && map != found.stack))
      return std::nullopt;
    found.stack = map;
  }
  std::optional<SmallVector<int64_t>> indices = stackIndices(found.stack);
  NamedTensorType type = getTensorType(found.stack.getResult());
  StringRef dim =
      llvm::cast<StringAttr>(found.stack.getIndexDims()[0]).getValue();
  if (!indices || found.stack.getInputs().size() != found.operands.size() ||
      type.getDimSize(dim) != int64_t(found.operands.size()))
    return std::nullopt;
  for (unsigned operand : found.operands) {
    BlockArgument argument = found.reader.getBlock().getArgument(operand);
    unsigned position = llvm::find(found.stack.getInputs(), argument) -
                        found.stack.getInputs().begin();
    found.slots.push_back((*indices)[position]);
  }
  return found;
}

/// The names of `kernel`'s members without the one at `skip`.
ArrayAttr membersWithout(KernelOp kernel, Operation *skip) {
  SmallVector<Attribute> names;
  unsigned index = 0;
  for (Operation &op : kernel.getBlock().without_terminator()) {
    if (&op != skip && index < kernel.getMembers().size())
      names.push_back(kernel.getMembers()[index]);
    ++index;
  }
  return ArrayAttr::get(kernel.getContext(), names);
}

/// A kernel placed before `before`, with `like`'s attributes, results of
/// `types` and inputs `inputs`, and an empty body of one argument per
/// input; argument i stands for `sources[i]` (a value of another body) in
/// `mapping`. Returns it and a builder at the end of its body.
std::pair<KernelOp, OpBuilder> kernelLike(Operation *before, KernelOp like,
                                          TypeRange types, ValueRange inputs,
                                          ArrayRef<Value> sources,
                                          IRMapping &mapping) {
  OpBuilder builder(before);
  auto kernel = KernelOp::create(builder, like.getLoc(), types, inputs);
  kernel->setAttrs(like->getAttrs());
  Block *body = new Block();
  kernel.getBody().push_back(body);
  for (auto [input, source] : llvm::zip_equal(inputs, sources))
    mapping.map(source, body->addArgument(input.getType(), source.getLoc()));
  return {kernel, OpBuilder::atBlockEnd(body)};
}

/// Rewrites one stack: the streaming kernel yields the stack; the reader
/// reads it (or goes, when the stack was all it computed). Returns the
/// streaming kernel and the reader that is left (or null).
std::pair<KernelOp, KernelOp> absorb(GradientStack found) {
  KernelOp streaming = found.streaming, reader = found.reader;
  MLIRContext *context = streaming.getContext();
  Location loc = streaming.getLoc();

  // The streaming kernel, now yielding the stack.
  IRMapping inner;
  auto [stacked, bodyBuilder] = kernelLike(
      streaming, streaming, TypeRange{found.stack.getResult().getType()},
      streaming.getInputs(),
      SmallVector<Value>(streaming.getBlock().getArguments()), inner);
  SmallVector<Attribute> members(streaming.getMembers().begin(),
                                 streaming.getMembers().end());
  for (Operation &op : streaming.getBlock().without_terminator())
    bodyBuilder.clone(op, inner);
  IRMapping stackInputs;
  for (auto [index, yielded] :
       llvm::enumerate(streaming.getYield().getOperands())) {
    Value gradient = inner.lookup(yielded);
    if (RenameOp rename = found.renames[index]) {
      IRMapping source;
      source.map(rename.getInput(), gradient);
      gradient = bodyBuilder.clone(*rename, source)->getResult(0);
      members.push_back(StringAttr::get(context, fusion::reportName(rename)));
    }
    stackInputs.map(reader.getBlock().getArgument(found.operands[index]),
                    gradient);
  }
  Operation *stack = bodyBuilder.clone(*found.stack, stackInputs);
  members.push_back(StringAttr::get(context, fusion::reportName(stack)));
  KernelYieldOp::create(bodyBuilder, loc, stack->getResult(0));
  stacked.setMembersAttr(ArrayAttr::get(context, members));
  stacked->setAttr(kStackedResultsAttrName,
                   DenseI64ArrayAttr::get(context, found.slots));

  // The reader without the stack: it reads the stacked gradient instead of
  // dQ, dK and dV, and its results that were the stack are the streaming
  // kernel's.
  Block &readerBody = reader.getBlock();
  SmallVector<Value> inputs, sources;
  for (auto [index, input] : llvm::enumerate(reader.getInputs()))
    if (!llvm::is_contained(found.operands, index)) {
      inputs.push_back(input);
      sources.push_back(readerBody.getArgument(index));
    }
  Value stackValue = found.stack.getResult();
  if (llvm::any_of(stackValue.getUsers(), [&](Operation *user) {
        return !llvm::isa<KernelYieldOp>(user);
      })) {
    inputs.push_back(stacked.getResult(0));
    sources.push_back(stackValue);
  }
  SmallVector<Value> kept;
  SmallVector<unsigned> keptResults;
  for (auto [index, yielded] :
       llvm::enumerate(reader.getYield().getOperands())) {
    if (yielded == stackValue) {
      reader.getResult(index).replaceAllUsesWith(stacked.getResult(0));
    } else {
      kept.push_back(yielded);
      keptResults.push_back(index);
    }
  }
  KernelOp left;
  if (!kept.empty()) {
    IRMapping mapping;
    auto [rebuilt, inside] = kernelLike(
        reader, reader, ValueRange(kept).getTypes(), inputs, sources, mapping);
    rebuilt.setMembersAttr(membersWithout(reader, found.stack));
    for (Operation &op : readerBody.without_terminator())
      if (&op != found.stack)
        inside.clone(op, mapping);
    SmallVector<Value> yielded;
    for (Value value : kept)
      yielded.push_back(mapping.lookup(value));
    KernelYieldOp::create(inside, reader.getLoc(), yielded);
    for (auto [position, index] : llvm::enumerate(keptResults))
      reader.getResult(index).replaceAllUsesWith(rebuilt.getResult(position));
    left = rebuilt;
  }
  reader.erase();
  for (RenameOp rename : found.renames)
    if (rename)
      rename.erase();
  streaming.erase();
  return {stacked, left};
}

/// Where what is left of the reader only sums the stacked gradient over
/// some dims (the stacked bias gradient) and a GEMM kernel without an
/// epilogue contracts the stacked gradient over exactly those dims (the
/// stacked weight gradient), the sum becomes that GEMM's bias-gradient
/// epilogue (cuBLASLt's BGRADA / BGRADB; a generated kernel after the GEMM
/// on the C++ target), as the fusion planner folds the separate
/// projections' bias gradients: the stacked gradient is read once.
void foldBiasGradient(KernelOp streaming, KernelOp reader) {
  Value gradient = streaming.getResult(0);
  Block &readerBody = reader.getBlock();
  if (reader.getNumResults() != 1 || readerBody.getOperations().size() != 2 ||
      reader.getInputs().size() != 1 || reader.getInputs()[0] != gradient)
    return;
  auto sum = llvm::dyn_cast<ReduceOp>(readerBody.front());
  if (!sum || sum.getKind() != ReduceKind::sum ||
      sum.getInput() != readerBody.getArgument(0))
    return;
  for (Operation *user : gradient.getUsers()) {
    auto gemm = llvm::dyn_cast<KernelOp>(user);
    if (!gemm || gemm.getKind() != KernelKind::gemm || gemm.getEpilogue() ||
        gemm.getNumResults() != 1 || !gemm.getContraction() ||
        !gemm.getPacked().empty())
      continue;
    // The GEMM moves up to the reader, so its inputs must be there.
    if (llvm::any_of(gemm.getInputs(), [&](Value input) {
          Operation *producer = input.getDefiningOp();
          return producer && !producer->isBeforeInBlock(reader);
        }))
      continue;
    unsigned operand =
        llvm::find(gemm.getInputs(), gradient) - gemm.getInputs().begin();
    SmallVector<Type> types = {sum.getResult().getType()};
    llvm::append_range(types, gemm.getResultTypes());
    IRMapping mapping;
    auto [folded, inside] =
        kernelLike(reader, gemm, types, gemm.getInputs(),
                   SmallVector<Value>(gemm.getBlock().getArguments()), mapping);
    mapping.map(readerBody.getArgument(0),
                folded.getBlock().getArgument(operand));
    auto foldedSum = llvm::cast<ReduceOp>(inside.clone(*sum, mapping));
    for (Operation &op : gemm.getBlock().without_terminator())
      inside.clone(op, mapping);
    SmallVector<Value> yielded = {foldedSum.getResult()};
    for (Value value : gemm.getYield().getOperands())
      yielded.push_back(mapping.lookup(value));
    KernelYieldOp::create(inside, gemm.getLoc(), yielded);
    FailureOr<GemmMapping> gemmMapping =
        mapContraction(folded.getContraction());
    std::optional<bool> isA = succeeded(gemmMapping)
                                  ? bgradOperandIsA(*gemmMapping, foldedSum)
                                  : std::nullopt;
    if (!isA) {
      folded.erase();
      continue;
    }
    folded.setEpilogue(*isA ? Epilogue::bgrada : Epilogue::bgradb);
    SmallVector<Attribute> members = {reader.getMembers()[0]};
    llvm::append_range(members, gemm.getMembers());
    folded.setMembersAttr(ArrayAttr::get(gemm.getContext(), members));
    reader.getResult(0).replaceAllUsesWith(folded.getResult(0));
    for (auto [index, result] : llvm::enumerate(gemm.getResults()))
      result.replaceAllUsesWith(folded.getResult(index + 1));
    reader.erase();
    gemm.erase();
    return;
  }
}
} // namespace

void mlir::sluice::fusion::absorbGradientStacks(GraphOp graph,
                                                bool foldEpilogues) {
  Block &body = graph.getBody().front();
  SmallVector<GradientStack> found;
  llvm::SmallPtrSet<Operation *, 4> readers;
  for (KernelOp kernel : body.getOps<KernelOp>()) {
    StreamingAttr info = kernel.getStreamingAttr();
    if (kernel.getKind() != KernelKind::streaming || !info ||
        info.getDirection() != Phase::backward || kernel.getNumResults() != 3)
      continue;
    if (std::optional<GradientStack> stack = findStack(kernel);
        stack && readers.insert(stack->reader).second)
      found.push_back(*stack);
  }
  if (found.empty())
    return;
  for (GradientStack &stack : found) {
    auto [streaming, reader] = absorb(stack);
    if (reader && foldEpilogues)
      foldBiasGradient(streaming, reader);
  }
  // Number the kernels k0, k1, ... again (a reader may have gone).
  unsigned number = 0;
  for (KernelOp kernel : body.getOps<KernelOp>())
    kernel->setAttr(SluiceDialect::getOpNameAttrName(),
                    StringAttr::get(graph.getContext(), "k" + Twine(number++)));
}
