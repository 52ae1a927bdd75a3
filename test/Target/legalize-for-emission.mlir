// --sluice-legalize-for-emission: args fields become C identifiers, GEMMs
// with a library epilogue get their cuBLASLt descriptor slots in module
// order (across entries), and the printers then accept the IR.
// RUN: sluice-opt %s --sluice-legalize-for-emission -split-input-file -verify-diagnostics | FileCheck %s
// RUN: sluice-opt %s --sluice-legalize-for-emission -split-input-file -verify-diagnostics | sluice-translate --sluice-to-cuda --split-input-file | FileCheck %s --check-prefix=CUDA

// CHECK-LABEL: sluice_exec.entry @m_forward
// CHECK: sluice_exec.arg "ln1_bias"
// CHECK: sluice_exec.arg "x"
// CHECK: sluice_exec.arg "_1st"
// CHECK: sluice_exec.gemm {{.*}}descriptor = 0 : i64, epilogue = #sluice_exec.epilogue<relu>
// CHECK: sluice_exec.gemm
// CHECK-NOT: descriptor
// CHECK-SAME: epilogue = #sluice_exec.epilogue<none>
// CHECK-LABEL: sluice_exec.entry @m_backward
// CHECK: sluice_exec.gemm {{.*}}descriptor = 1 : i64, epilogue = #sluice_exec.epilogue<bias>
// CUDA: cublasLtMatmulDesc_t lt_desc_0;
// CUDA: cublasLtMatmulDesc_t lt_desc_1;
// CUDA-LABEL: /* entry m_forward */
// CUDA: cublasLtMatmul(ctx->lt, ctx->lt_desc_0, &alpha, args->ln1_bias, ctx->lt_a_0, args->x, ctx->lt_b_0, &beta, args->_1st,
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
