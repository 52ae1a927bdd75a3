// CUDA tiles (warps, a padded head dim) printed for C++: an error at the
// op, nothing printed.
// RUN: sluice-translate --sluice-to-cpp --verify-diagnostics %s

sluice_exec.entry @e {
  %x = sluice_exec.arg "x"
  // expected-error @+1 {{has tiles the C++ kernels do not take (one thread; key_rows = key_tile, query_tile = query_rows)}}
  sluice_exec.attention (%x, %x, %x) -> (%x) {label = "k", element = f16, batch = array<i64>, m = 4, n = 4, d = 4, e = 4, strides = [array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>], counter = array<i64: 4, 1>, scale = 1.0, causal = false, dropout = 0.0, stream = 0, tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64, key_rows = 64, query_tile = 32, head_dim = 64, threads = 128>}
}
