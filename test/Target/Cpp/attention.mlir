// A streaming attention printed as portable C++: the args struct of
// sluice_stream.h filled from the op (sizes, scale, mask, dropout, counter
// strides, every pointer with its strides), then the C++ runtime kernel
// with the op's tiles.
// RUN: sluice-translate --sluice-to-cpp %s | FileCheck %s

// CHECK-LABEL: /* entry attn_forward */
// CHECK:      // kernel 'attn': streaming attention, forward
// CHECK-NEXT: {
// CHECK-NEXT:   sluice_stream_fwd_args a;
// CHECK-NEXT:   memset(&a, 0, sizeof(a));
// CHECK-NEXT:   a.p.batch_rank = 2;
// CHECK-NEXT:   a.p.batch[0] = 2LL;
// CHECK-NEXT:   a.p.batch[1] = 4LL;
// CHECK-NEXT:   a.p.m = 7LL;
// CHECK-NEXT:   a.p.n = 9LL;
// CHECK-NEXT:   a.p.d = 16LL;
// CHECK-NEXT:   a.p.e = 8LL;
// CHECK-NEXT:   a.p.scale = 0x1p-2f;
// CHECK-NEXT:   a.p.causal = 1;
// CHECK-NEXT:   a.p.dropout_p = 0x1.999999999999ap-4;
// CHECK-NEXT:   a.p.seed = args->seed;
// CHECK-NEXT:   a.p.stream = 3ULL;
// CHECK-NEXT:   a.p.counter_batch[0] = 252LL;
// CHECK-NEXT:   a.p.counter_batch[1] = 63LL;
// CHECK-NEXT:   a.p.counter_row = 9LL;
// CHECK-NEXT:   a.p.counter_col = 1LL;
// CHECK-NEXT:   a.q.data = (void *)(args->q);
// CHECK-NEXT:   a.q.batch_stride[0] = 448LL;
// CHECK-NEXT:   a.q.batch_stride[1] = 16LL;
// CHECK-NEXT:   a.q.row_stride = 64LL;
// CHECK-NEXT:   a.q.col_stride = 1LL;
// CHECK:        a.o.data = (void *)((ctx->arena + 256ULL));
// CHECK:        a.lse.data = (void *)((ctx->arena + 1024ULL));
// CHECK-NEXT:   a.lse.batch_stride[0] = 28LL;
// CHECK-NEXT:   a.lse.batch_stride[1] = 7LL;
// CHECK-NEXT:   a.lse.row_stride = 1LL;
// CHECK-NEXT:   a.lse.col_stride = 0LL;
// CHECK-NEXT:   sluice_stream_attention_fwd_cpu<sluice_f16, 64, 32>(a);
// CHECK-NEXT: }
sluice_exec.entry @attn_forward {
  %q = sluice_exec.arg "q"
  %k = sluice_exec.arg "k"
  %v = sluice_exec.arg "v"
  %o = sluice_exec.arena 256
  %lse = sluice_exec.arena 1024
  sluice_exec.attention (%q, %k, %v) -> (%o, %lse) {label = "kernel 'attn'",
      element = f16, batch = array<i64: 2, 4>, m = 7, n = 9, d = 16, e = 8,
      strides = [array<i64: 448, 16, 64, 1>, array<i64: 576, 144, 16, 1>,
                 array<i64: 288, 72, 8, 1>, array<i64: 224, 8, 32, 1>,
                 array<i64: 28, 7, 1, 0>],
      counter = array<i64: 252, 63, 9, 1>, scale = 0.25, causal = true,
      dropout = 0.1, stream = 3,
      tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 32,
          key_rows = 32, query_tile = 64, head_dim = 0, threads = 1>}
}

// CHECK-LABEL: /* entry attn_backward */
// CHECK:      // kernel 'attn grad': streaming attention, backward
// CHECK-NEXT: {
// CHECK-NEXT:   sluice_stream_bwd_args a;
// CHECK:        a.p.batch_rank = 0;
// CHECK-NEXT:   a.p.m = 5LL;
// CHECK:        a.p.causal = 0;
// CHECK-NEXT:   a.p.dropout_p = 0x0p+0;
// CHECK:        a.p.counter_row = 5LL;
// CHECK-NEXT:   a.p.counter_col = 1LL;
// CHECK-NEXT:   a.q.data = (void *)(args->q);
// CHECK-NEXT:   a.q.row_stride = 4LL;
// CHECK-NEXT:   a.q.col_stride = 1LL;
// CHECK:        a.d_o.data = (void *)(args->dy);
// CHECK:        a.lse.data = (void *)((ctx->arena + 0ULL));
// CHECK:        a.d.data = (void *)((ctx->arena + 64ULL));
// CHECK:        a.dq.data = (void *)(args->d_q);
// CHECK:        a.dk.data = (void *)(args->d_k);
// CHECK:        a.dv.data = (void *)(args->d_v);
// CHECK-NEXT:   a.dv.row_stride = 4LL;
// CHECK-NEXT:   a.dv.col_stride = 1LL;
// CHECK-NEXT:   sluice_stream_attention_bwd_cpu<float, 16, 16>(a);
// CHECK-NEXT: }
sluice_exec.entry @attn_backward {
  %q = sluice_exec.arg "q"
  %k = sluice_exec.arg "k"
  %v = sluice_exec.arg "v"
  %dy = sluice_exec.arg "dy"
  %lse = sluice_exec.arena 0
  %d = sluice_exec.arena 64
  %dq = sluice_exec.arg "d_q"
  %dk = sluice_exec.arg "d_k"
  %dv = sluice_exec.arg "d_v"
  sluice_exec.attention (%q, %k, %v, %dy, %lse, %d) -> (%dq, %dk, %dv) {
      backward, label = "kernel 'attn grad'", element = f32,
      batch = array<i64>, m = 5, n = 5, d = 4, e = 4,
      strides = [array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>,
                 array<i64: 4, 1>, array<i64: 1, 0>, array<i64: 1, 0>,
                 array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>],
      counter = array<i64: 5, 1>, scale = 0.5, causal = false,
      dropout = 0.0, stream = 0,
      tiles = #sluice_exec.stream_tiles<query_rows = 16, key_tile = 16,
          key_rows = 16, query_tile = 16, head_dim = 0, threads = 1>}
}

// With row_dot_from_o the sixth pointer is O, with dO's strides roles: the
// kernels compute D = rowsum(dO * O) themselves (no a.d).
// CHECK-LABEL: /* entry attn_backward_from_o */
// CHECK:        a.d_o.data = (void *)(args->dy);
// CHECK:        a.lse.data = (void *)((ctx->arena + 0ULL));
// CHECK-NEXT:   a.lse.row_stride = 1LL;
// CHECK-NEXT:   a.lse.col_stride = 0LL;
// CHECK-NEXT:   a.o.data = (void *)(args->y);
// CHECK-NEXT:   a.o.row_stride = 1LL;
// CHECK-NEXT:   a.o.col_stride = 5LL;
// CHECK-NEXT:   a.dq.data = (void *)(args->d_q);
// CHECK-NOT:    a.d.data
// CHECK:        sluice_stream_attention_bwd_cpu<float, 16, 16>(a);
sluice_exec.entry @attn_backward_from_o {
  %q = sluice_exec.arg "q"
  %k = sluice_exec.arg "k"
  %v = sluice_exec.arg "v"
  %dy = sluice_exec.arg "dy"
  %lse = sluice_exec.arena 0
  %y = sluice_exec.arg "y"
  %dq = sluice_exec.arg "d_q"
  %dk = sluice_exec.arg "d_k"
  %dv = sluice_exec.arg "d_v"
  sluice_exec.attention (%q, %k, %v, %dy, %lse, %y) -> (%dq, %dk, %dv) {
      backward, row_dot_from_o, label = "kernel 'attn grad'", element = f32,
      batch = array<i64>, m = 5, n = 5, d = 4, e = 4,
      strides = [array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>,
                 array<i64: 4, 1>, array<i64: 1, 0>, array<i64: 1, 5>,
                 array<i64: 4, 1>, array<i64: 4, 1>, array<i64: 4, 1>],
      counter = array<i64: 5, 1>, scale = 0.5, causal = false,
      dropout = 0.0, stream = 0,
      tiles = #sluice_exec.stream_tiles<query_rows = 16, key_tile = 16,
          key_rows = 16, query_tile = 16, head_dim = 0, threads = 1>}
}
