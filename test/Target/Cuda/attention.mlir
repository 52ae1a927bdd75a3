// A streaming attention printed for CUDA: the same args struct as in C++
// (test/Target/Cpp/attention.mlir), then the CUDA runtime kernel with the
// op's tiles (warps, key tile, query tile for the backward, head dim) on
// the stream, its launch error checked.
// RUN: sluice-translate --sluice-to-cuda %s | FileCheck %s
// RUN: sluice-translate --sluice-to-cuda %s | FileCheck %s --check-prefix=CREATE

// At create, each op's shared memory against the device's per-block limit
// (a module for sm_80 runs on sm_86 GPUs, whose blocks get less):
// CREATE:      // kernel 'attn': the GPU must give a block its shared memory
// CREATE-NEXT: {
// CREATE-NEXT:   int device_ = 0, optin_ = 0;
// CREATE-NEXT:   SLUICE_CHECK_CUDA(cudaGetDevice(&device_), "cudaGetDevice");
// CREATE-NEXT:   SLUICE_CHECK_CUDA(cudaDeviceGetAttribute(&optin_, cudaDevAttrMaxSharedMemoryPerBlockOptin, device_), "cudaDeviceGetAttribute");
// CREATE-NEXT:   const int needed_ = sluice_stream_attention_fwd_cuda_smem<sluice_bf16, 8, 64, 64>();
// CREATE-NEXT:   if (needed_ > optin_)
// CREATE-NEXT:     return sluice_fail(ctx, SLUICE_ERROR_UNSUPPORTED, "%s: %s (streaming attention) needs %d bytes of shared memory per block and this GPU lets a block use %d: compile the module for this GPU's architecture (sluicec --cuda-arch)", phase, "kernel 'attn'", needed_, optin_);
// CREATE-NEXT: }
// CREATE:      const int needed_ = sluice_stream_attention_bwd_cuda_smem<sluice_f16, 4, 64, 16, 128>();
// CREATE:      /* entry attn_forward */

// CHECK-LABEL: /* entry attn_forward */
// CHECK:      // kernel 'attn': streaming attention, forward
// CHECK-NEXT: {
// CHECK-NEXT:   sluice_stream_fwd_args a;
// CHECK-NEXT:   memset(&a, 0, sizeof(a));
// CHECK-NEXT:   a.p.batch_rank = 1;
// CHECK-NEXT:   a.p.batch[0] = 8LL;
// CHECK:        a.p.seed = args->seed;
// CHECK:        a.o.data = (void *)(args->o);
// CHECK-NEXT:   a.o.batch_stride[0] = 4096LL;
// CHECK-NEXT:   a.o.row_stride = 64LL;
// CHECK-NEXT:   a.o.col_stride = 1LL;
// CHECK-NEXT:   SLUICE_CHECK_CUDA((sluice_stream_attention_fwd_cuda<sluice_bf16, 8, 64, 64>(a, stream)), "kernel 'attn'");
// CHECK-NEXT: }
sluice_exec.entry @attn_forward {
  %q = sluice_exec.arg "q"
  %k = sluice_exec.arg "k"
  %v = sluice_exec.arg "v"
  %o = sluice_exec.arg "o"
  sluice_exec.attention (%q, %k, %v) -> (%o) {label = "kernel 'attn'",
      element = bf16, batch = array<i64: 8>, m = 64, n = 64, d = 64, e = 64,
      strides = [array<i64: 4096, 64, 1>, array<i64: 4096, 64, 1>,
                 array<i64: 4096, 64, 1>, array<i64: 4096, 64, 1>],
      counter = array<i64: 4096, 64, 1>, scale = 0.125, causal = false,
      dropout = 0.0, stream = 0,
      tiles = #sluice_exec.stream_tiles<query_rows = 128, key_tile = 64,
          key_rows = 128, query_tile = 32, head_dim = 64, threads = 256>}
}

// CHECK-LABEL: /* entry attn_backward */
// CHECK:        sluice_stream_bwd_args a;
// CHECK:        SLUICE_CHECK_CUDA((sluice_stream_attention_bwd_cuda<sluice_f16, 4, 64, 16, 128>(a, stream)), "kernel 'attn grad'");
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
      backward, label = "kernel 'attn grad'", element = f16,
      batch = array<i64>, m = 5, n = 5, d = 100, e = 128,
      strides = [array<i64: 100, 1>, array<i64: 100, 1>, array<i64: 128, 1>,
                 array<i64: 128, 1>, array<i64: 1, 0>, array<i64: 1, 0>,
                 array<i64: 100, 1>, array<i64: 100, 1>, array<i64: 128, 1>],
      counter = array<i64: 5, 1>, scale = 0.1, causal = true,
      dropout = 0.25, stream = 2,
      tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64,
          key_rows = 64, query_tile = 16, head_dim = 128, threads = 128>}
}

// Q, K and V as slices of one stacked [b, j, s=3, p] projection, and dQ,
// dK, dV written into the stacked gradient: each pointer at its element
// offset (s times s's stride), in elements of the operand's type.
// CHECK-LABEL: /* entry attn_stacked */
// CHECK:        a.q.data = (void *)(args->qkv);
// CHECK-NEXT:   a.q.batch_stride[0] = 12288LL;
// CHECK-NEXT:   a.q.row_stride = 192LL;
// CHECK:        a.k.data = (void *)((sluice_f16 *)(args->qkv) + 64LL);
// CHECK:        a.v.data = (void *)((sluice_f16 *)(args->qkv) + 128LL);
// CHECK:        a.lse.data = (void *)((ctx->arena + 0ULL));
// CHECK:        a.dq.data = (void *)(args->d_qkv);
// CHECK:        a.dk.data = (void *)((sluice_f16 *)(args->d_qkv) + 64LL);
// CHECK:        a.dv.data = (void *)((sluice_f16 *)(args->d_qkv) + 128LL);
// CHECK-NEXT:   a.dv.batch_stride[0] = 12288LL;
// CHECK-NEXT:   a.dv.row_stride = 192LL;
sluice_exec.entry @attn_stacked {
  %qkv = sluice_exec.arg "qkv"
  %dy = sluice_exec.arg "dy"
  %lse = sluice_exec.arena 0
  %o = sluice_exec.arg "o"
  %dqkv = sluice_exec.arg "d_qkv"
  sluice_exec.attention (%qkv, %qkv, %qkv, %dy, %lse, %o) -> (%dqkv, %dqkv, %dqkv) {
      backward, row_dot_from_o, label = "kernel 'attn grad'", element = f16,
      batch = array<i64: 8>, m = 64, n = 64, d = 64, e = 64,
      strides = [array<i64: 12288, 192, 1>, array<i64: 12288, 192, 1>,
                 array<i64: 12288, 192, 1>, array<i64: 4096, 64, 1>,
                 array<i64: 64, 1, 0>, array<i64: 4096, 64, 1>,
                 array<i64: 12288, 192, 1>, array<i64: 12288, 192, 1>,
                 array<i64: 12288, 192, 1>],
      offsets = array<i64: 0, 64, 128, 0, 0, 0, 0, 64, 128>,
      counter = array<i64: 4096, 64, 1>, scale = 0.125, causal = false,
      dropout = 0.0, stream = 0,
      tiles = #sluice_exec.stream_tiles<query_rows = 64, key_tile = 64,
          key_rows = 64, query_tile = 16, head_dim = 64, threads = 128>}
}
