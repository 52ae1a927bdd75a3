//===- GemmMapping.cpp - a contraction as one strided-batched GEMM --------===//
//
// Every tensor is a dense row-major array over its layout. A group of
// dimensions (m, n, k or batch) can be addressed by one flattened index with
// one element stride exactly when its dimensions of size > 1 appear in the
// group's order and each one's stride is the next one's stride times its
// size. The GEMM then only needs, per tensor, one of its two matrix groups
// at stride 1 (the column-major rows); the other group's stride is the
// leading dimension and the batch group's stride the batch stride.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice/Analysis/GemmMapping.h"

#include <limits>

using namespace mlir;
using namespace mlir::sluice;

/// The position of `name` in `type`'s layout. Dimension names are uniqued
/// StringAttrs, so this compares pointers (the layout search asks often).
static std::optional<unsigned> positionOf(NamedTensorType type,
                                          StringAttr name) {
  ArrayRef<StringAttr> names = type.getDimNames();
  for (unsigned i = 0; i < names.size(); ++i)
    if (names[i] == name)
      return i;
  return std::nullopt;
}

static bool holds(NamedTensorType type, StringAttr name) {
  return positionOf(type, name).has_value();
}

ContractionDims mlir::sluice::classifyContraction(NamedTensorType lhs,
                                                  NamedTensorType rhs,
                                                  NamedTensorType result) {
  ContractionDims dims;
  for (StringAttr name : result.getDimNames()) {
    bool inLhs = holds(lhs, name);
    bool inRhs = holds(rhs, name);
    if (inLhs && inRhs)
      dims.batch.push_back(name);
    else if (inLhs)
      dims.lhsFree.push_back(name);
    else if (inRhs)
      dims.rhsFree.push_back(name);
  }
  for (StringAttr name : lhs.getDimNames())
    if (holds(rhs, name) && !holds(result, name))
      dims.contracted.push_back(name);
  return dims;
}

namespace {

/// A group of dimensions seen in one tensor: its element count and, unless
/// every dimension has size 1 (then any stride addresses it), its stride.
struct GroupView {
  int64_t size = 1;
  std::optional<int64_t> stride;
};

/// The row-major element strides of `type`'s dimensions, in layout order.
SmallVector<int64_t> rowMajorStrides(NamedTensorType type) {
  SmallVector<int64_t> strides(type.getRank(), 1);
  for (int i = static_cast<int>(type.getRank()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * type.getSizes()[i + 1];
  return strides;
}

/// How `group` (in its canonical order) lies in `type`, or failure if its
/// dimensions of size > 1 are out of order or do not collapse to one stride.
FailureOr<GroupView> viewGroup(NamedTensorType type, ArrayRef<int64_t> strides,
                               ArrayRef<StringAttr> group) {
  // The group's non-trivial dimensions as positions in `type`, in the
  // canonical order; they must be increasing (outermost first).
  SmallVector<unsigned> positions;
  GroupView view;
  for (StringAttr name : group) {
    unsigned position = *positionOf(type, name);
    int64_t size = type.getSizes()[position];
    view.size *= size;
    if (size != 1)
      positions.push_back(position);
  }
  for (unsigned i = 0; i + 1 < positions.size(); ++i) {
    unsigned outer = positions[i], inner = positions[i + 1];
    if (outer >= inner ||
        strides[outer] != strides[inner] * type.getSizes()[inner])
      return failure();
  }
  if (!positions.empty())
    view.stride = strides[positions.back()];
  return view;
}

/// How `group` lies in `type` when `type` may lack it entirely: an operand
/// shared by every batch (stride 0). A group only partly in `type` fails.
FailureOr<GroupView> viewBatchGroup(NamedTensorType type,
                                    ArrayRef<int64_t> strides,
                                    ArrayRef<StringAttr> group,
                                    NamedTensorType result) {
  if (llvm::all_of(group, [&](StringAttr name) { return holds(type, name); }))
    return viewGroup(type, strides, group);
  if (llvm::any_of(group, [&](StringAttr name) { return holds(type, name); }))
    return failure();
  GroupView view;
  for (StringAttr name : group)
    view.size *= result.getSizes()[*positionOf(result, name)];
  view.stride = 0;
  return view;
}

/// One column-major operand or result: `rows` x `cols` with the rows or
/// (when transposed) the columns at stride 1. Returns the leading dimension
/// and whether the matrix is stored transposed, or failure.
FailureOr<std::pair<int64_t, bool>> leadingDimension(const GroupView &rows,
                                                     const GroupView &cols,
                                                     bool allowTranspose) {
  auto tryOrientation = [](const GroupView &inner,
                           const GroupView &outer) -> std::optional<int64_t> {
    if (inner.stride && *inner.stride != 1)
      return std::nullopt;
    int64_t minimum = std::max<int64_t>(1, inner.size);
    int64_t ld = outer.stride ? *outer.stride : minimum;
    if (ld < minimum)
      return std::nullopt;
    return ld;
  };
  if (std::optional<int64_t> ld = tryOrientation(rows, cols))
    return std::make_pair(*ld, false);
  if (allowTranspose)
    if (std::optional<int64_t> ld = tryOrientation(cols, rows))
      return std::make_pair(*ld, true);
  return failure();
}

SmallVector<std::string> toStrings(ArrayRef<StringAttr> names) {
  SmallVector<std::string> strings;
  for (StringAttr name : names)
    strings.push_back(name.getValue().str());
  return strings;
}

/// The mapping with A = lhs (`aIsLhs`) or A = rhs, or failure.
FailureOr<GemmMapping> mapWithRoles(NamedTensorType lhs, NamedTensorType rhs,
                                    NamedTensorType result,
                                    const ContractionDims &dims, bool aIsLhs) {
  NamedTensorType aType = aIsLhs ? lhs : rhs, bType = aIsLhs ? rhs : lhs;
  ArrayRef<StringAttr> mGroup = aIsLhs ? dims.lhsFree : dims.rhsFree;
  ArrayRef<StringAttr> nGroup = aIsLhs ? dims.rhsFree : dims.lhsFree;
  SmallVector<int64_t> aStrides = rowMajorStrides(aType);
  SmallVector<int64_t> bStrides = rowMajorStrides(bType);
  SmallVector<int64_t> cStrides = rowMajorStrides(result);

  FailureOr<GroupView> aM = viewGroup(aType, aStrides, mGroup);
  FailureOr<GroupView> aK = viewGroup(aType, aStrides, dims.contracted);
  FailureOr<GroupView> aBatch =
      viewBatchGroup(aType, aStrides, dims.batch, result);
  FailureOr<GroupView> bK = viewGroup(bType, bStrides, dims.contracted);
  FailureOr<GroupView> bN = viewGroup(bType, bStrides, nGroup);
  FailureOr<GroupView> bBatch =
      viewBatchGroup(bType, bStrides, dims.batch, result);
  FailureOr<GroupView> cM = viewGroup(result, cStrides, mGroup);
  FailureOr<GroupView> cN = viewGroup(result, cStrides, nGroup);
  FailureOr<GroupView> cBatch = viewGroup(result, cStrides, dims.batch);
  if (failed(aM) || failed(aK) || failed(aBatch) || failed(bK) || failed(bN) ||
      failed(bBatch) || failed(cM) || failed(cN) || failed(cBatch))
    return failure();

  // C is never transposed: its rows are m.
  FailureOr<std::pair<int64_t, bool>> c =
      leadingDimension(*cM, *cN, /*allowTranspose=*/false);
  FailureOr<std::pair<int64_t, bool>> a =
      leadingDimension(*aM, *aK, /*allowTranspose=*/true);
  FailureOr<std::pair<int64_t, bool>> b =
      leadingDimension(*bK, *bN, /*allowTranspose=*/true);
  if (failed(c) || failed(a) || failed(b))
    return failure();

  GemmMapping mapping;
  mapping.aIsLhs = aIsLhs;
  mapping.m = aM->size;
  mapping.n = bN->size;
  mapping.k = aK->size;
  mapping.lda = a->first;
  mapping.transA = a->second;
  mapping.ldb = b->first;
  mapping.transB = b->second;
  mapping.ldc = c->first;
  mapping.batchCount = cBatch->size;
  mapping.strideA = aBatch->stride.value_or(0);
  mapping.strideB = bBatch->stride.value_or(0);
  mapping.strideC = cBatch->stride.value_or(0);
  mapping.mDims = toStrings(mGroup);
  mapping.nDims = toStrings(nGroup);
  mapping.kDims = toStrings(dims.contracted);
  mapping.batchDims = toStrings(dims.batch);
  return mapping;
}

/// True if every count and stride of `type` fits in int64_t.
bool fitsInt64(NamedTensorType type) {
  std::optional<uint64_t> elements = type.getNumElements();
  return elements && *elements <= static_cast<uint64_t>(
                                      std::numeric_limits<int64_t>::max());
}

/// The mapping with A = lhs, else with A = rhs, or failure.
FailureOr<GemmMapping> mapEitherRole(NamedTensorType lhs, NamedTensorType rhs,
                                     NamedTensorType result,
                                     const ContractionDims &dims) {
  for (bool aIsLhs : {true, false}) {
    FailureOr<GemmMapping> mapping =
        mapWithRoles(lhs, rhs, result, dims, aIsLhs);
    if (succeeded(mapping))
      return mapping;
  }
  return failure();
}

/// The mapping that runs the free dimensions of one operand selected by
/// `mask` (bit i: the i-th of its free group in the result's order) as the
/// batch, the other operand being shared by every batch (stride 0), or
/// failure. E.g. x[b, j, i] . w[h, p, i] -> q[j, b, h, p]: a GEMM per b.
FailureOr<GemmMapping> mapWithSharedBatch(NamedTensorType lhs,
                                          NamedTensorType rhs,
                                          NamedTensorType result,
                                          const ContractionDims &dims,
                                          bool fromLhs, unsigned mask) {
  ContractionDims promoted = dims;
  SmallVector<StringAttr> &free = fromLhs ? promoted.lhsFree : promoted.rhsFree;
  SmallVector<StringAttr> kept;
  for (auto [index, name] : llvm::enumerate(free))
    (mask & (1u << index) ? promoted.batch : kept).push_back(name);
  free = kept;
  return mapEitherRole(lhs, rhs, result, promoted);
}

} // namespace

FailureOr<GemmMapping> mlir::sluice::mapContraction(NamedTensorType lhs,
                                                    NamedTensorType rhs,
                                                    NamedTensorType result,
                                                    double scale) {
  if (!fitsInt64(lhs) || !fitsInt64(rhs) || !fitsInt64(result))
    return failure();
  ContractionDims dims = classifyContraction(lhs, rhs, result);
  // Which operand is A follows from which free group is innermost in C; try
  // A = lhs first so that the choice is deterministic when both fit (a
  // free group of size 1).
  FailureOr<GemmMapping> mapping = mapEitherRole(lhs, rhs, result, dims);
  // Without batch dimensions, some free dimensions of one operand may run as
  // the batch with the other operand shared (stride 0). The fewest batches
  // (the largest GEMMs) win; ties go to the lhs's subsets, then the rhs's,
  // each in increasing mask order.
  if (failed(mapping) && dims.batch.empty()) {
    for (bool fromLhs : {true, false}) {
      unsigned count = fromLhs ? dims.lhsFree.size() : dims.rhsFree.size();
      if (count > 8)
        continue;
      for (unsigned mask = 1; mask + 1 < (1u << count); ++mask) {
        FailureOr<GemmMapping> shared =
            mapWithSharedBatch(lhs, rhs, result, dims, fromLhs, mask);
        if (succeeded(shared) &&
            (failed(mapping) || shared->batchCount < mapping->batchCount))
          mapping = shared;
      }
    }
  }
  if (failed(mapping))
    return failure();
  mapping->alpha = scale;
  return mapping;
}

FailureOr<GemmMapping> mlir::sluice::mapContraction(ContractOp contract) {
  auto lhs = llvm::cast<NamedTensorType>(contract.getLhs().getType());
  auto rhs = llvm::cast<NamedTensorType>(contract.getRhs().getType());
  auto result = llvm::cast<NamedTensorType>(contract.getResult().getType());
  FailureOr<GemmMapping> mapping =
      mapContraction(lhs, rhs, result, contract.getScale().convertToDouble());
  if (failed(mapping))
    return failure();
  mapping->a = mapping->aIsLhs ? contract.getLhs() : contract.getRhs();
  mapping->b = mapping->aIsLhs ? contract.getRhs() : contract.getLhs();
  return mapping;
}

/// True if the dimensions of `type` of size > 1 are those of `dims` of size
/// > 1, in the same order, and `type` has no other dimensions: then `type`
/// is one packed vector indexed by the flattened `dims`.
static bool isPackedVectorOver(NamedTensorType type,
                               ArrayRef<std::string> dims) {
  if (type.getRank() != dims.size())
    return false;
  SmallVector<StringRef> expected;
  for (const std::string &name : dims) {
    std::optional<unsigned> position = type.getDimPosition(name);
    if (!position)
      return false;
    if (type.getSizes()[*position] != 1)
      expected.push_back(name);
  }
  SmallVector<StringRef> actual;
  for (auto [name, size] : llvm::zip(type.getDimNames(), type.getSizes()))
    if (size != 1)
      actual.push_back(name.getValue());
  return actual == expected;
}

bool mlir::sluice::isBiasEpilogueLegal(const GemmMapping &mapping,
                                       NamedTensorType bias) {
  return isPackedVectorOver(bias, mapping.mDims);
}

std::optional<bool> mlir::sluice::bgradOperandIsA(const GemmMapping &mapping,
                                                  ReduceOp reduce) {
  if (reduce.getKind() != ReduceKind::sum)
    return std::nullopt;
  // The reduced dimensions, as a set, must be exactly k.
  SmallVector<StringRef> reduced;
  for (Attribute dim : reduce.getDims())
    reduced.push_back(llvm::cast<StringAttr>(dim).getValue());
  SmallVector<StringRef> kDims(mapping.kDims.begin(), mapping.kDims.end());
  llvm::sort(reduced);
  llvm::sort(kDims);
  if (reduced != kDims)
    return std::nullopt;
  // The result is then the operand's other dimensions (its free ones, plus
  // batch dimensions: a batched GEMM's bias gradient would sum over the
  // batch too, which the reduce does not, so it never matches).
  auto result = llvm::cast<NamedTensorType>(reduce.getResult().getType());
  Value input = reduce.getInput();
  if (input == mapping.a && isPackedVectorOver(result, mapping.mDims))
    return true;
  if (input == mapping.b && isPackedVectorOver(result, mapping.nDims))
    return false;
  return std::nullopt;
}
