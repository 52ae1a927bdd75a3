// The C++ printer's GEMM folds no library epilogue, and it launches no
// column_block schedule (CUDA's two-stage column reductions): an entry
// asking for either is an error at the op, and nothing is printed.
// RUN: sluice-translate --sluice-to-cpp --split-input-file --verify-diagnostics %s

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{has epilogue 'relu'; the C++ backend's GEMM folds none (lower it as a kernel)}}
  sluice_exec.gemm %x * %x -> %x {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 4, n = 4, k = 4, lda = 4, ldb = 4, ldc = 4, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<relu>, descriptor = 0}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{has a column_block schedule, which only the CUDA printer launches (two kernels and a workspace)}}
  sluice_exec.launch @k schedule <mode = column_block, reduction = block, grid = 1, threads = 256, vector = 1, elements_per_thread = 1, outer = ["u"], inner = ["i"], row_chunks = 4, rows = 8> (%x) -> (%x) {input_types = [f32], output_types = [f32], clear_bytes = array<i64: 0>, label = "k"}
}
