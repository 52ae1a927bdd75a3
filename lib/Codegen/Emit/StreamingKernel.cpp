//===- StreamingKernel.cpp - streaming kernels as sluice_exec.attention ---===//
//
// A `kind = streaming` sluice.kernel (the fusion pass's streaming rule,
// docs/Fusion.md) runs as the runtime kernels of
// include/sluice/Runtime/sluice_stream*.h. This file decides everything
// their call needs and records it in one sluice_exec.attention: the dims
// (batch dims, query rows, keys, the contracted dim c, V's column dim e),
// every pointer's element strides by dim name, the dropout draw's counter
// strides, and the tiles of the target (sluice_stream_cuda_tiles_for on
// CUDA from the architecture compiled for, else the module's `sluice.target`;
// fixed tiles in C++).
//
//===----------------------------------------------------------------------===//

#include "ModuleEmitter.h"

#include "dialects/sluice/DropoutOrder.h"
#include "dialects/sluice/SluiceBuilders.h"
#include "dialects/sluice/Transforms/StreamingChain.h"

#include "sluice/Runtime/sluice_stream.h"

// The streaming rule fuses only what the runtime kernels take.
static_assert(mlir::sluice::streaming::kMaxBatchDims ==
              SLUICE_STREAM_MAX_BATCH);
static_assert(mlir::sluice::streaming::kMaxHeadDim ==
              SLUICE_STREAM_MAX_HEAD_DIM);

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::emit;

namespace {
/// The C++ kernels' tiles: query rows per task, keys per step.
constexpr int64_t kCppQueryRows = 64, kCppKeyTile = 64;

/// The dims of a streaming kernel.
struct StreamDims {
  /// The dims K and V share with Q, then the query-only ones (grouped- or
  /// multi-query attention: `group` of them, last), each in the layout
  /// order of the scores.
  SmallVector<StringRef> batch;
  int64_t group = 0;
  /// Their sizes.
  SmallVector<int64_t> batchSizes;
  StringRef rows, cols;
  /// The contracted dims of Q and K, in Q's order, and V's value dims, in
  /// V's order: one each, or several laid out as one (a rotary embedding
  /// splits the head in two).
  SmallVector<StringRef> c, e;
};

/// The row-major element stride of dim `name` in `type` (0 when the type
/// does not have it: the tensor is broadcast along it).
int64_t strideOf(NamedTensorType type, StringRef name) {
  std::optional<unsigned> position = type.getDimPosition(name);
  if (!position)
    return 0;
  int64_t stride = 1;
  for (unsigned i = *position + 1; i < type.getRank(); ++i)
    stride *= type.getSizes()[i];
  return stride;
}

/// The dims of `type` outside `known` and `excluded`, in its order.
SmallVector<StringRef>
otherDims(NamedTensorType type, ArrayRef<StringRef> known, StringRef excluded) {
  SmallVector<StringRef> found;
  for (StringAttr dim : type.getDimNames())
    if (dim.getValue() != excluded &&
        !llvm::is_contained(known, dim.getValue()))
      found.push_back(dim.getValue());
  return found;
}

/// The number of elements `type` spans over `dims`.
int64_t extentOf(NamedTensorType type, ArrayRef<StringRef> dims) {
  int64_t extent = 1;
  for (StringRef dim : dims)
    extent *= type.getDimSize(dim);
  return extent;
}

/// True if `dims` lie in `type` one after the other in this order, so that
/// they address memory as one dim (the stride of the last).
bool contiguous(NamedTensorType type, ArrayRef<StringRef> dims) {
  for (size_t i = 0; i + 1 < dims.size(); ++i)
    if (!type.hasDim(dims[i]) || !type.hasDim(dims[i + 1]) ||
        strideOf(type, dims[i]) !=
            strideOf(type, dims[i + 1]) * type.getDimSize(dims[i + 1]))
      return false;
  return true;
}

/// The dims of `kernel` from its scores (a contraction of its body whose
/// result has the rows and the cols: its other dims are the batch dims, the
/// ones K lacks last), Q (c is its one dim besides them) and V (e likewise).
FailureOr<StreamDims> streamDims(KernelOp kernel, StreamingAttr info,
                                 NamedTensorType q, NamedTensorType k,
                                 NamedTensorType v) {
  StreamDims dims;
  dims.rows = info.getRows();
  dims.cols = info.getCols();
  NamedTensorType scores;
  for (Operation &op : kernel.getBlock())
    if (auto contract = llvm::dyn_cast<ContractOp>(op)) {
      NamedTensorType type = contract.getResult().getType();
      if (!scores && type.hasDim(dims.rows) && type.hasDim(dims.cols))
        scores = type;
    }
  if (!scores)
    return kernel.emitOpError()
           << "is a streaming kernel without a contraction over ('" << dims.rows
           << "', '" << dims.cols << "') in its body";
  for (bool queryOnly : {false, true})
    for (auto [dim, size] :
         llvm::zip(scores.getDimNames(), scores.getSizes()))
      if (dim.getValue() != dims.rows && dim.getValue() != dims.cols &&
          k.hasDim(dim.getValue()) != queryOnly) {
        dims.batch.push_back(dim.getValue());
        dims.batchSizes.push_back(size);
        dims.group += queryOnly;
      }
  dims.c = otherDims(q, dims.batch, dims.rows);
  dims.e = otherDims(v, dims.batch, dims.cols);
  if (dims.c.empty() || dims.e.empty())
    return kernel.emitOpError()
           << "is a streaming kernel whose Q or V has no dim besides the "
              "batch dims and the rows / keys";
  if (dims.batch.size() > SLUICE_STREAM_MAX_BATCH)
    return kernel.emitOpError()
           << "is a streaming kernel with " << dims.batch.size()
           << " batch dims; the runtime kernels take at most "
           << SLUICE_STREAM_MAX_BATCH;
  return dims;
}

/// The element strides of (batch..., row, column) in `type`, the column
/// being `cols` laid out as one (contiguous() holds); a row-only tensor
/// (LSE, D) has no cols and column stride 0.
DenseI64ArrayAttr stridesOf(MLIRContext *context, NamedTensorType type,
                            const StreamDims &dims, StringRef row,
                            ArrayRef<StringRef> cols) {
  SmallVector<int64_t> strides;
  for (StringRef dim : dims.batch)
    strides.push_back(strideOf(type, dim));
  strides.push_back(strideOf(type, row));
  strides.push_back(cols.empty() ? 0 : strideOf(type, cols.back()));
  return DenseI64ArrayAttr::get(context, strides);
}

/// The dropout counter strides of (batch..., rows, cols): the element index
/// of the kernel's random_mask as the interpreter draws it
/// (dropoutElementStrides of its type). All 0 without dropout.
SmallVector<int64_t> counterStrides(KernelOp kernel, const StreamDims &dims) {
  SmallVector<int64_t> counter(dims.batch.size() + 2, 0);
  RandomMaskOp mask;
  for (Operation &op : kernel.getBlock())
    if (auto random = llvm::dyn_cast<RandomMaskOp>(op))
      mask = random;
  if (!mask)
    return counter;
  auto type = llvm::cast<NamedTensorType>(mask.getResult().getType());
  SmallVector<StringRef> order(dims.batch);
  order.push_back(dims.rows);
  order.push_back(dims.cols);
  for (auto [name, stride] :
       llvm::zip(type.getDimNames(), dropoutElementStrides(type)))
    if (const auto *it = llvm::find(order, name.getValue()); it != order.end())
      counter[it - order.begin()] = stride;
  return counter;
}

/// The dQ, dK and dV operands of a backward streaming kernel that yields
/// their stack (fusion::absorbGradientStacks): each the stacked result's
/// pointer at its slot (`sluice.stacked_results`, the stack index of dQ,
/// dK and dV) times the stacked dim's stride, with the stack's strides
/// under the gradient's own dim names (the renames between looked
/// through).
LogicalResult stackedGradientOperands(KernelOp kernel,
                                      SmallVector<Value> &values,
                                      SmallVector<NamedTensorType> &stored,
                                      SmallVector<NamedTensorType> &read,
                                      SmallVector<int64_t> &offsets) {
  auto slots =
      kernel->getAttrOfType<DenseI64ArrayAttr>(kStackedResultsAttrName);
  auto stack = kernel.getYield().getOperand(0).getDefiningOp<MapOp>();
  std::optional<SmallVector<int64_t>> indices =
      stack ? stackIndices(stack) : std::nullopt;
  if (!slots || slots.size() != 3 || !indices)
    return kernel.emitOpError()
           << "is a backward streaming kernel with one result that is not "
              "the stack of its dQ, dK and dV (a map stacking them and the "
              "'"
           << kStackedResultsAttrName << "' attribute)";
  Value result = kernel.getResult(0);
  NamedTensorType stackType = getTensorType(result);
  StringRef dim = llvm::cast<StringAttr>(stack.getIndexDims()[0]).getValue();
  for (int64_t slot : slots.asArrayRef()) {
    const int64_t *position = llvm::find(*indices, slot);
    if (position == indices->end())
      return kernel.emitOpError() << "stacks no gradient at index " << slot;
    // The gradient's dims under the stack's names, through the renames.
    Value gradient = stack.getInputs()[position - indices->begin()];
    llvm::StringMap<StringAttr> toStack;
    for (StringAttr name : getTensorType(gradient).getDimNames())
      toStack[name.getValue()] = name;
    while (auto rename = gradient.getDefiningOp<RenameOp>()) {
      llvm::StringMap<StringAttr> inner;
      for (auto [source, target] :
           llvm::zip_equal(getTensorType(rename.getInput()).getDimNames(),
                           getTensorType(rename.getResult()).getDimNames()))
        inner[source.getValue()] = toStack.lookup(target.getValue());
      toStack = std::move(inner);
      gradient = rename.getInput();
    }
    // The stack's layout under the gradient's names.
    llvm::StringMap<StringAttr> fromStack;
    for (auto &entry : toStack)
      if (entry.second)
        fromStack[entry.second.getValue()] =
            StringAttr::get(kernel.getContext(), entry.getKey());
    SmallVector<StringAttr> names;
    for (StringAttr name : stackType.getDimNames())
      names.push_back(fromStack.lookup(name.getValue())
                          ? fromStack.lookup(name.getValue())
                          : name);
    values.push_back(result);
    stored.push_back(NamedTensorType::get(names, stackType.getSizes(),
                                          stackType.getElementType()));
    read.push_back(getTensorType(gradient));
    offsets.push_back(slot * strideOf(stackType, dim));
  }
  return success();
}

/// The architecture compiled for (`cudaArch`, else the module's CUDA
/// target `sluice.target`, else sm_80) and its compute capability: the
/// digits after "sm_" (sm_90a -> 90: a feature suffix does not change the
/// shared memory), 0 when there are none.
std::pair<StringRef, int> targetArch(ModuleOp module, StringRef cudaArch) {
  StringRef target = cudaArch;
  if (target.empty())
    if (auto attr = module->getAttrOfType<StringAttr>("sluice.target"))
      target = attr.getValue();
  if (target.empty())
    target = "sm_80";
  int arch = 0;
  StringRef digits = target;
  if (digits.consume_front("sm_"))
    (void)digits.take_while(llvm::isDigit).getAsInteger(10, arch);
  return {target, arch};
}
} // namespace

FailureOr<exec::StreamTilesAttr>
ModuleEmitter::streamTiles(KernelOp kernel, Type element, int64_t headDim) {
  MLIRContext *context = module.getContext();
  if (!isCuda())
    return exec::StreamTilesAttr::get(context, kCppQueryRows, kCppKeyTile,
                                      kCppKeyTile, kCppQueryRows, 0, 1);
  int bytes = element.isF32() ? 4 : 2;
  auto [target, arch] = targetArch(module, cudaArch);
  sluice_stream_cuda_tiles tiles =
      sluice_stream_cuda_tiles_for(arch, bytes, headDim);
  if (tiles.warps == 0) {
    InFlightDiagnostic diag = kernel.emitOpError()
                              << "is a streaming kernel with head dim "
                              << headDim << " of " << element << " for '"
                              << target << "': ";
    int limit = sluice_cuda_block_smem_limit(arch);
    if (headDim > SLUICE_STREAM_MAX_HEAD_DIM)
      diag << "the CUDA streaming kernels take head dims up to "
           << SLUICE_STREAM_MAX_HEAD_DIM;
    else if (limit == 0)
      diag << "the CUDA streaming kernels know the per-block shared-memory "
              "limit of compute capabilities 7.5, 8.0, 8.6, 8.7, 8.9, 9.0, "
              "10.x, 11.0 and 12.x only";
    else if (bytes == 2)
      diag << "f16/bf16 streaming kernels need sm_80 or newer "
              "(mma.sync.m16n8k16)";
    else
      diag << "no tiles of the CUDA streaming kernels fit the " << limit
           << " bytes of shared memory of a block";
    return diag << " (--fuse-streaming=off keeps the unfused kernels)";
  }
  return exec::StreamTilesAttr::get(context, 16 * tiles.warps, tiles.key_tile,
                                    16 * tiles.warps, tiles.query_tile,
                                    tiles.head_dim, 32 * tiles.warps);
}

LogicalResult ModuleEmitter::lowerStreaming(KernelOp kernel) {
  std::string description = describeKernel(kernel);
  StreamingAttr info = kernel.getStreamingAttr();
  if (!info)
    return kernel.emitOpError() << "is a streaming kernel without its "
                                   "#sluice.streaming attribute";
  bool backward = info.getDirection() == Phase::backward;
  SmallVector<Value> values(kernel.getInputs());
  size_t ins = kernel.getInputs().size(), outs = kernel.getNumResults();
  bool stackedGradients = backward && outs == 1;
  if (backward ? ins != 6 || (outs != 3 && !stackedGradients)
               : ins != 3 || (outs != 1 && outs != 2))
    return kernel.emitOpError()
           << "is a streaming kernel with " << ins << " inputs and " << outs
           << " results; expected (q, k, v) -> (o[, lse]) or (q, k, v, do, "
              "lse, d or o) -> (dq, dk, dv) or (their stack)";
  // An input the body only slices (Q, K or V cut from a stacked tensor,
  // docs/Layout.md): the kernel reads the slice's dims through the stacked
  // tensor's strides, from the slice's index along the stacked dim on.
  SmallVector<NamedTensorType> stored, read;
  SmallVector<int64_t> offsets;
  for (auto [index, value] : llvm::enumerate(values)) {
    auto type = llvm::cast<NamedTensorType>(value.getType());
    stored.push_back(type);
    read.push_back(type);
    offsets.push_back(0);
    if (std::optional<StackedSlice> slice =
            readOnlyAsSlice(kernel.getBlock().getArgument(index))) {
      read.back() = getTensorType(slice->sum.getResult());
      offsets.back() = slice->index * strideOf(type, slice->dim);
    }
  }
  if (stackedGradients) {
    if (failed(stackedGradientOperands(kernel, values, stored, read, offsets)))
      return failure();
  } else {
    for (Value result : kernel.getResults()) {
      auto type = llvm::cast<NamedTensorType>(result.getType());
      values.push_back(result);
      stored.push_back(type);
      read.push_back(type);
      offsets.push_back(0);
    }
  }
  auto typeOf = [&](unsigned index) { return read[index]; };
  NamedTensorType q = typeOf(0), k = typeOf(1), v = typeOf(2);
  // The backward's sixth input is D (the rows' dims) or, when the kernel's
  // members compute D = rowsum(dO * O) (docs/Fusion.md), O (dO's dims).
  bool rowDotFromO = backward && typeOf(5).hasSameDims(typeOf(3));
  FailureOr<StreamDims> dims = streamDims(kernel, info, q, k, v);
  if (failed(dims))
    return failure();
  Type element = q.getElementType();
  // Which dims each value is laid over: (row, columns) of its operand slot.
  const StreamDims &s = *dims;
  using Role = std::pair<StringRef, ArrayRef<StringRef>>;
  ArrayRef<StringRef> cDims = s.c, eDims = s.e, none;
  SmallVector<Role> roles =
      backward ? SmallVector<Role>{{s.rows, cDims},
                                   {s.cols, cDims},
                                   {s.cols, eDims},
                                   {s.rows, eDims},
                                   {s.rows, none},
                                   {s.rows, rowDotFromO ? eDims : none},
                                   {s.rows, cDims},
                                   {s.cols, cDims},
                                   {s.cols, eDims}}
               : SmallVector<Role>{{s.rows, cDims},
                                   {s.cols, cDims},
                                   {s.cols, eDims},
                                   {s.rows, eDims},
                                   {s.rows, none}};
  SmallVector<Attribute> strides;
  SmallVector<Value> pointers;
  for (auto [index, value] : llvm::enumerate(values)) {
    NamedTensorType type = stored[index];
    bool statistic = roles[index].second.empty();
    if (!contiguous(type, roles[index].second))
      return kernel.emitOpError()
             << "is a streaming kernel whose operand #" << index << " of "
             << "type " << type << " does not lay out its dims ("
             << llvm::join(roles[index].second, ", ")
             << ") one after the other in this order; the runtime kernels "
                "take them as one dim";
    if (statistic ? !type.getElementType().isF32()
                  : type.getElementType() != element)
      return kernel.emitOpError()
             << "is a streaming kernel whose operand #" << index << " has "
             << "element type " << type.getElementType() << "; expected "
             << (statistic ? Type(Float32Type::get(module.getContext()))
                           : element);
    strides.push_back(stridesOf(module.getContext(), type, s,
                                roles[index].first, roles[index].second));
    FailureOr<Value> pointer = addressOf(value, kernel);
    if (failed(pointer))
      return failure();
    pointers.push_back(*pointer);
  }
  int64_t d = extentOf(q, s.c), e = extentOf(v, s.e);
  FailureOr<exec::StreamTilesAttr> tiles =
      streamTiles(kernel, element, std::max(d, e));
  if (failed(tiles))
    return failure();
  size_t inputs = kernel.getInputs().size();
  auto attention = exec::AttentionOp::create(
      execBuilder, kernel.getLoc(), ArrayRef(pointers).take_front(inputs),
      ArrayRef(pointers).drop_front(inputs), backward, rowDotFromO, element,
      s.batchSizes, s.group, q.getDimSize(s.rows), k.getDimSize(s.cols), d, e,
      ArrayAttr::get(module.getContext(), strides), counterStrides(kernel, s),
      info.getScale().getValue(), info.getCausal(),
      info.getDropout().getValue(), info.getStream(), *tiles, description,
      /*offsets=*/nullptr);
  if (llvm::any_of(offsets, [](int64_t offset) { return offset != 0; }))
    attention.setOffsets(offsets);
  usesStreaming = true;
  return success();
}
