// A hand-written sluice_exec entry printed as CUDA: a cuBLASLt GEMM whose
// bias+gelu epilogue the library folds (its descriptors go to the context,
// create and destroy sections), batched over 4 with one shared operand, and
// a plain strided-batched GEMM into the scratch buffer that has no
// descriptor slot (hand-written, not legalized: --sluice-legalize-for-emission
// gives every GEMM one, test/Target/legalize-for-emission.mlir), so cuBLAS.
// The folded GEMM has no fallback region (hand-written: the lowering gives
// every folded epilogue one, test/Codegen/gemm-epilogue-fallback.test), so
// where the cached algorithm does not apply it passes NULL (cuBLASLt's
// heuristic per call) and a refusal is an error.
// RUN: sluice-translate --sluice-to-cuda %s | FileCheck %s

// CHECK-LABEL: /* context fields */
// CHECK-NEXT: cublasLtMatmulDesc_t lt_desc_3;
// CHECK-NEXT: cublasLtMatrixLayout_t lt_a_3, lt_b_3, lt_c_3;
// CHECK-NEXT: cublasLtMatmulAlgo_t lt_algo_3;
// CHECK-NEXT: int lt_algo_found_3;
// CHECK-LABEL: /* create */
// CHECK-NEXT: SLUICE_CHECK_CUBLAS(cublasLtMatmulDescCreate(&ctx->lt_desc_3, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate for kernel 'ffn1' (gemm: ffn1)");
// CHECK: cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
// CHECK-NEXT: cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
// A is 40 x 6 (not transposed), shared across the batch (stride 0).
// CHECK: cublasLtMatrixLayoutCreate(&ctx->lt_a_3, CUDA_R_16F, 40, 6, 40)
// CHECK-NEXT: {
// CHECK-NEXT: int32_t batch = 4;
// CHECK-NEXT: int64_t stride = 0;
// CHECK: cublasLtMatrixLayoutCreate(&ctx->lt_b_3, CUDA_R_16F, 6, 16, 6)
// CHECK: int64_t stride = 96;
// CHECK: cublasLtMatrixLayoutCreate(&ctx->lt_c_3, CUDA_R_16F, 40, 16, 40)
// CHECK: int64_t stride = 640;
// The algorithm is chosen once, here, under a preference (workspace, 16-byte
// alignment, no reduction in the output type) and cached in the context.
// CHECK: cublasLtMatmulPreferenceCreate(&pref)
// CHECK: uint64_t workspace = ctx->workspace_bytes;
// CHECK-NEXT: uint32_t reduction = CUBLASLT_REDUCTION_SCHEME_INPLACE | CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
// CHECK-NEXT: uint32_t alignment = 16;
// CHECK: CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace
// CHECK-NEXT: CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reduction
// CHECK-NEXT: CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignment
// CHECK-NEXT: CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignment
// CHECK-NEXT: CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignment
// CHECK-NEXT: CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignment
// CHECK: status = cublasLtMatmulAlgoGetHeuristic(ctx->lt, ctx->lt_desc_3, ctx->lt_a_3, ctx->lt_b_3, ctx->lt_c_3, ctx->lt_c_3, pref, 1, &result, &found);
// CHECK-NEXT: cublasLtMatmulPreferenceDestroy(pref);
// CHECK-NEXT: ctx->lt_algo_found_3 = status == CUBLAS_STATUS_SUCCESS && found > 0 && result.workspaceSize <= workspace;
// CHECK-NEXT: if (ctx->lt_algo_found_3) ctx->lt_algo_3 = result.algo;
// CHECK-LABEL: /* destroy */
// CHECK-NEXT: if (ctx->lt_a_3) cublasLtMatrixLayoutDestroy(ctx->lt_a_3);
// CHECK: if (ctx->lt_desc_3) cublasLtMatmulDescDestroy(ctx->lt_desc_3);
// CHECK-LABEL: /* entry fused_forward */
// CHECK-NEXT: // kernel 'ffn1' (gemm: ffn1): C[40 x 16] = 5.000000e-01 * op(A)[40 x 6] op(B), batch 4
// CHECK-NEXT: {
// CHECK-NEXT: const float alpha = 0x1p-1f;
// CHECK-NEXT: const float beta = 0.0f;
// CHECK-NEXT: const void *bias = args->b1;
// CHECK-NEXT: SLUICE_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(ctx->lt_desc_3, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)), "bias pointer of kernel 'ffn1' (gemm: ffn1)");
// CHECK-NEXT: const cublasLtMatmulAlgo_t *algo = ctx->lt_algo_found_3 && sluice_aligned16(args->w1) && sluice_aligned16(args->x) && sluice_aligned16((ctx->arena + 256ULL)) ? &ctx->lt_algo_3 : NULL;
// CHECK-NEXT: SLUICE_CHECK_CUBLAS(cublasLtMatmul(ctx->lt, ctx->lt_desc_3, &alpha, args->w1, ctx->lt_a_3, args->x, ctx->lt_b_3, &beta, (ctx->arena + 256ULL), ctx->lt_c_3, (ctx->arena + 256ULL), ctx->lt_c_3, algo, ctx->workspace, ctx->workspace_bytes, stream), "cublasLtMatmul of kernel 'ffn1' (gemm: ffn1)");
// CHECK-NEXT: }
// CHECK-NEXT: // kernel 'qk': C[16 x 40] = 1.000000e+00 * op(A)[16 x 6] op(B), batch 1
// CHECK-NEXT: {
// CHECK-NEXT: const float alpha = 0x1p+0f;
// CHECK-NEXT: const float beta = 0.0f;
// CHECK-NEXT: SLUICE_CHECK_CUBLAS(cublasSetStream(ctx->blas, stream), "cublasSetStream");
// CHECK-NEXT: SLUICE_CHECK_CUBLAS(cublasGemmStridedBatchedEx(ctx->blas, CUBLAS_OP_T, CUBLAS_OP_N, 16, 40, 6, &alpha, args->x, CUDA_R_32F, 6, 0LL, args->w1, CUDA_R_16BF, 6, 0LL, &beta, ctx->scratch, CUDA_R_32F, 16, 0LL, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT), "cublasGemmStridedBatchedEx of kernel 'qk'");
// CHECK-NEXT: }
sluice_exec.entry @fused_forward {
  %w = sluice_exec.arg "w1"
  %x = sluice_exec.arg "x"
  %h = sluice_exec.arena 256
  %b = sluice_exec.arg "b1"
  sluice_exec.gemm %w * %x -> %h bias %b {label = "kernel 'ffn1' (gemm: ffn1)",
      trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>,
      m = 40, n = 16, k = 6, lda = 40, ldb = 6, ldc = 40,
      batch_count = 4, stride_a = 0, stride_b = 96, stride_c = 640,
      alpha = 0.5, a_type = f16, b_type = f16, c_type = f16,
      compute = #sluice_exec.compute<f32>,
      epilogue = #sluice_exec.epilogue<bias_gelu>, descriptor = 3}
  %s = sluice_exec.scratch
  sluice_exec.gemm %x * %w -> %s {label = "kernel 'qk'",
      trans_a = #sluice_exec.blas_op<t>, trans_b = #sluice_exec.blas_op<n>,
      m = 16, n = 40, k = 6, lda = 6, ldb = 6, ldc = 16,
      batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0,
      alpha = 1.0, a_type = f32, b_type = bf16, c_type = f32,
      compute = #sluice_exec.compute<f32>,
      epilogue = #sluice_exec.epilogue<none>}
}
