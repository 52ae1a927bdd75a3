// --sluice-legalize-for-emission: args fields become C identifiers, every
// GEMM gets its cuBLASLt descriptor slot in module order (across entries),
// and the printers then accept the IR: cuBLASLt for every GEMM, with
// cuBLAS as the fallback of the one without an epilogue (and a GEMM's
// fallback region as the fallback of one with, below).
// RUN: sluice-opt %s --sluice-legalize-for-emission -split-input-file -verify-diagnostics | FileCheck %s
// RUN: sluice-opt %s --sluice-legalize-for-emission -split-input-file -verify-diagnostics | sluice-translate --sluice-to-cuda --split-input-file | FileCheck %s --check-prefix=CUDA

// CHECK-LABEL: sluice_exec.entry @m_forward
// CHECK: sluice_exec.arg "ln1_bias"
// CHECK: sluice_exec.arg "x"
// CHECK: sluice_exec.arg "_1st"
// CHECK: sluice_exec.gemm {{.*}}descriptor = 0 : i64, epilogue = #sluice_exec.epilogue<relu>
// CHECK: sluice_exec.gemm {{.*}}descriptor = 1 : i64, epilogue = #sluice_exec.epilogue<none>
// CHECK-LABEL: sluice_exec.entry @m_backward
// CHECK: sluice_exec.gemm {{.*}}descriptor = 2 : i64, epilogue = #sluice_exec.epilogue<bias>
// CUDA: cublasLtMatmulDesc_t lt_desc_0;
// CUDA: cublasLtMatmulDesc_t lt_desc_1;
// CUDA: cublasLtMatmulDesc_t lt_desc_2;
// CUDA-LABEL: /* entry m_forward */
// CUDA: cublasLtMatmul(ctx->lt, ctx->lt_desc_0, &alpha, args->ln1_bias, ctx->lt_a_0, args->x, ctx->lt_b_0, &beta, args->_1st,
// The plain GEMM: cuBLASLt under the cached algorithm, cuBLAS where it does
// not apply.
// CUDA: // k1: C[4 x 4]
// CUDA: if (ctx->lt_algo_found_1 && sluice_aligned16(args->ln1_bias) && sluice_aligned16(args->x) && sluice_aligned16(args->_1st)) {
// CUDA-NEXT: SLUICE_CHECK_CUBLAS(cublasLtMatmul(ctx->lt, ctx->lt_desc_1, &alpha, args->ln1_bias, ctx->lt_a_1, args->x, ctx->lt_b_1, &beta, args->_1st, ctx->lt_c_1, args->_1st, ctx->lt_c_1, &ctx->lt_algo_1, ctx->workspace, ctx->workspace_bytes, stream), "cublasLtMatmul of k1");
// CUDA-NEXT: } else {
// CUDA-NEXT: SLUICE_CHECK_CUBLAS(cublasSetStream(ctx->blas, stream), "cublasSetStream");
// CUDA-NEXT: SLUICE_CHECK_CUBLAS(cublasGemmStridedBatchedEx(ctx->blas, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &alpha, args->ln1_bias, CUDA_R_32F, 4, 0LL, args->x, CUDA_R_32F, 4, 0LL, &beta, args->_1st, CUDA_R_32F, 4, 0LL, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT), "cublasGemmStridedBatchedEx of k1");
// CUDA-NEXT: }
// CUDA-NEXT: }
// CUDA-LABEL: /* entry m_backward */
// CUDA: const void *bias = args->ln1_bias;
sluice_exec.entry @m_forward {
  %a = sluice_exec.arg "ln1.bias"
  %x = sluice_exec.arg "x"
  %c = sluice_exec.arg "1st"
  sluice_exec.gemm %a * %x -> %c {label = "k0", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 4, n = 4, k = 4, lda = 4, ldb = 4, ldc = 4, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<relu>}
  sluice_exec.gemm %a * %x -> %c {label = "k1", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 4, n = 4, k = 4, lda = 4, ldb = 4, ldc = 4, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<none>}
}
sluice_exec.entry @m_backward {
  %a = sluice_exec.arg "ln1.bias"
  %x = sluice_exec.arg "x"
  %c = sluice_exec.arena 256
  sluice_exec.gemm %x * %x -> %c bias %a {label = "k2", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 4, n = 4, k = 4, lda = 4, ldb = 4, ldc = 4, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<bias>}
}

// -----

// A GEMM with a fallback region: the GEMMs of fallback regions are numbered
// after all the others (the outer GEMMs keep the slots they have without
// one). This one accumulates (beta 1): C holds the accumulator, so a refused
// call is an error, not a retry; the fallback runs where create found no
// algorithm (or SLUICE_LT_NO_EPILOGUE is set) or a pointer is not aligned.
// CHECK-LABEL: sluice_exec.entry @acc_backward
// CHECK: sluice_exec.gemm {{.*}}descriptor = 0 : i64, epilogue = #sluice_exec.epilogue<bgradb>{{.*}} fallback {
// CHECK-NEXT: sluice_exec.gemm {{.*}}descriptor = 2 : i64, epilogue = #sluice_exec.epilogue<none>
// CHECK-NEXT: sluice_exec.launch @k0_bgrad
// CHECK: sluice_exec.gemm {{.*}}descriptor = 1 : i64, epilogue = #sluice_exec.epilogue<none>
// CUDA-LABEL: /* create */
// CUDA: if (ctx->lt_algo_found_0) ctx->lt_algo_0 = result.algo;
// CUDA-NEXT: if (sluice_env_flag("SLUICE_LT_NO_EPILOGUE")) ctx->lt_algo_found_0 = 0;
// CUDA: if (ctx->lt_algo_found_2) ctx->lt_algo_2 = result.algo;
// CUDA-NEXT: }
// CUDA: if (ctx->lt_algo_found_1) ctx->lt_algo_1 = result.algo;
// CUDA-NEXT: }
// CUDA-LABEL: /* entry acc_backward */
// CUDA: // k0: C[4 x 4] = 1.000000e+00 * op(A)[4 x 4] op(B) + C, batch 1
// CUDA: const float beta = 1.0f;
// CUDA: cublasStatus_t lt_status = CUBLAS_STATUS_NOT_SUPPORTED;
// CUDA-NEXT: if (ctx->lt_algo_found_0 && sluice_aligned16(args->x) && sluice_aligned16(args->dy) && sluice_aligned16(args->dw) && sluice_aligned16(bias)) {
// CUDA-NEXT: SLUICE_CHECK_CUBLAS(cublasLtMatmul(ctx->lt, ctx->lt_desc_0, &alpha, args->x, ctx->lt_a_0, args->dy, ctx->lt_b_0, &beta, args->dw, ctx->lt_c_0, args->dw, ctx->lt_c_0, &ctx->lt_algo_0, ctx->workspace, ctx->workspace_bytes, stream), "cublasLtMatmul of k0");
// CUDA-NEXT: lt_status = CUBLAS_STATUS_SUCCESS;
// CUDA-NEXT: }
// CUDA-NEXT: if (lt_status != CUBLAS_STATUS_SUCCESS) {
// CUDA-NEXT: // fallback: the GEMM without the epilogue, then the epilogue as generated kernels
// CUDA-NEXT: // k0: C[4 x 4] = 1.000000e+00 * op(A)[4 x 4] op(B) + C, batch 1
// CUDA: if (ctx->lt_algo_found_2 && sluice_aligned16(args->x) && sluice_aligned16(args->dy) && sluice_aligned16(args->dw)) {
// CUDA: cublasGemmStridedBatchedEx(ctx->blas, CUBLAS_OP_N, CUBLAS_OP_T, 4, 4, 4, &alpha, args->x, CUDA_R_32F, 4, 0LL, args->dy, CUDA_R_32F, 4, 0LL, &beta, args->dw,
// CUDA: // k0 bgrad
// CUDA-NEXT: k0_bgrad<<<1, 32, 0, stream>>>((const float *)(args->dy), (float *)(args->db), args->seed);
// CUDA-NEXT: SLUICE_CHECK_LAUNCH("k0 bgrad");
// CUDA-NEXT: }
// CUDA-NEXT: }
// CUDA-NEXT: // k1: C[4 x 4]
sluice_exec.entry @acc_backward {
  %x = sluice_exec.arg "x"
  %dy = sluice_exec.arg "dy"
  %dw = sluice_exec.arg "dw"
  %db = sluice_exec.arg "db"
  sluice_exec.gemm %x * %dy -> %dw bias %db {label = "k0", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<t>, m = 4, n = 4, k = 4, lda = 4, ldb = 4, ldc = 4, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, beta = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<bgradb>} fallback {
    sluice_exec.gemm %x * %dy -> %dw {label = "k0", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<t>, m = 4, n = 4, k = 4, lda = 4, ldb = 4, ldc = 4, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, beta = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<none>}
    sluice_exec.launch @k0_bgrad schedule <mode = row_block, reduction = warp, grid = 1, threads = 32, vector = 1, elements_per_thread = 1, outer = ["u"], inner = ["j"]> (%dy) -> (%db) {input_types = [f32], output_types = [f32], clear_bytes = array<i64: 0>, label = "k0 bgrad"}
  }
  sluice_exec.gemm %x * %dy -> %dw {label = "k1", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 4, n = 4, k = 4, lda = 4, ldb = 4, ldc = 4, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<none>}
}

// -----

sluice_exec.entry @clash {
  %a = sluice_exec.arg "ln1.bias"
  // expected-error @+1 {{tensors 'ln1.bias' and 'ln1_bias' would both be field 'ln1_bias' of the args struct}}
  %b = sluice_exec.arg "ln1_bias"
}

// -----

sluice_exec.entry @misaligned {
  // expected-error @+1 {{offset 100 is not a multiple of 16 bytes (one vector access)}}
  %a = sluice_exec.arena 100
}

// -----

sluice_exec.entry @misaligned_saved {
  // expected-error @+1 {{offset 264 is not a multiple of 16 bytes (one vector access)}}
  %a = sluice_exec.saved 264
}
