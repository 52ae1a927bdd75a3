// What the sluice_exec verifiers and printers reject, so that a printer
// never prints a call the library would refuse.
// RUN: sluice-translate --sluice-to-cuda --split-input-file --verify-diagnostics %s

sluice_exec.entry @e {
  // expected-error @+1 {{field 'x-1' is not a C identifier (run --sluice-legalize-for-emission)}}
  %x = sluice_exec.arg "x-1"
  sluice_exec.copy %x -> %x bytes 4
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{lda = 39 is outside [40, 2147483647] (the 32-bit BLAS interface)}}
  sluice_exec.gemm %x * %x -> %x {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 40, n = 16, k = 6, lda = 39, ldb = 6, ldc = 40, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<none>}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{m = 4294967296 is outside [1, 2147483647] (the 32-bit BLAS interface)}}
  sluice_exec.gemm %x * %x -> %x {label = "k", trans_a = #sluice_exec.blas_op<t>, trans_b = #sluice_exec.blas_op<n>, m = 4294967296, n = 16, k = 6, lda = 6, ldb = 6, ldc = 4294967296, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<none>}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{a_type is 'f64'; the BLAS calls take f32, f16 or bf16}}
  sluice_exec.gemm %x * %x -> %x {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 4, n = 4, k = 4, lda = 4, ldb = 4, ldc = 4, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f64, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<none>}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{epilogue 'bias_relu' needs a bias operand}}
  sluice_exec.gemm %x * %x -> %x {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 4, n = 4, k = 4, lda = 4, ldb = 4, ldc = 4, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<bias_relu>, descriptor = 0}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{epilogue 'bias_gelu_aux' needs an aux operand}}
  sluice_exec.gemm %x * %x -> %x bias %x {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 8, n = 8, k = 8, lda = 8, ldb = 8, ldc = 8, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<bias_gelu_aux>, descriptor = 0}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{epilogue 'bias_gelu' takes no aux operand}}
  sluice_exec.gemm %x * %x -> %x bias %x aux %x {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 8, n = 8, k = 8, lda = 8, ldb = 8, ldc = 8, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<bias_gelu>, descriptor = 0}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{aux matrix needs ldc (12) and stride_c (0) divisible by 8}}
  sluice_exec.gemm %x * %x -> %x bias %x aux %x {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 12, n = 8, k = 8, lda = 12, ldb = 8, ldc = 12, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<bias_gelu_aux>, descriptor = 0}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{epilogue 'relu' takes no bias operand}}
  sluice_exec.gemm %x * %x -> %x bias %x {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 4, n = 4, k = 4, lda = 4, ldb = 4, ldc = 4, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<relu>, descriptor = 0}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{has epilogue 'gelu' but no cuBLASLt descriptor slot (run --sluice-legalize-for-emission)}}
  sluice_exec.gemm %x * %x -> %x {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 4, n = 4, k = 4, lda = 4, ldb = 4, ldc = 4, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<gelu>}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{label holds a quote, backslash, '%' or newline}}
  sluice_exec.gemm %x * %x -> %x {label = "k \"1\"", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 4, n = 4, k = 4, lda = 4, ldb = 4, ldc = 4, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<none>}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{has 1 inputs and 1 outputs but 2 and 1 element types}}
  sluice_exec.launch @k schedule <mode = elementwise, reduction = none, grid = 1, threads = 32, vector = 1, elements_per_thread = 1, outer = [], inner = ["i"]> (%x) -> (%x) {input_types = [f32, f32], output_types = [f32], clear_bytes = array<i64: 0>, label = "k"}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{element type 'f64' is not f32, f16, bf16 or i1 (a packed mask)}}
  sluice_exec.launch @k schedule <mode = elementwise, reduction = none, grid = 1, threads = 32, vector = 1, elements_per_thread = 1, outer = [], inner = ["i"]> (%x) -> (%x) {input_types = [f64], output_types = [f32], clear_bytes = array<i64: 0>, label = "k"}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{output #0 clears 0 bytes; a packed (i1) output clears its whole 32-bit words, any other output nothing}}
  sluice_exec.launch @k schedule <mode = elementwise, reduction = none, grid = 1, threads = 32, vector = 1, elements_per_thread = 1, outer = [], inner = ["i"]> (%x) -> (%x) {input_types = [f32], output_types = [i1], clear_bytes = array<i64: 0>, label = "k"}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{output #0 clears 6 bytes; a packed (i1) output clears its whole 32-bit words, any other output nothing}}
  sluice_exec.launch @k schedule <mode = elementwise, reduction = none, grid = 1, threads = 32, vector = 1, elements_per_thread = 1, outer = [], inner = ["i"]> (%x) -> (%x) {input_types = [f32], output_types = [i1], clear_bytes = array<i64: 6>, label = "k"}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{schedule threads = 0 is not positive}}
  sluice_exec.launch @k schedule <mode = elementwise, reduction = none, grid = 1, threads = 0, vector = 1, elements_per_thread = 1, outer = [], inner = ["i"]> (%x) -> (%x) {input_types = [f32], output_types = [f32], clear_bytes = array<i64: 0>, label = "k"}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{schedule elements_per_thread = 6 is not a multiple of vector = 4}}
  sluice_exec.launch @k schedule <mode = row_block, reduction = warp, grid = 1, threads = 32, vector = 4, elements_per_thread = 6, outer = ["j"], inner = ["i"]> (%x) -> (%x) {input_types = [f32], output_types = [f32], clear_bytes = array<i64: 0>, label = "k"}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{an elementwise schedule has no outer dims and no reduction}}
  sluice_exec.launch @k schedule <mode = elementwise, reduction = block, grid = 1, threads = 32, vector = 1, elements_per_thread = 1, outer = [], inner = ["i"]> (%x) -> (%x) {input_types = [f32], output_types = [f32], clear_bytes = array<i64: 0>, label = "k"}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{a column_block schedule has row_chunks >= 1 and rows >= 1 dividing threads; got row_chunks = 4, rows = 3, threads = 256}}
  sluice_exec.launch @k schedule <mode = column_block, reduction = block, grid = 1, threads = 256, vector = 1, elements_per_thread = 1, outer = ["u"], inner = ["i"], row_chunks = 4, rows = 3> (%x) -> (%x) {input_types = [f32], output_types = [f32], clear_bytes = array<i64: 0>, label = "k"}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{a row_block schedule has no rows (its row_chunks, if any, are chunks of outer points)}}
  sluice_exec.launch @k schedule <mode = row_block, reduction = warp, grid = 1, threads = 32, vector = 1, elements_per_thread = 1, outer = ["j"], inner = ["i"], rows = 8> (%x) -> (%x) {input_types = [f32], output_types = [f32], clear_bytes = array<i64: 0>, label = "k"}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{epilogue 'dgelu_bgrad' needs a bias operand}}
  sluice_exec.gemm %x * %x -> %x aux %x {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 8, n = 8, k = 8, lda = 8, ldb = 8, ldc = 8, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<dgelu_bgrad>, descriptor = 0}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{a row_block schedule with column reductions runs one block per row chunk; got row_chunks = 4, grid = 8}}
  sluice_exec.launch @k schedule <mode = row_block, reduction = warp, grid = 8, threads = 32, vector = 1, elements_per_thread = 1, outer = ["j"], inner = ["i"], row_chunks = 4> (%x) -> (%x) {input_types = [f32], output_types = [f32], clear_bytes = array<i64: 0>, label = "k"}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{an elementwise schedule has no row_chunks and no rows}}
  sluice_exec.launch @k schedule <mode = elementwise, reduction = none, grid = 8, threads = 32, vector = 1, elements_per_thread = 1, outer = [], inner = ["i"], row_chunks = 4> (%x) -> (%x) {input_types = [f32], output_types = [f32], clear_bytes = array<i64: 0>, label = "k"}
}

// A GEMM's fallback region (what runs where cuBLASLt refuses the epilogue):
// pointer ops, one plain GEMM computing the same product, then the launches
// of the epilogue's kernels.
// -----

sluice_exec.entry @e {
  %a = sluice_exec.arg "a"
  %b = sluice_exec.arg "b"
  %c = sluice_exec.arg "c"
  // expected-error @+1 {{has a fallback but no epilogue (a GEMM without one needs none)}}
  sluice_exec.gemm %a * %a -> %c {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 8, n = 8, k = 8, lda = 8, ldb = 8, ldc = 8, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<none>} fallback {
    sluice_exec.gemm %a * %a -> %c {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 8, n = 8, k = 8, lda = 8, ldb = 8, ldc = 8, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<none>}
    sluice_exec.launch @k_epilogue schedule <mode = elementwise, reduction = none, grid = 1, threads = 32, vector = 1, elements_per_thread = 1, outer = [], inner = ["i"]> (%c, %b) -> (%c) {input_types = [f32, f32], output_types = [f32], clear_bytes = array<i64: 0>, label = "k epilogue"}
  }
}

// -----

sluice_exec.entry @e {
  %a = sluice_exec.arg "a"
  %b = sluice_exec.arg "b"
  %c = sluice_exec.arg "c"
  // expected-error @+1 {{fallback needs a plain GEMM and at least one launch after it}}
  sluice_exec.gemm %a * %a -> %c bias %b {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 8, n = 8, k = 8, lda = 8, ldb = 8, ldc = 8, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<bias>} fallback {
    sluice_exec.gemm %a * %a -> %c {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 8, n = 8, k = 8, lda = 8, ldb = 8, ldc = 8, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<none>}
  }
}

// -----

sluice_exec.entry @e {
  %a = sluice_exec.arg "a"
  %b = sluice_exec.arg "b"
  %c = sluice_exec.arg "c"
  // expected-error @+1 {{fallback holds a second GEMM or a GEMM after its launches; it runs one plain GEMM first}}
  sluice_exec.gemm %a * %a -> %c bias %b {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 8, n = 8, k = 8, lda = 8, ldb = 8, ldc = 8, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<bias>} fallback {
    sluice_exec.gemm %a * %a -> %c {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 8, n = 8, k = 8, lda = 8, ldb = 8, ldc = 8, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<none>}
    sluice_exec.launch @k_epilogue schedule <mode = elementwise, reduction = none, grid = 1, threads = 32, vector = 1, elements_per_thread = 1, outer = [], inner = ["i"]> (%c, %b) -> (%c) {input_types = [f32, f32], output_types = [f32], clear_bytes = array<i64: 0>, label = "k epilogue"}
    sluice_exec.gemm %a * %a -> %c {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 8, n = 8, k = 8, lda = 8, ldb = 8, ldc = 8, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<none>}
  }
}

// -----

sluice_exec.entry @e {
  %a = sluice_exec.arg "a"
  %b = sluice_exec.arg "b"
  %c = sluice_exec.arg "c"
  // expected-error @+1 {{fallback holds 'sluice_exec.copy'; it holds pointer ops, one plain GEMM, then the launches of the epilogue's kernels}}
  sluice_exec.gemm %a * %a -> %c bias %b {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 8, n = 8, k = 8, lda = 8, ldb = 8, ldc = 8, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<bias>} fallback {
    sluice_exec.gemm %a * %a -> %c {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 8, n = 8, k = 8, lda = 8, ldb = 8, ldc = 8, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<none>}
    sluice_exec.copy %a -> %c bytes 4
    sluice_exec.launch @k_epilogue schedule <mode = elementwise, reduction = none, grid = 1, threads = 32, vector = 1, elements_per_thread = 1, outer = [], inner = ["i"]> (%c, %b) -> (%c) {input_types = [f32, f32], output_types = [f32], clear_bytes = array<i64: 0>, label = "k epilogue"}
  }
}

// -----

sluice_exec.entry @e {
  %a = sluice_exec.arg "a"
  %b = sluice_exec.arg "b"
  %c = sluice_exec.arg "c"
  // expected-error @+1 {{fallback GEMM has an epilogue or a fallback; it runs without the library epilogue}}
  sluice_exec.gemm %a * %a -> %c bias %b {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 8, n = 8, k = 8, lda = 8, ldb = 8, ldc = 8, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<bias>} fallback {
    sluice_exec.gemm %a * %a -> %c {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 8, n = 8, k = 8, lda = 8, ldb = 8, ldc = 8, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<relu>}
    sluice_exec.launch @k_epilogue schedule <mode = elementwise, reduction = none, grid = 1, threads = 32, vector = 1, elements_per_thread = 1, outer = [], inner = ["i"]> (%c, %b) -> (%c) {input_types = [f32, f32], output_types = [f32], clear_bytes = array<i64: 0>, label = "k epilogue"}
  }
}

// -----

sluice_exec.entry @e {
  %a = sluice_exec.arg "a"
  %b = sluice_exec.arg "b"
  %c = sluice_exec.arg "c"
  // expected-error @+1 {{fallback GEMM differs in its BLAS parameters; it computes the same product (only C may differ)}}
  sluice_exec.gemm %a * %a -> %c bias %b {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 8, n = 8, k = 8, lda = 8, ldb = 8, ldc = 8, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<bias>} fallback {
    sluice_exec.gemm %b * %a -> %c {label = "k", trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<n>, m = 8, n = 8, k = 8, lda = 8, ldb = 8, ldc = 8, batch_count = 1, stride_a = 0, stride_b = 0, stride_c = 0, alpha = 1.0, a_type = f32, b_type = f32, c_type = f32, compute = #sluice_exec.compute<f32>, epilogue = #sluice_exec.epilogue<none>}
    sluice_exec.launch @k_epilogue schedule <mode = elementwise, reduction = none, grid = 1, threads = 32, vector = 1, elements_per_thread = 1, outer = [], inner = ["i"]> (%c, %b) -> (%c) {input_types = [f32, f32], output_types = [f32], clear_bytes = array<i64: 0>, label = "k epilogue"}
  }
}
