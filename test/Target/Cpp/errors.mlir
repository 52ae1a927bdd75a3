// The C++ printer's GEMM folds no library epilogue: an entry asking for
// one is an error at the op, and nothing is printed.
// RUN: sluice-translate --sluice-to-cpp --verify-diagnostics %s

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{has epilogue 'relu'; the C++ backend's GEMM folds none (lower it as a kernel)}}
  sluice_exec.gemm %x * %x -> %x {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 4, n = 4, k = 4, lda = 4, ldb = 4, ldc = 4, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<relu>, descriptor = 0}
}
