//===- GemmMapping.h - a contraction as one strided-batched GEMM -*- C++ -*-===//
//
// How a sluice.contract runs as one column-major strided-batched GEMM (the
// cuBLAS / cuBLASLt convention), derived from its operands' and result's
// layouts. --sluice-legalize-contractions inserts relayouts where no mapping
// exists. docs/Codegen.md describes the rules.
//
//===----------------------------------------------------------------------===//

#ifndef SLUICE_CODEGEN_GEMMMAPPING_H
#define SLUICE_CODEGEN_GEMMMAPPING_H

#include "dialects/sluice/SluiceOps.h"

#include <cstdint>
#include <string>

namespace mlir::sluice {

/// C[m, n] = alpha * op(A)[m, k] * op(B)[k, n], column-major, repeated over
/// `batchCount` with element strides between consecutive batches.
struct GemmMapping {
  /// The contract operands that play A and B (each is lhs or rhs).
  Value a, b;
  /// op(X) = X^T when set (CUBLAS_OP_T).
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  /// Leading dimensions, in elements.
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t batchCount = 1;
  /// Element strides between batches; 0 when the operand is shared.
  int64_t strideA = 0, strideB = 0, strideC = 0;
  /// The contraction's scale.
  double alpha = 1.0;
  /// The dimension names behind m, n, k and the batch, in layout order.
  SmallVector<std::string> mDims, nDims, kDims, batchDims;
};

/// The mapping of `contract` with the layouts its operands and result have,
/// or failure (emitting nothing) if no single strided-batched GEMM computes
/// it: a group of dimensions is not contiguous in one of the tensors, or
/// the batch dimensions do not collapse to one stride.
FailureOr<GemmMapping> mapContraction(ContractOp contract);

} // namespace mlir::sluice

#endif // SLUICE_CODEGEN_GEMMMAPPING_H
