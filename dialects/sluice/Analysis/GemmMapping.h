//===- GemmMapping.h - a contraction as one strided-batched GEMM -*- C++
//-*-===//
//
// How a sluice.contract runs as one column-major strided-batched GEMM (the
// cuBLAS / cuBLASLt convention), derived from its operands' and result's
// layouts. --sluice-legalize-contractions inserts relayouts where no mapping
// exists. docs/Codegen.md describes the rules.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_DIALECT_ANALYSIS_GEMMMAPPING_H
#define SLUICE_DIALECT_ANALYSIS_GEMMMAPPING_H

#include "dialects/sluice/SluiceOps.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::sluice {

/// C[m, n] = alpha * op(A)[m, k] * op(B)[k, n], column-major, repeated over
/// `batchCount` with element strides between consecutive batches.
///
/// A row-major tensor is read column-major: the group of dimensions with
/// element stride 1 is the column-major "rows". So C's rows `m` are the free
/// dimensions innermost in the result, and A is the operand holding them
/// (often the rhs: C^T = B^T A^T).
struct GemmMapping {
  /// The contract operands that play A and B (each is lhs or rhs). Null when
  /// the mapping was computed from types alone.
  Value a, b;
  /// True if A is the contraction's lhs (and B its rhs).
  bool aIsLhs = true;
  /// op(X) = X^T when set (CUBLAS_OP_T).
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  /// Leading dimensions, in elements.
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t batchCount = 1;
  /// Element strides between batches; 0 when the operand is shared (and
  /// for all three when there are no batch dimensions).
  int64_t strideA = 0, strideB = 0, strideC = 0;
  /// The contraction's scale.
  double alpha = 1.0;
  /// The dimension names behind m, n, k and the batch, in layout order
  /// (outermost first; m, n and batch in the result's order, k in the lhs's).
  /// The flattened index of a group is row-major over its list.
  SmallVector<std::string> mDims, nDims, kDims, batchDims;
};

/// The dimensions of a contraction by role (docs/Dialect.md): batch (in
/// both operands and the result), contracted (both operands only), free
/// (one operand and the result). Batch and free dimensions are listed in the
/// result's layout order, contracted ones in the lhs's.
struct ContractionDims {
  SmallVector<StringAttr> batch, contracted, lhsFree, rhsFree;
};

/// Classifies the dimensions of a contraction of `lhs` and `rhs` into
/// `result` (a verified contract's types).
ContractionDims classifyContraction(NamedTensorType lhs, NamedTensorType rhs,
                                    NamedTensorType result);

/// The mapping of `contract` with the layouts its operands and result have,
/// or failure (emitting nothing) if no single strided-batched GEMM computes
/// it: a group of dimensions is not contiguous in one of the tensors, or
/// the batch dimensions do not collapse to one stride.
FailureOr<GemmMapping> mapContraction(ContractOp contract);

/// The same from the types alone (`a` and `b` are left null; `aIsLhs` says
/// which operand plays A): what a layout search asks before rewriting types.
FailureOr<GemmMapping> mapContraction(NamedTensorType lhs, NamedTensorType rhs,
                                      NamedTensorType result,
                                      double scale = 1.0);

/// True if `bias` can be the cuBLASLt BIAS epilogue's vector: it has exactly
/// the dimensions `mDims` (the rows of the column-major D), in the same
/// order, so it is one packed vector of m elements. Batched GEMMs are fine:
/// the bias has no batch dimension and is shared (bias batch stride 0).
bool isBiasEpilogueLegal(const GemmMapping &mapping, NamedTensorType bias);

/// Whether `reduce` is what a bias-gradient epilogue computes for
/// `mapping`: true if it sums A over exactly the contracted dimensions into
/// the m elements in `mDims` order (CUBLASLT_EPILOGUE_BGRADA), false if it
/// does so for B giving `nDims` (BGRADB), std::nullopt if neither. When A
/// and B are the same value, A wins. Requires `mapping.a`/`b` (the mapping
/// of a ContractOp).
std::optional<bool> bgradOperandIsA(const GemmMapping &mapping,
                                    ReduceOp reduce);

} // namespace mlir::sluice

#endif // SLUICE_DIALECT_ANALYSIS_GEMMMAPPING_H
