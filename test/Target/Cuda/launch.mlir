// Host statements around generated kernels printed as CUDA: the timers of
// a profiled kernel, a launch on the stream with its grid and block (a
// packed mask output cleared first, pointers cast to the kernel's parameter
// types, i1 as 32-bit words) and its launch check, and a copy of an output
// that aliases another value.
// RUN: sluice-translate --sluice-to-cuda %s | FileCheck %s

// CHECK-LABEL: /* entry tiny_forward */
// CHECK-NEXT: SLUICE_PROFILE_BEGIN(0, 2);
// CHECK-NEXT: // kernel 'k1' (fused: softmax, dropout)
// CHECK-NEXT: SLUICE_CHECK_CUDA(cudaMemsetAsync((void *)((ctx->arena + 512ULL)), 0, 8ULL, stream), "clearing a packed mask of kernel 'k1' (fused: softmax, dropout)");
// A kernel with vector groups (vector = 4) has an aligned and an
// element-access variant: the launch picks one from the alignment of every
// pointer but the bit-packed one.
// CHECK-NEXT: (sluice_aligned16(args->x) && sluice_aligned16((ctx->arena + 0ULL)) && sluice_aligned16(args->y) ? sluice_kernel_1_k1<true> : sluice_kernel_1_k1<false>)<<<6, 32, 0, stream>>>((const sluice_f16 *)(args->x), (const float *)((ctx->arena + 0ULL)), (sluice_bf16 *)(args->y), (uint32_t *)((ctx->arena + 512ULL)), args->seed);
// CHECK-NEXT: SLUICE_CHECK_LAUNCH("kernel 'k1' (fused: softmax, dropout)");
// CHECK-NEXT: SLUICE_PROFILE_END(0, 2);
// CHECK-NEXT: SLUICE_CHECK_CUDA(cudaMemcpyAsync((void *)args->z, (const void *)((ctx->arena + 0ULL)), 96ULL, cudaMemcpyDeviceToDevice, stream), "copy into args->z");
// Without vector groups, one plain kernel.
// CHECK-NEXT: // kernel 'k2' (fused: transpose)
// CHECK-NEXT: sluice_kernel_2_k2<<<1, 256, 0, stream>>>((const float *)((ctx->arena + 0ULL)), (float *)(args->z), args->seed);
// CHECK-NEXT: SLUICE_CHECK_LAUNCH("kernel 'k2' (fused: transpose)");
// A column reduction: its first stage on column tiles x row chunks with
// blocks of (threads / rows) x rows, then its totals kernel; both get the
// context's workspace for the partials.
// CHECK-NEXT: // kernel 'k3' (fused: d_b)
// CHECK-NEXT: sluice_kernel_3_k3<<<dim3(2, 40), dim3(32, 8), 0, stream>>>((const float *)((ctx->arena + 0ULL)), (float *)(args->z), args->seed, (float *)ctx->workspace);
// CHECK-NEXT: SLUICE_CHECK_LAUNCH("kernel 'k3' (fused: d_b)");
// CHECK-NEXT: sluice_kernel_3_k3_total<<<2, 32, 0, stream>>>((const float *)((ctx->arena + 0ULL)), (float *)(args->z), args->seed, (float *)ctx->workspace);
// CHECK-NEXT: SLUICE_CHECK_LAUNCH("kernel 'k3' (fused: d_b) (column totals)");
// With vector groups (4 columns per thread), the first stage comes in two
// variants picked like any other kernel's; the totals kernel takes one
// thread per column of a tile (8 lanes x 4 = 32) and has no variants.
// CHECK-NEXT: // kernel 'k4' (fused: d_b)
// CHECK-NEXT: (sluice_aligned16((ctx->arena + 0ULL)) && sluice_aligned16(args->z) ? sluice_kernel_4_k4<true> : sluice_kernel_4_k4<false>)<<<dim3(2, 40), dim3(8, 32), 0, stream>>>((const float *)((ctx->arena + 0ULL)), (float *)(args->z), args->seed, (float *)ctx->workspace);
// CHECK-NEXT: SLUICE_CHECK_LAUNCH("kernel 'k4' (fused: d_b)");
// CHECK-NEXT: sluice_kernel_4_k4_total<<<2, 32, 0, stream>>>((const float *)((ctx->arena + 0ULL)), (float *)(args->z), args->seed, (float *)ctx->workspace);
// CHECK-NEXT: SLUICE_CHECK_LAUNCH("kernel 'k4' (fused: d_b) (column totals)");
// CHECK-NOT: SLUICE
sluice_exec.entry @tiny_forward {
  %x = sluice_exec.arg "x"
  %t = sluice_exec.arena 0
  %y = sluice_exec.arg "y"
  %m = sluice_exec.arena 512
  sluice_exec.timer_begin 0, 2
  sluice_exec.launch @sluice_kernel_1_k1
      schedule <mode = row_block, reduction = warp, grid = 6, threads = 32, vector = 4, elements_per_thread = 4, outer = ["h", "j"], inner = ["k"]>
      (%x, %t) -> (%y, %m)
      {input_types = [f16, f32], output_types = [bf16, i1],
       clear_bytes = array<i64: 0, 8>,
       label = "kernel 'k1' (fused: softmax, dropout)"}
  sluice_exec.timer_end 0, 2
  %z = sluice_exec.arg "z"
  sluice_exec.copy %t -> %z bytes 96
  sluice_exec.launch @sluice_kernel_2_k2
      schedule <mode = elementwise, reduction = none, grid = 1, threads = 256, vector = 1, elements_per_thread = 1, outer = [], inner = ["i", "j"]>
      (%t) -> (%z)
      {input_types = [f32], output_types = [f32],
       clear_bytes = array<i64: 0>,
       label = "kernel 'k2' (fused: transpose)"}
  sluice_exec.launch @sluice_kernel_3_k3
      schedule <mode = column_block, reduction = block, grid = 2, threads = 256, vector = 1, elements_per_thread = 1, outer = ["u"], inner = ["b", "j"], row_chunks = 40, rows = 8>
      (%t) -> (%z)
      {input_types = [f32], output_types = [f32],
       clear_bytes = array<i64: 0>,
       label = "kernel 'k3' (fused: d_b)"}
  sluice_exec.launch @sluice_kernel_4_k4
      schedule <mode = column_block, reduction = block, grid = 2, threads = 256, vector = 4, elements_per_thread = 4, outer = ["u"], inner = ["b", "j"], row_chunks = 40, rows = 32>
      (%t) -> (%z)
      {input_types = [f32], output_types = [f32],
       clear_bytes = array<i64: 0>,
       label = "kernel 'k4' (fused: d_b)"}
}
