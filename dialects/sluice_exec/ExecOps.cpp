//===- ExecOps.cpp - sluice_exec verifiers --------------------------------===//
//
// The verifiers hold what the printers rely on, so that a printer never
// meets a call it cannot print: C identifiers, positive BLAS sizes within
// the 32-bit interface, leading dimensions that cover their matrices, an
// element type the C ABI carries, and a bias exactly for the bias
// epilogues.
//
//===----------------------------------------------------------------------===//

#include "dialects/sluice_exec/ExecOps.h"

#include "llvm/ADT/StringExtras.h"

#include <climits>

using namespace mlir;
using namespace mlir::sluice::exec;

#define GET_OP_CLASSES
#include "dialects/sluice_exec/ExecOps.cpp.inc"

LogicalResult mlir::sluice::exec::verifyLabel(Operation *op, StringRef label) {
  if (label.find_first_of("\"\\%\n") != StringRef::npos)
    return op->emitOpError()
           << "label holds a quote, backslash, '%' or newline";
  return success();
}

/// True for the element types a kernel pointer carries.
static bool isKernelElement(Type type) {
  return type.isF32() || type.isF16() || type.isBF16() || type.isInteger(1);
}

LogicalResult ScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ScheduleMode mode,
                                   ReductionStrategy reduction, int64_t grid,
                                   int64_t threads, int64_t vector,
                                   int64_t elementsPerThread, ArrayAttr outer,
                                   ArrayAttr inner, int64_t rowChunks,
                                   int64_t rows) {
  for (auto [what, value] : {std::pair<StringRef, int64_t>{"grid", grid},
                             {"threads", threads},
                             {"vector", vector},
                             {"elements_per_thread", elementsPerThread}})
    if (value < 1)
      return emitError() << "schedule " << what << " = " << value
                         << " is not positive";
  if (elementsPerThread % vector)
    return emitError() << "schedule elements_per_thread = " << elementsPerThread
                       << " is not a multiple of vector = " << vector;
  if (mode == ScheduleMode::elementwise &&
      (reduction != ReductionStrategy::none || !outer.empty()))
    return emitError() << "an elementwise schedule has no outer dims and no "
                          "reduction";
  bool columns = mode == ScheduleMode::column_block;
  if (columns && (rowChunks < 1 || rows < 1 || threads % rows))
    return emitError() << "a column_block schedule has row_chunks >= 1 and "
                          "rows >= 1 dividing threads; got row_chunks = "
                       << rowChunks << ", rows = " << rows
                       << ", threads = " << threads;
  if (mode == ScheduleMode::row_block && rows)
    return emitError() << "a row_block schedule has no rows (its row_chunks, "
                          "if any, are chunks of outer points)";
  if (mode == ScheduleMode::row_block && rowChunks && rowChunks != grid)
    return emitError() << "a row_block schedule with column reductions runs "
                          "one block per row chunk; got row_chunks = "
                       << rowChunks << ", grid = " << grid;
  if (mode == ScheduleMode::elementwise && (rowChunks || rows))
    return emitError() << "an elementwise schedule has no row_chunks and no "
                          "rows";
  if (inner.empty() || !llvm::all_of(outer, llvm::IsaPred<StringAttr>) ||
      !llvm::all_of(inner, llvm::IsaPred<StringAttr>))
    return emitError() << "schedule dims must be names, with at least one "
                          "inner dim";
  return success();
}

LogicalResult LaunchOp::verify() {
  if (getInputTypes().size() != getInputs().size() ||
      getOutputTypes().size() != getOutputs().size())
    return emitOpError() << "has " << getInputs().size() << " inputs and "
                         << getOutputs().size() << " outputs but "
                         << getInputTypes().size() << " and "
                         << getOutputTypes().size() << " element types";
  for (ArrayAttr types : {getInputTypes(), getOutputTypes()})
    for (Attribute attr : types)
      if (Type type = llvm::cast<TypeAttr>(attr).getValue();
          !isKernelElement(type))
        return emitOpError() << "element type " << type
                             << " is not f32, f16, bf16 or i1 (a packed mask)";
  ArrayRef<int64_t> clear = getClearBytes();
  if (clear.size() != getOutputs().size())
    return emitOpError() << "has " << clear.size() << " clear_bytes for "
                         << getOutputs().size() << " outputs";
  for (auto [index, type] : llvm::enumerate(getOutputTypes())) {
    bool packed = llvm::cast<TypeAttr>(type).getValue().isInteger(1);
    if (packed ? clear[index] <= 0 || clear[index] % 4 : clear[index] != 0)
      return emitOpError()
             << "output #" << index << " clears " << clear[index]
             << " bytes; a packed (i1) output clears its whole 32-bit "
                "words, any other output nothing";
  }
  return verifyLabel(*this, getLabel());
}

bool GemmOp::hasBiasEpilogue() {
  BlasEpilogue epilogue = getEpilogue();
  return epilogue == BlasEpilogue::bias ||
         epilogue == BlasEpilogue::bias_relu ||
         epilogue == BlasEpilogue::bias_gelu ||
         epilogue == BlasEpilogue::bias_gelu_aux ||
         epilogue == BlasEpilogue::dgelu_bgrad ||
         epilogue == BlasEpilogue::bgrada || epilogue == BlasEpilogue::bgradb;
}

LogicalResult GemmOp::verify() {
  if (failed(verifyLabel(*this, getLabel())))
    return failure();
  auto sized = [&](StringRef what, int64_t value,
                   int64_t least) -> LogicalResult {
    if (value < least || value > INT_MAX)
      return emitOpError() << what << " = " << value << " is outside [" << least
                           << ", " << INT_MAX
                           << "] (the 32-bit BLAS interface)";
    return success();
  };
  bool ta = getTransA() == BlasOp::t, tb = getTransB() == BlasOp::t;
  // The rows of each stored (column-major) matrix bound its leading
  // dimension from below.
  if (failed(sized("m", getM(), 1)) || failed(sized("n", getN(), 1)) ||
      failed(sized("k", getK(), 1)) ||
      failed(sized("batch_count", getBatchCount(), 1)) ||
      failed(sized("lda", getLda(), ta ? getK() : getM())) ||
      failed(sized("ldb", getLdb(), tb ? getN() : getK())) ||
      failed(sized("ldc", getLdc(), getM())))
    return failure();
  for (auto [what, stride] :
       {std::pair<StringRef, int64_t>{"stride_a", getStrideA()},
        {"stride_b", getStrideB()},
        {"stride_c", getStrideC()}})
    if (stride < 0)
      return emitOpError() << what << " = " << stride << " is negative";
  for (auto [what, type] : {std::pair<StringRef, Type>{"a_type", getAType()},
                            {"b_type", getBType()},
                            {"c_type", getCType()}})
    if (!type.isF32() && !type.isF16() && !type.isBF16())
      return emitOpError() << what << " is " << type
                           << "; the BLAS calls take f32, f16 or bf16";
  if (getBeta().convertToDouble() != 0.0 && getBeta().convertToDouble() != 1.0)
    return emitOpError() << "beta = " << getBeta().convertToDouble()
                         << "; a GEMM overwrites C (0) or accumulates into "
                            "it (1)";
  if (hasBiasEpilogue() != static_cast<bool>(getBias()))
    return emitOpError() << "epilogue '" << stringifyBlasEpilogue(getEpilogue())
                         << "' " << (getBias() ? "takes no" : "needs a")
                         << " bias operand";
  bool aux = getEpilogue() == BlasEpilogue::bias_gelu_aux ||
             getEpilogue() == BlasEpilogue::dgelu ||
             getEpilogue() == BlasEpilogue::dgelu_bgrad;
  if (aux != static_cast<bool>(getAux()))
    return emitOpError() << "epilogue '" << stringifyBlasEpilogue(getEpilogue())
                         << "' " << (getAux() ? "takes no" : "needs an")
                         << " aux operand";
  // cuBLASLt's rule for the GELU aux matrix, laid out as C.
  if (aux &&
      (getLdc() % 8 != 0 || (getBatchCount() > 1 && getStrideC() % 8 != 0)))
    return emitOpError() << "aux matrix needs ldc (" << getLdc()
                         << ") and stride_c (" << getStrideC()
                         << ") divisible by 8";
  return verifyFallback();
}

/// The fallback region: pointer ops, one plain GEMM with this GEMM's BLAS
/// parameters, then the launches that do what the epilogue did.
LogicalResult GemmOp::verifyFallback() {
  if (getFallback().empty())
    return success();
  if (getEpilogue() == BlasEpilogue::none)
    return emitOpError() << "has a fallback but no epilogue (a GEMM without "
                            "one needs none)";
  GemmOp plain;
  int64_t launches = 0;
  for (Operation &op : getFallback().front()) {
    if (llvm::isa<ArgOp, ArenaOp, ScratchOp, SavedOp>(op))
      continue;
    if (auto gemm = llvm::dyn_cast<GemmOp>(op)) {
      if (plain || launches)
        return emitOpError() << "fallback holds a second GEMM or a GEMM after "
                                "its launches; it runs one plain GEMM first";
      plain = gemm;
      continue;
    }
    if (llvm::isa<LaunchOp>(op) && plain) {
      ++launches;
      continue;
    }
    return emitOpError() << "fallback holds '" << op.getName()
                         << "'; it holds pointer ops, one plain GEMM, then the "
                            "launches of the epilogue's kernels";
  }
  if (!plain || !launches)
    return emitOpError() << "fallback needs a plain GEMM and at least one "
                            "launch after it";
  if (plain.getEpilogue() != BlasEpilogue::none || !plain.getFallback().empty())
    return emitOpError() << "fallback GEMM has an epilogue or a fallback; it "
                            "runs without the library epilogue";
  // Everything but C, the epilogue's operands and the slot.
  bool same =
      plain.getA() == getA() && plain.getB() == getB() &&
      plain.getTransA() == getTransA() && plain.getTransB() == getTransB() &&
      plain.getM() == getM() && plain.getN() == getN() &&
      plain.getK() == getK() && plain.getLda() == getLda() &&
      plain.getLdb() == getLdb() && plain.getLdc() == getLdc() &&
      plain.getBatchCount() == getBatchCount() &&
      plain.getStrideA() == getStrideA() &&
      plain.getStrideB() == getStrideB() &&
      plain.getStrideC() == getStrideC() && plain.getAlpha() == getAlpha() &&
      plain.getBeta() == getBeta() && plain.getAType() == getAType() &&
      plain.getBType() == getBType() && plain.getCType() == getCType() &&
      plain.getCompute() == getCompute();
  if (!same)
    return emitOpError() << "fallback GEMM differs in its BLAS parameters; it "
                            "computes the same product (only C may differ)";
  return success();
}
