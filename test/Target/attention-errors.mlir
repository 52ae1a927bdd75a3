// What the sluice_exec.attention verifier and printers reject: operand
// counts of the direction, stride vectors, batch rank, sizes, dropout,
// tiles, and tiles the target's kernels do not take.
// RUN: sluice-translate --sluice-to-cuda --split-input-file --verify-diagnostics %s

#tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64, key_rows = 64, query_tile = 32, head_dim = 64, threads = 128>
sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{has 2 inputs and 1 outputs; a forward attention takes (q, k, v) -> (o) or (o, lse)}}
  sluice_exec.attention (%x, %x) -> (%x) {label = "k", element = f16, batch = array<i64>, m = 4, n = 4, d = 4, e = 4, strides = [array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>], counter = array<i64: 4, 1>, scale = 1.0, causal = false, dropout = 0.0, stream = 0, tiles = #tiles}
}

// -----

#tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64, key_rows = 64, query_tile = 32, head_dim = 64, threads = 128>
sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{has 3 inputs and 3 outputs; a backward attention takes (q, k, v, d_o, lse, d) -> (dq, dk, dv)}}
  sluice_exec.attention (%x, %x, %x) -> (%x, %x, %x) {backward, label = "k", element = f16, batch = array<i64>, m = 4, n = 4, d = 4, e = 4, strides = [], counter = array<i64: 4, 1>, scale = 1.0, causal = false, dropout = 0.0, stream = 0, tiles = #tiles}
}

// -----

#tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64, key_rows = 64, query_tile = 32, head_dim = 64, threads = 128>
sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{stride vector #1 is not 3 non-negative integers (batch..., row, column)}}
  sluice_exec.attention (%x, %x, %x) -> (%x) {label = "k", element = f16, batch = array<i64: 2>, m = 4, n = 4, d = 4, e = 4, strides = [array<i64: 16, 4, 1>, array<i64: 4, 1>, array<i64: 16, 4, 1>, array<i64: 16, 4, 1>], counter = array<i64: 16, 4, 1>, scale = 1.0, causal = false, dropout = 0.0, stream = 0, tiles = #tiles}
}

// -----

#tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64, key_rows = 64, query_tile = 32, head_dim = 64, threads = 128>
sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{has 5 batch dims; the runtime kernels take at most 4}}
  sluice_exec.attention (%x, %x, %x) -> (%x) {label = "k", element = f16, batch = array<i64: 1, 1, 1, 1, 1>, m = 4, n = 4, d = 4, e = 4, strides = [], counter = array<i64: 16, 4, 1>, scale = 1.0, causal = false, dropout = 0.0, stream = 0, tiles = #tiles}
}

// -----

#tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64, key_rows = 64, query_tile = 32, head_dim = 64, threads = 128>
sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{has 2 query-only batch dims of 1}}
  sluice_exec.attention (%x, %x, %x) -> (%x) {label = "k", element = f16, batch = array<i64: 2>, group = 2, m = 4, n = 4, d = 4, e = 4, strides = [array<i64: 16, 4, 1>, array<i64: 0, 4, 1>, array<i64: 0, 4, 1>, array<i64: 16, 4, 1>], counter = array<i64: 16, 4, 1>, scale = 1.0, causal = false, dropout = 0.0, stream = 0, tiles = #tiles}
}

// -----

// A query-only (group) batch dim: K, V, dK and dV must not vary along it.
#tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64, key_rows = 64, query_tile = 32, head_dim = 64, threads = 128>
sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{stride vector #8 (a key/value pointer) has stride 16 along query-only batch dim #1; expected 0}}
  sluice_exec.attention (%x, %x, %x, %x, %x, %x) -> (%x, %x, %x) {backward, label = "k", element = f16, batch = array<i64: 2, 3>, group = 1, m = 4, n = 4, d = 4, e = 4, strides = [array<i64: 48, 16, 4, 1>, array<i64: 16, 0, 4, 1>, array<i64: 16, 0, 4, 1>, array<i64: 48, 16, 4, 1>, array<i64: 12, 4, 1, 0>, array<i64: 12, 4, 1, 0>, array<i64: 48, 16, 4, 1>, array<i64: 16, 0, 4, 1>, array<i64: 48, 16, 4, 1>], counter = array<i64: 48, 16, 4, 1>, scale = 1.0, causal = false, dropout = 0.0, stream = 0, tiles = #tiles}
}

// -----

#tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64, key_rows = 64, query_tile = 32, head_dim = 64, threads = 128>
sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{dropout probability 1.000000e+00 is not in [0, 1)}}
  sluice_exec.attention (%x, %x, %x) -> (%x) {label = "k", element = f16, batch = array<i64>, m = 4, n = 4, d = 4, e = 4, strides = [array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>], counter = array<i64: 4, 1>, scale = 1.0, causal = false, dropout = 1.0, stream = 0, tiles = #tiles}
}

// -----

#tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64, key_rows = 64, query_tile = 32, head_dim = 64, threads = 128>
sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{element type 'f64' is not f32, f16 or bf16}}
  sluice_exec.attention (%x, %x, %x) -> (%x) {label = "k", element = f64, batch = array<i64>, m = 4, n = 4, d = 4, e = 4, strides = [array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>], counter = array<i64: 4, 1>, scale = 1.0, causal = false, dropout = 0.0, stream = 0, tiles = #tiles}
}

// -----

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{stream tiles head_dim = 20 is not 0 or a positive multiple of 16}}
  sluice_exec.attention (%x, %x, %x) -> (%x) {label = "k", element = f16, batch = array<i64>, m = 4, n = 4, d = 4, e = 4, strides = [array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>], counter = array<i64: 4, 1>, scale = 1.0, causal = false, dropout = 0.0, stream = 0, tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64, key_rows = 64, query_tile = 32, head_dim = 20, threads = 128>}
}

// -----

// The C++ tiles (one thread, no head dim) printed for CUDA.
sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{has tiles the CUDA kernels do not take (whole warps of 16 rows, tiles of whole 16-steps, d and e within head_dim)}}
  sluice_exec.attention (%x, %x, %x) -> (%x) {label = "k", element = f16, batch = array<i64>, m = 4, n = 4, d = 4, e = 4, strides = [array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>], counter = array<i64: 4, 1>, scale = 1.0, causal = false, dropout = 0.0, stream = 0, tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64, key_rows = 64, query_tile = 64, head_dim = 0, threads = 1>}
}

// -----

// A head dim wider than the tiles.
sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{has tiles the CUDA kernels do not take}}
  sluice_exec.attention (%x, %x, %x) -> (%x) {label = "k", element = f16, batch = array<i64>, m = 4, n = 4, d = 80, e = 4, strides = [array<i64: 80, 1>, array<i64: 80, 1>, array<i64: 4, 1>, array<i64: 4, 1>], counter = array<i64: 4, 1>, scale = 1.0, causal = false, dropout = 0.0, stream = 0, tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64, key_rows = 64, query_tile = 32, head_dim = 64, threads = 128>}
}

// -----

// Only the backward reads the row term, so only it can take O for it.
#tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64, key_rows = 64, query_tile = 32, head_dim = 64, threads = 128>
sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{has row_dot_from_o without backward (only the backward reads D)}}
  sluice_exec.attention (%x, %x, %x) -> (%x) {row_dot_from_o, label = "k", element = f16, batch = array<i64>, m = 4, n = 4, d = 4, e = 4, strides = [array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>], counter = array<i64: 4, 1>, scale = 1.0, causal = false, dropout = 0.0, stream = 0, tiles = #tiles}
}

// -----

// Offsets (slices of a stacked tensor): one per pointer, none negative.
#tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64, key_rows = 64, query_tile = 32, head_dim = 64, threads = 128>
sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{has offsets that are not 4 non-negative integers (one per pointer)}}
  sluice_exec.attention (%x, %x, %x) -> (%x) {label = "k", element = f16, batch = array<i64>, m = 4, n = 4, d = 4, e = 4, strides = [array<i64: 12, 1>, array<i64: 12, 1>, array<i64: 12, 1>, array<i64: 4, 1>], offsets = array<i64: 0, 4, 8>, counter = array<i64: 4, 1>, scale = 1.0, causal = false, dropout = 0.0, stream = 0, tiles = #tiles}
}

// -----

#tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64, key_rows = 64, query_tile = 32, head_dim = 64, threads = 128>
sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{has offsets that are not 4 non-negative integers (one per pointer)}}
  sluice_exec.attention (%x, %x, %x) -> (%x) {label = "k", element = f16, batch = array<i64>, m = 4, n = 4, d = 4, e = 4, strides = [array<i64: 12, 1>, array<i64: 12, 1>, array<i64: 12, 1>, array<i64: 4, 1>], offsets = array<i64: 0, 4, -8, 0>, counter = array<i64: 4, 1>, scale = 1.0, causal = false, dropout = 0.0, stream = 0, tiles = #tiles}
}
