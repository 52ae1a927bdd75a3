// A training forward's ffn1 with its tanh gelu folded (epilogue
// bias_gelu_aux): cuBLASLt's GELU_AUX_BIAS writes the gelu to C and the
// biased product to the aux matrix, laid out as C (its leading dimension and
// batch stride are set on the descriptor before the heuristic, its pointer
// per call).
// RUN: sluice-translate --sluice-to-cuda %s | FileCheck %s

// CHECK-LABEL: /* create */
// CHECK: cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
// CHECK: CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)), "epilogue");
// CHECK-NEXT: int64_t aux_ld = 40, aux_stride = 640;
// CHECK-NEXT: SLUICE_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(ctx->lt_desc_0, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld, sizeof(aux_ld)), "aux ld");
// CHECK-NEXT: SLUICE_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(ctx->lt_desc_0, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, &aux_stride, sizeof(aux_stride)), "aux batch stride");
// CHECK: cublasLtMatrixLayoutCreate(&ctx->lt_c_0, CUDA_R_16F, 40, 16, 40)
// CHECK: cublasLtMatmulAlgoGetHeuristic(ctx->lt, ctx->lt_desc_0,
// CHECK: cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DGELU_BGRAD;
// CHECK: CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)), "epilogue");
// CHECK-NEXT: int64_t aux_ld = 40, aux_stride = 0;
// CHECK-NEXT: CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &aux_ld
// CHECK-LABEL: /* entry train_forward */
// CHECK: const void *bias = args->b1;
// CHECK-NEXT: CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias
// CHECK-NEXT: void *aux = args->pre;
// CHECK-NEXT: SLUICE_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(ctx->lt_desc_0, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux)), "aux pointer of kernel 'ffn1' (gemm: ffn1, ffn1_bias, activation)");
// CHECK-NEXT: const cublasLtMatmulAlgo_t *algo = ctx->lt_algo_found_0 && sluice_aligned16(args->w1) && sluice_aligned16(args->x) && sluice_aligned16(args->y) && sluice_aligned16(aux) ? &ctx->lt_algo_0 : NULL;
// CHECK-NEXT: SLUICE_CHECK_CUBLAS(cublasLtMatmul(ctx->lt, ctx->lt_desc_0, &alpha, args->w1, ctx->lt_a_0, args->x, ctx->lt_b_0, &beta, args->y, ctx->lt_c_0, args->y, ctx->lt_c_0, algo,
sluice_exec.entry @train_forward {
  %w = sluice_exec.arg "w1"
  %x = sluice_exec.arg "x"
  %y = sluice_exec.arg "y"
  %pre = sluice_exec.arg "pre"
  %b = sluice_exec.arg "b1"
  sluice_exec.gemm %w * %x -> %y bias %b aux %pre {
      label = "kernel 'ffn1' (gemm: ffn1, ffn1_bias, activation)",
      trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>,
      m = 40, n = 16, k = 6, lda = 40, ldb = 6, ldc = 40,
      batch_count = 4, stride_a = 0, stride_b = 96, stride_c = 640,
      alpha = 1.0, a_type = f16, b_type = f16, c_type = f16,
      compute = #sluice_exec.compute<f32>,
      epilogue = #sluice_exec.epilogue<bias_gelu_aux>, descriptor = 0}
}

// The backward's dA = dY W2^T with the gelu's gradient and the bias
// gradient folded (epilogue dgelu_bgrad): cuBLASLt's DGELU_BGRAD reads the
// saved pre-activation through the aux pointer, writes dA * gelu'(h) to C
// and the bias gradient through the bias pointer.
// CHECK-LABEL: /* entry train_backward */
// CHECK: const void *bias = args->d_b1;
// CHECK-NEXT: SLUICE_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(ctx->lt_desc_1, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)), "bias pointer of kernel 'ffn2.grad_lhs'");
// CHECK-NEXT: void *aux = args->pre;
// CHECK-NEXT: SLUICE_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(ctx->lt_desc_1, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof(aux)), "aux pointer of kernel 'ffn2.grad_lhs'");
// CHECK: cublasLtMatmul(ctx->lt, ctx->lt_desc_1, &alpha, args->w2, ctx->lt_a_1, args->dy, ctx->lt_b_1, &beta, args->dh, ctx->lt_c_1, args->dh, ctx->lt_c_1,
sluice_exec.entry @train_backward {
  %w = sluice_exec.arg "w2"
  %dy = sluice_exec.arg "dy"
  %dh = sluice_exec.arg "dh"
  %pre = sluice_exec.arg "pre"
  %db = sluice_exec.arg "d_b1"
  sluice_exec.gemm %w * %dy -> %dh bias %db aux %pre {
      label = "kernel 'ffn2.grad_lhs'",
      trans_a = #sluice_exec.blas_op<t>, trans_b = #sluice_exec.blas_op<n>,
      m = 40, n = 64, k = 6, lda = 6, ldb = 6, ldc = 40,
      batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0,
      alpha = 1.0, a_type = f16, b_type = f16, c_type = f16,
      compute = #sluice_exec.compute<f32>,
      epilogue = #sluice_exec.epilogue<dgelu_bgrad>, descriptor = 1}
}
