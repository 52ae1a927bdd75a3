//===- TranslateToCuda.cpp - sluice_exec printed as CUDA host code --------===//
//
// One print function per sluice_exec op, chosen by a TypeSwitch (the shape
// of upstream TranslateToCpp.cpp). A GEMM prints as a cuBLASLt matmul
// whose descriptors and algorithm the context holds (created and chosen once
// in create), with cublasGemmStridedBatchedEx as the fallback of a GEMM
// without an epilogue and the GEMM's fallback region (the plain GEMM and
// generated kernels) as the fallback of one with an epilogue.
//
//===----------------------------------------------------------------------===//

#include "sluice/Target/Translate.h"

#include "dialects/sluice_exec/ExecOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::sluice;
using namespace mlir::sluice::target;

namespace {
StringRef cudaDataType(Type element) {
  return element.isF16()    ? "CUDA_R_16F"
         : element.isBF16() ? "CUDA_R_16BF"
                            : "CUDA_R_32F";
}
StringRef cublasOp(exec::BlasOp op) {
  return op == exec::BlasOp::t ? "CUBLAS_OP_T" : "CUBLAS_OP_N";
}
StringRef cublasCompute(exec::ComputeType) { return "CUBLAS_COMPUTE_32F"; }
StringRef cublasScale(exec::ComputeType) { return "CUDA_R_32F"; }
StringRef ltEpilogue(exec::BlasEpilogue epilogue) {
  switch (epilogue) {
  case exec::BlasEpilogue::relu:
    return "CUBLASLT_EPILOGUE_RELU";
  case exec::BlasEpilogue::gelu:
    return "CUBLASLT_EPILOGUE_GELU";
  case exec::BlasEpilogue::bias:
    return "CUBLASLT_EPILOGUE_BIAS";
  case exec::BlasEpilogue::bias_relu:
    return "CUBLASLT_EPILOGUE_RELU_BIAS";
  case exec::BlasEpilogue::bias_gelu:
    return "CUBLASLT_EPILOGUE_GELU_BIAS";
  case exec::BlasEpilogue::bias_gelu_aux:
    return "CUBLASLT_EPILOGUE_GELU_AUX_BIAS";
  case exec::BlasEpilogue::dgelu:
    return "CUBLASLT_EPILOGUE_DGELU";
  case exec::BlasEpilogue::dgelu_bgrad:
    return "CUBLASLT_EPILOGUE_DGELU_BGRAD";
  case exec::BlasEpilogue::bgrada:
    return "CUBLASLT_EPILOGUE_BGRADA";
  case exec::BlasEpilogue::bgradb:
    return "CUBLASLT_EPILOGUE_BGRADB";
  case exec::BlasEpilogue::none:
    break;
  }
  return "CUBLASLT_EPILOGUE_DEFAULT";
}

/// One cuBLASLt matrix layout of `op`'s descriptor set `slot`.
void printLtLayout(raw_indented_ostream &os, exec::GemmOp op, StringRef var,
                   Type element, int64_t rows, int64_t cols, int64_t ld,
                   int64_t stride) {
  os << "SLUICE_CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&ctx->" << var << ", "
     << cudaDataType(element) << ", " << rows << ", " << cols << ", " << ld
     << "), \"cublasLtMatrixLayoutCreate for " << op.getLabel() << "\");\n";
  if (op.getBatchCount() <= 1)
    return;
  os << "{\n";
  os.indent() << "int32_t batch = " << op.getBatchCount() << ";\n"
              << "int64_t stride = " << stride << ";\n"
              << "SLUICE_CHECK_CUBLAS(cublasLtMatrixLayoutSetAttribute(ctx->"
              << var
              << ", CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, "
                 "sizeof(batch)), \"batch count\");\n"
              << "SLUICE_CHECK_CUBLAS(cublasLtMatrixLayoutSetAttribute(ctx->"
              << var
              << ", CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, "
                 "sizeof(stride)), \"batch stride\");\n";
  os.unindent() << "}\n";
}

/// At create, after the descriptors: the GEMM's algorithm, chosen once by
/// cuBLASLt's heuristic under a preference (the context's workspace, 16-byte
/// aligned A/B/C/D, no reduction in the output type: split-K partial sums
/// stay in f32) and cached in the context. None found leaves lt_algo_found
/// 0, and the call takes its fallback (cuBLAS, or the fallback region of an
/// epilogue), as it does when a pointer is not 16-byte aligned. The
/// environment variable SLUICE_LT_NO_EPILOGUE=1 clears lt_algo_found of
/// every epilogue with a fallback region, so that a GPU run can check it.
void printLtAlgorithm(raw_indented_ostream &os, exec::GemmOp op,
                      const std::string &s) {
  os << "{\n";
  os.indent() << "cublasLtMatmulPreference_t pref = NULL;\n"
              << "SLUICE_CHECK_CUBLAS(cublasLtMatmulPreferenceCreate(&pref), "
                 "\"cublasLtMatmulPreferenceCreate for "
              << op.getLabel() << "\");\n"
              << "uint64_t workspace = ctx->workspace_bytes;\n"
              << "uint32_t reduction = CUBLASLT_REDUCTION_SCHEME_INPLACE | "
                 "CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;\n"
              << "uint32_t alignment = 16;\n"
              << "cublasStatus_t status = CUBLAS_STATUS_SUCCESS;\n";
  for (auto [attr, var] :
       {std::pair<StringRef, StringRef>{"MAX_WORKSPACE_BYTES", "workspace"},
        {"REDUCTION_SCHEME_MASK", "reduction"},
        {"MIN_ALIGNMENT_A_BYTES", "alignment"},
        {"MIN_ALIGNMENT_B_BYTES", "alignment"},
        {"MIN_ALIGNMENT_C_BYTES", "alignment"},
        {"MIN_ALIGNMENT_D_BYTES", "alignment"}})
    os << "if (status == CUBLAS_STATUS_SUCCESS) status = "
          "cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_"
       << attr << ", &" << var << ", sizeof(" << var << "));\n";
  os << "cublasLtMatmulHeuristicResult_t result;\n"
     << "int found = 0;\n"
     << "if (status == CUBLAS_STATUS_SUCCESS) status = "
        "cublasLtMatmulAlgoGetHeuristic(ctx->lt, ctx->lt_desc_"
     << s << ", ctx->lt_a_" << s << ", ctx->lt_b_" << s << ", ctx->lt_c_" << s
     << ", ctx->lt_c_" << s << ", pref, 1, &result, &found);\n"
     << "cublasLtMatmulPreferenceDestroy(pref);\n"
     << "ctx->lt_algo_found_" << s
     << " = status == CUBLAS_STATUS_SUCCESS && found > 0 && "
        "result.workspaceSize <= workspace;\n"
     << "if (ctx->lt_algo_found_" << s << ") ctx->lt_algo_" << s
     << " = result.algo;\n";
  // To run the fallback of an epilogue on a GPU where cuBLASLt takes it.
  if (!op.getFallback().empty())
    os << "if (sluice_env_flag(\"SLUICE_LT_NO_EPILOGUE\")) "
          "ctx->lt_algo_found_"
       << s << " = 0;\n";
  os.unindent() << "}\n";
}

/// The context fields, create and destroy code of a cuBLASLt GEMM's
/// descriptors.
void printLtDescriptors(HostEmitter &emitter, exec::GemmOp op) {
  std::string s = std::to_string(*op.getDescriptor());
  emitter.context() << "cublasLtMatmulDesc_t lt_desc_" << s << ";\n"
                    << "cublasLtMatrixLayout_t lt_a_" << s << ", lt_b_" << s
                    << ", lt_c_" << s << ";\n"
                    << "cublasLtMatmulAlgo_t lt_algo_" << s << ";\n"
                    << "int lt_algo_found_" << s << ";\n";
  raw_indented_ostream &os = emitter.create();
  os << "SLUICE_CHECK_CUBLAS(cublasLtMatmulDescCreate(&ctx->lt_desc_" << s
     << ", " << cublasCompute(op.getCompute()) << ", "
     << cublasScale(op.getCompute()) << "), \"cublasLtMatmulDescCreate for "
     << op.getLabel() << "\");\n{\n";
  os.indent() << "cublasOperation_t ta = " << cublasOp(op.getTransA())
              << ", tb = " << cublasOp(op.getTransB()) << ";\n"
              << "cublasLtEpilogue_t epilogue = "
              << ltEpilogue(op.getEpilogue()) << ";\n";
  for (auto [attr, var, what] :
       {std::tuple<StringRef, StringRef, StringRef>{"TRANSA", "ta", "transa"},
        {"TRANSB", "tb", "transb"},
        {"EPILOGUE", "epilogue", "epilogue"}})
    os << "SLUICE_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(ctx->lt_desc_"
       << s << ", CUBLASLT_MATMUL_DESC_" << attr << ", &" << var << ", sizeof("
       << var << ")), \"" << what << "\");\n";
  if (op.getAux()) {
    // The aux matrix is laid out as C (the heuristic below needs its ld).
    os << "int64_t aux_ld = " << op.getLdc()
       << ", aux_stride = " << op.getStrideC() << ";\n";
    for (auto [attr, var, what] :
         {std::tuple<StringRef, StringRef, StringRef>{"EPILOGUE_AUX_LD",
                                                      "aux_ld", "aux ld"},
          {"EPILOGUE_AUX_BATCH_STRIDE", "aux_stride", "aux batch stride"}})
      os << "SLUICE_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(ctx->lt_desc_"
         << s << ", CUBLASLT_MATMUL_DESC_" << attr << ", &" << var
         << ", sizeof(" << var << ")), \"" << what << "\");\n";
  }
  os.unindent() << "}\n";
  bool ta = op.getTransA() == exec::BlasOp::t;
  bool tb = op.getTransB() == exec::BlasOp::t;
  int64_t m = op.getM(), n = op.getN(), k = op.getK();
  printLtLayout(os, op, "lt_a_" + s, op.getAType(), ta ? k : m, ta ? m : k,
                op.getLda(), op.getStrideA());
  printLtLayout(os, op, "lt_b_" + s, op.getBType(), tb ? n : k, tb ? k : n,
                op.getLdb(), op.getStrideB());
  printLtLayout(os, op, "lt_c_" + s, op.getCType(), m, n, op.getLdc(),
                op.getStrideC());
  printLtAlgorithm(os, op, s);
  raw_indented_ostream &ds = emitter.destroy();
  for (StringRef matrix : {"a", "b", "c"})
    ds << "if (ctx->lt_" << matrix << "_" << s
       << ") cublasLtMatrixLayoutDestroy(ctx->lt_" << matrix << "_" << s
       << ");\n";
  ds << "if (ctx->lt_desc_" << s << ") cublasLtMatmulDescDestroy(ctx->lt_desc_"
     << s << ");\n";
}

/// The cuBLAS call of a GEMM: cublasGemmStridedBatchedEx under cuBLAS's own
/// heuristic (the handle's math mode keeps reductions in f32).
void printGemmEx(raw_indented_ostream &os, exec::GemmOp op, StringRef a,
                 StringRef b, StringRef c) {
  os << "SLUICE_CHECK_CUBLAS(cublasSetStream(ctx->blas, stream), "
        "\"cublasSetStream\");\n"
     << "SLUICE_CHECK_CUBLAS(cublasGemmStridedBatchedEx(ctx->blas, "
     << cublasOp(op.getTransA()) << ", " << cublasOp(op.getTransB()) << ", "
     << op.getM() << ", " << op.getN() << ", " << op.getK() << ", &alpha, " << a
     << ", " << cudaDataType(op.getAType()) << ", " << op.getLda() << ", "
     << op.getStrideA() << "LL, " << b << ", " << cudaDataType(op.getBType())
     << ", " << op.getLdb() << ", " << op.getStrideB() << "LL, &beta, " << c
     << ", " << cudaDataType(op.getCType()) << ", " << op.getLdc() << ", "
     << op.getStrideC() << "LL, " << op.getBatchCount() << ", "
     << cublasCompute(op.getCompute()) << ", CUBLAS_GEMM_DEFAULT), "
     << "\"cublasGemmStridedBatchedEx of " << op.getLabel() << "\");\n";
}

/// The cuBLASLt call of a GEMM with descriptor slot `s` (D is C, in place)
/// under the algorithm `algo` (an expression: a pointer or NULL).
std::string ltMatmulCall(const std::string &s, StringRef a, StringRef b,
                         StringRef c, StringRef algo) {
  return ("cublasLtMatmul(ctx->lt, ctx->lt_desc_" + s + ", &alpha, " + a +
          ", ctx->lt_a_" + s + ", " + b + ", ctx->lt_b_" + s + ", &beta, " + c +
          ", ctx->lt_c_" + s + ", " + c + ", ctx->lt_c_" + s + ", " + algo +
          ", ctx->workspace, ctx->workspace_bytes, stream)")
      .str();
}

/// The checked cuBLASLt call of a GEMM (ltMatmulCall).
void printLtMatmul(raw_indented_ostream &os, exec::GemmOp op,
                   const std::string &s, StringRef a, StringRef b, StringRef c,
                   StringRef algo) {
  os << "SLUICE_CHECK_CUBLAS(" << ltMatmulCall(s, a, b, c, algo) << ", "
     << "\"cublasLtMatmul of " << op.getLabel() << "\");\n";
}

/// A GEMM whose epilogue has a fallback region: the folded cuBLASLt call
/// under the algorithm create chose, where it found one (and
/// SLUICE_LT_NO_EPILOGUE was not set) and every pointer is 16-byte aligned;
/// the fallback (the plain GEMM, then the generated kernels of the
/// epilogue) otherwise. With beta 0 the fallback also runs when that call
/// reports CUBLAS_STATUS_NOT_SUPPORTED. That retry is sound: cuBLASLt
/// refuses a call in its host-side checks, before it enqueues any work, and
/// even if a refused call had written part of D, the aux matrix or the bias
/// gradient, the fallback rewrites every one of them in full from A, B, the
/// bias and the aux input, which the memory plan never places where an
/// output of the same kernel lives (lifetimes overlap at the kernel's step)
/// and beta 0 never reads C. With beta 1, C holds the accumulator, which a
/// partial write would have spoiled: there a refusal stays an error.
LogicalResult printFoldedOrFallback(HostEmitter &emitter, exec::GemmOp op,
                                    const std::string &s, StringRef a,
                                    StringRef b, StringRef c,
                                    StringRef cached) {
  raw_indented_ostream &os = emitter.body();
  std::string what = ("\"cublasLtMatmul of " + op.getLabel() + "\"").str();
  os << "cublasStatus_t lt_status = CUBLAS_STATUS_NOT_SUPPORTED;\n"
     << "if (" << cached << ") {\n";
  std::string call = ltMatmulCall(s, a, b, c, "&ctx->lt_algo_" + s);
  if (op.getBeta().convertToDouble() == 0.0)
    os.indent() << "SLUICE_CHECK_CUBLAS_OR_UNSUPPORTED(lt_status, " << call
                << ", " << what << ");\n";
  else
    os.indent() << "SLUICE_CHECK_CUBLAS(" << call << ", " << what << ");\n"
                << "lt_status = CUBLAS_STATUS_SUCCESS;\n";
  os.unindent() << "}\n"
                << "if (lt_status != CUBLAS_STATUS_SUCCESS) {\n";
  os.indent() << "// fallback: the GEMM without the epilogue, then the "
                 "epilogue as generated kernels\n";
  for (Operation &nested : op.getFallback().front())
    if (failed(printCudaOperation(emitter, &nested)))
      return failure();
  os.unindent() << "}\n";
  return success();
}

/// A GEMM with a descriptor slot runs on cuBLASLt under the algorithm create
/// chose. Without an epilogue, cuBLAS is the fallback where that algorithm
/// does not apply (none found, or a pointer not 16-byte aligned); with one,
/// the fallback region runs there (printFoldedOrFallback). An epilogue GEMM
/// without a fallback region (hand-written IR; the lowering gives every one
/// a fallback) passes NULL there (cuBLASLt's heuristic per call). A GEMM
/// without a slot (hand-written IR that did not go through
/// --sluice-legalize-for-emission) runs on cuBLAS.
LogicalResult printOperation(HostEmitter &emitter, exec::GemmOp op) {
  FailureOr<std::string> a = HostEmitter::pointer(op.getA());
  FailureOr<std::string> b = HostEmitter::pointer(op.getB());
  FailureOr<std::string> c = HostEmitter::pointer(op.getC());
  if (failed(a) || failed(b) || failed(c))
    return failure();
  bool epilogue = op.getEpilogue() != exec::BlasEpilogue::none;
  if (epilogue && !op.getDescriptor())
    return op.emitOpError()
           << "has epilogue '" << stringifyBlasEpilogue(op.getEpilogue())
           << "' but no cuBLASLt descriptor slot (run "
              "--sluice-legalize-for-emission)";
  raw_indented_ostream &os = emitter.body();
  printGemmHeading(os, op);
  os << "const float beta = "
     << (op.getBeta().convertToDouble() != 0.0 ? "1.0f" : "0.0f") << ";\n";
  if (!op.getDescriptor()) {
    printGemmEx(os, op, *a, *b, *c);
    os.unindent() << "}\n";
    return success();
  }
  printLtDescriptors(emitter, op);
  std::string s = std::to_string(*op.getDescriptor());
  // The bias and aux pointers are set per call.
  auto setPointer = [&](Value value, StringRef decl, StringRef var,
                        StringRef attr) -> LogicalResult {
    FailureOr<std::string> pointer = HostEmitter::pointer(value);
    if (failed(pointer))
      return failure();
    os << decl << " *" << var << " = " << *pointer << ";\n"
       << "SLUICE_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(ctx->lt_desc_"
       << s << ", CUBLASLT_MATMUL_DESC_" << attr << ", &" << var << ", sizeof("
       << var << ")), \"" << var << " pointer of " << op.getLabel() << "\");\n";
    return success();
  };
  if (op.getBias() &&
      failed(setPointer(op.getBias(), "const void", "bias", "BIAS_POINTER")))
    return failure();
  if (op.getAux() &&
      failed(setPointer(op.getAux(), "void", "aux", "EPILOGUE_AUX_POINTER")))
    return failure();
  // The cached algorithm assumed 16-byte aligned matrices.
  bool fallback = !op.getFallback().empty();
  std::string cached =
      "ctx->lt_algo_found_" + s + " && sluice_aligned16(" + *a +
      ") && sluice_aligned16(" + *b + ") && sluice_aligned16(" + *c + ")" +
      (op.getAux() ? " && sluice_aligned16(aux)" : "") +
      (fallback && op.getBias() ? " && sluice_aligned16(bias)" : "");
  if (fallback) {
    if (failed(printFoldedOrFallback(emitter, op, s, *a, *b, *c, cached)))
      return failure();
  } else if (epilogue) {
    os << "const cublasLtMatmulAlgo_t *algo = " << cached << " ? &ctx->lt_algo_"
       << s << " : NULL;\n";
    printLtMatmul(os, op, s, *a, *b, *c, "algo");
  } else {
    os << "if (" << cached << ") {\n";
    os.indent();
    printLtMatmul(os, op, s, *a, *b, *c, "&ctx->lt_algo_" + s);
    os.unindent() << "} else {\n";
    os.indent();
    printGemmEx(os, op, *a, *b, *c);
    os.unindent() << "}\n";
  }
  os.unindent() << "}\n";
  return success();
}

/// The kernel a launch calls: with vector accesses the kernel comes in two
/// variants, and the launch picks the aligned one once, here, when every
/// (non-packed) pointer is 16-byte aligned.
FailureOr<std::string> launchedKernel(exec::LaunchOp op) {
  std::string kernel = op.getKernel().str();
  if (op.getSchedule().getVector() <= 1)
    return kernel;
  std::string condition;
  SmallVector<Attribute> types(op.getInputTypes().getValue());
  llvm::append_range(types, op.getOutputTypes().getValue());
  for (auto [pointer, type] : llvm::zip_equal(
           llvm::concat<Value>(op.getInputs(), op.getOutputs()), types)) {
    if (llvm::cast<TypeAttr>(type).getValue().isInteger(1))
      continue;
    FailureOr<std::string> text = HostEmitter::pointer(pointer);
    if (failed(text))
      return failure();
    condition +=
        (condition.empty() ? "" : " && ") + ("sluice_aligned16(" + *text + ")");
  }
  return "(" + (condition.empty() ? std::string("true") : condition) + " ? " +
         kernel + "<true> : " + kernel + "<false>)";
}

LogicalResult printOperation(HostEmitter &emitter, exec::LaunchOp op) {
  raw_indented_ostream &os = emitter.body();
  if (failed(printLaunchHeading(os, op, [&](StringRef pointer, int64_t bytes) {
        os << "SLUICE_CHECK_CUDA(cudaMemsetAsync((void *)(" << pointer
           << "), 0, " << bytes << "ULL, stream), \"clearing a packed mask of "
           << op.getLabel() << "\");\n";
      })))
    return failure();
  exec::ScheduleAttr schedule = op.getSchedule();
  FailureOr<std::string> kernel = launchedKernel(op);
  if (failed(kernel))
    return failure();
  if (schedule.getMode() == exec::ScheduleMode::column_block) {
    // Two stages: column tiles x row chunks write their partials to the
    // context's workspace (the cuBLASLt one: no GEMM runs in between on
    // the stream); <kernel>_total sums each column's partials, one thread
    // per column of a tile (`vector` columns per stage-1 lane).
    int64_t lanes = schedule.getThreads() / schedule.getRows();
    os << *kernel << "<<<dim3(" << schedule.getGrid() << ", "
       << schedule.getRowChunks() << "), dim3(" << lanes << ", "
       << schedule.getRows() << "), 0, stream>>>";
    if (failed(printLaunchArguments(os, op, "(float *)ctx->workspace")))
      return failure();
    os << "SLUICE_CHECK_LAUNCH(\"" << op.getLabel() << "\");\n"
       << op.getKernel() << "_total<<<" << schedule.getGrid() << ", "
       << lanes * schedule.getVector() << ", 0, stream>>>";
    if (failed(printLaunchArguments(os, op, "(float *)ctx->workspace")))
      return failure();
    os << "SLUICE_CHECK_LAUNCH(\"" << op.getLabel() << " (column totals)\");\n";
    return success();
  }
  if (schedule.getMode() == exec::ScheduleMode::row_block &&
      schedule.getRowChunks() > 0) {
    // Row blocks with column reductions: a block per row chunk writes its
    // column partials to the workspace; <kernel>_total (grid-stride, 256
    // threads, one per inner point) sums them in chunk order.
    os << *kernel << "<<<" << schedule.getGrid() << ", "
       << schedule.getThreads() << ", 0, stream>>>";
    if (failed(printLaunchArguments(os, op, "(float *)ctx->workspace")))
      return failure();
    os << "SLUICE_CHECK_LAUNCH(\"" << op.getLabel() << "\");\n"
       << op.getKernel() << "_total<<<" << schedule.getGrid()
       << ", 256, 0, stream>>>";
    if (failed(printLaunchArguments(os, op, "(float *)ctx->workspace")))
      return failure();
    os << "SLUICE_CHECK_LAUNCH(\"" << op.getLabel() << " (column totals)\");\n";
    return success();
  }
  os << *kernel << "<<<" << schedule.getGrid() << ", " << schedule.getThreads()
     << ", 0, stream>>>";
  if (failed(printLaunchArguments(os, op)))
    return failure();
  os << "SLUICE_CHECK_LAUNCH(\"" << op.getLabel() << "\");\n";
  return success();
}

LogicalResult printOperation(HostEmitter &emitter, exec::CopyOp op) {
  FailureOr<std::string> source = HostEmitter::pointer(op.getSource());
  FailureOr<std::string> target = HostEmitter::pointer(op.getTarget());
  if (failed(source) || failed(target))
    return failure();
  emitter.body() << "SLUICE_CHECK_CUDA(cudaMemcpyAsync((void *)" << *target
                 << ", (const void *)(" << *source << "), " << op.getBytes()
                 << "ULL, cudaMemcpyDeviceToDevice, stream), \"copy into "
                 << *target << "\");\n";
  return success();
}
} // namespace

LogicalResult mlir::sluice::target::printCudaOperation(HostEmitter &emitter,
                                                       Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<exec::GemmOp, exec::LaunchOp, exec::CopyOp>(
          [&](auto typed) { return printOperation(emitter, typed); })
      .Case([&](exec::AttentionOp attention) {
        return printAttention(emitter, attention, /*cuda=*/true);
      })
      .Default([&](Operation *other) {
        return printSharedOperation(emitter, other, "CUDA");
      });
}
