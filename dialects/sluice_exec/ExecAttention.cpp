//===- ExecAttention.cpp - the streaming attention op's verifiers ---------===//
//
// What the printers of `sluice_exec.attention` rely on: the operand counts
// of its direction, one stride vector (batch..., row, column) per pointer,
// at most SLUICE_STREAM_MAX_BATCH (4) batch dims, the last `group` of them
// query-only (stride 0 in K, V, dK, dV), sizes and tiles the runtime kernels
// take, a dropout probability in [0, 1).
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice_exec/ExecOps.h"

using namespace mlir;
using namespace mlir::sluice::exec;

LogicalResult
StreamTilesAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t queryRows, int64_t keyTile, int64_t keyRows,
                        int64_t queryTile, int64_t headDim, int64_t threads) {
  for (auto [what, value] :
       {std::pair<StringRef, int64_t>{"query_rows", queryRows},
        {"key_tile", keyTile},
        {"key_rows", keyRows},
        {"query_tile", queryTile},
        {"threads", threads}})
    if (value < 1 || value > 4096)
      return emitError() << "stream tiles " << what << " = " << value
                         << " is not in [1, 4096]";
  if (headDim < 0 || headDim % 16)
    return emitError() << "stream tiles head_dim = " << headDim
                       << " is not 0 or a positive multiple of 16";
  return success();
}

/// The query-only batch dims: at most the batch rank, and K, V (and dK, dV)
/// do not vary along them.
static LogicalResult verifyGroup(AttentionOp op) {
  int64_t group = op.getGroup(), rank = op.getBatch().size();
  if (group < 0 || group > rank)
    return op.emitOpError() << "has " << group << " query-only batch dims of "
                            << rank;
  SmallVector<unsigned> shared = {1, 2};
  if (op.getBackward())
    shared.append({7, 8});
  for (unsigned index : shared) {
    auto strides = llvm::cast<DenseI64ArrayAttr>(op.getStrides()[index]);
    for (int64_t b = rank - group; b < rank; ++b)
      if (strides[b] != 0)
        return op.emitOpError()
               << "stride vector #" << index << " (a key/value pointer) has "
               << "stride " << strides[b] << " along query-only batch dim #"
               << b << "; expected 0";
  }
  return success();
}

LogicalResult AttentionOp::verify() {
  bool backward = getBackward();
  size_t inputs = getInputs().size(), outputs = getOutputs().size();
  if (backward ? inputs != 6 || outputs != 3
               : inputs != 3 || (outputs != 1 && outputs != 2))
    return emitOpError() << "has " << inputs << " inputs and " << outputs
                         << " outputs; a "
                         << (backward ? "backward" : "forward")
                         << " attention takes "
                         << (backward ? "(q, k, v, d_o, lse, d) -> (dq, dk, dv)"
                                      : "(q, k, v) -> (o) or (o, lse)");
  if (getRowDotFromO() && !backward)
    return emitOpError() << "has row_dot_from_o without backward (only the "
                            "backward reads D)";
  Type element = getElement();
  if (!element.isF32() && !element.isF16() && !element.isBF16())
    return emitOpError() << "element type " << element
                         << " is not f32, f16 or bf16";
  ArrayRef<int64_t> batch = getBatch();
  if (batch.size() > 4)
    return emitOpError() << "has " << batch.size()
                         << " batch dims; the runtime kernels take at most 4";
  if (llvm::any_of(batch, [](int64_t size) { return size < 1; }))
    return emitOpError() << "has a batch dim of size below 1";
  if (getM() < 1 || getN() < 1 || getD() < 1 || getE() < 1)
    return emitOpError() << "has sizes m = " << getM() << ", n = " << getN()
                         << ", d = " << getD() << ", e = " << getE()
                         << "; each must be at least 1";
  size_t rank = batch.size() + 2;
  if (getStrides().size() != inputs + outputs)
    return emitOpError() << "has " << getStrides().size()
                         << " stride vectors for " << inputs + outputs
                         << " pointers";
  for (auto [index, attr] : llvm::enumerate(getStrides())) {
    auto strides = llvm::dyn_cast<DenseI64ArrayAttr>(attr);
    if (!strides || strides.size() != (int64_t)rank ||
        llvm::any_of(strides.asArrayRef(), [](int64_t s) { return s < 0; }))
      return emitOpError() << "stride vector #" << index << " is not " << rank
                           << " non-negative integers (batch..., row, column)";
  }
  if (std::optional<ArrayRef<int64_t>> offsets = getOffsets();
      offsets && (offsets->size() != inputs + outputs ||
                  llvm::any_of(*offsets, [](int64_t o) { return o < 0; })))
    return emitOpError() << "has offsets that are not " << inputs + outputs
                         << " non-negative integers (one per pointer)";
  if (getCounter().size() != rank ||
      llvm::any_of(getCounter(), [](int64_t s) { return s < 0; }))
    return emitOpError() << "counter strides are not " << rank
                         << " non-negative integers (batch..., row, column)";
  if (failed(verifyGroup(*this)))
    return failure();
  double dropout = getDropout().convertToDouble();
  if (!(dropout >= 0.0 && dropout < 1.0))
    return emitOpError() << "dropout probability " << dropout
                         << " is not in [0, 1)";
  return verifyLabel(*this, getLabel());
}
