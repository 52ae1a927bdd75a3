//===- SluiceBuilders.h - helpers that build sluice IR ----------*- C++ -*-===//
//
// Small builders shared by the decompositions, the spec builder and autodiff,
// so that a map body or a reduction is spelled one way everywhere.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DIALECT_SLUICEBUILDERS_H
#define SLUICE_DIALECT_SLUICEBUILDERS_H

#include "dialects/sluice/SluiceOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::sluice {

/// Builds a scalar map body: receives the builder positioned in the body, the
/// location, and the body arguments (one float per input in the compute
/// type, then one index per index dimension); returns the value to yield.
using MapBodyBuilder =
    function_ref<Value(OpBuilder &, Location, ValueRange /*args*/)>;

/// Builds `sluice.map` over `inputs` producing `resultType`, with a body in
/// `computeType` built by `body`.
Value buildMap(OpBuilder &builder, Location loc, NamedTensorType resultType,
               ValueRange inputs, FloatType computeType, MapBodyBuilder body,
               ArrayRef<StringRef> indexDims = {});

/// Builds `sluice.reduce kind input over dims`, the result in `input`'s layout
/// without `dims`, with element type `elementType` (the input's if null).
Value buildReduce(OpBuilder &builder, Location loc, ReduceKind kind,
                  Value input, ArrayRef<StringRef> dims,
                  Type elementType = {});

/// A float constant of `type`.
Value buildConstant(OpBuilder &builder, Location loc, FloatType type,
                    double value);

/// The tensor type of `value` (which must have one).
inline NamedTensorType getTensorType(Value value) {
  return llvm::cast<NamedTensorType>(value.getType());
}

/// The tensor `value` is a view of: renames alias their input, so bytes and
/// buffers belong to the source.
inline Value resolveView(Value value) {
  while (auto rename = value.getDefiningOp<RenameOp>())
    value = rename.getInput();
  return value;
}

/// True for a map that adds its two inputs and nothing else (`a + b`, no
/// index dimensions): a term of a sum, as autodiff accumulates gradients.
bool isSumOfInputs(MapOp map);

/// The index a map keeps of its one index dim when it is a select of a
/// stacked tensor's slice: one input, one index dim, and the body
/// `index == c ? x : 0` (either operand order of the comparison). Its input
/// may have the dim (the mask of a slice, before the sum over the dim) or
/// not (a slice's gradient: broadcast along the dim, zero off index c).
/// std::nullopt for any other map.
std::optional<int64_t> maskedIndex(MapOp map);

/// The index of its one index dim each input of a map that stacks its
/// inputs takes: the body `index == c0 ? x0 : index == c1 ? x1 : ... : r`
/// whose rest `r` is 0 (no input at the other indices) or the last input
/// (at the one index left). std::nullopt for any other map, or where an
/// input or an index appears twice.
std::optional<SmallVector<int64_t>> stackIndices(MapOp map);

/// One slice of a stacked tensor: `reduce sum over [dim]` of a maskedIndex
/// map of `stacked` along `dim` (--sluice-stack-contractions writes each
/// former result so): the elements of `stacked` at `index` of `dim`.
struct StackedSlice {
  Value stacked;
  StringRef dim;
  int64_t index;
  MapOp mask;
  ReduceOp sum;
};

/// On a backward streaming kernel that yields the stack of its dQ, dK and
/// dV (fusion::absorbGradientStacks): the stack index of each, in that
/// order (a DenseI64ArrayAttr), which the lowering writes them at.
inline constexpr llvm::StringLiteral kStackedResultsAttrName =
    "sluice.stacked_results";

/// The slice `value` is (the result of its sum), if it is one.
std::optional<StackedSlice> matchSlice(Value value);

/// The slice `value` is only read as: its one use a slice's mask, whose one
/// use is the slice's sum (a kernel's input that its body only slices).
std::optional<StackedSlice> readOnlyAsSlice(Value value);

/// The memory `value` is stored in: renames view their input, and the
/// result of an `accumulate` kernel reuses its accumulator's buffer
/// (KernelOp::getAccumulatedStorage). The memory plan and the emitters
/// agree through this one rule.
Value resolveStorage(Value value);

} // namespace mlir::sluice

#endif // SLUICE_DIALECT_SLUICEBUILDERS_H
