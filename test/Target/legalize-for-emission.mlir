// --sluice-legalize-for-emission: args fields become C identifiers, every
// GEMM gets its cuBLASLt descriptor slot in module order (across entries),
// and the printers then accept the IR: cuBLASLt for every GEMM, with
// cuBLAS as the fallback of the one without an epilogue.
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
