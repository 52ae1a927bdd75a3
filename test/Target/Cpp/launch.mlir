// The same host statements printed as portable C++: the timers, a plain
// call of the kernel function (a packed mask output memset first) and a
// memcpy for an output that aliases another value.
// RUN: sluice-translate --sluice-to-cpp %s | FileCheck %s

// CHECK-LABEL: /* entry tiny_forward */
// CHECK-NEXT: SLUICE_PROFILE_BEGIN(0, 2);
// CHECK-NEXT: // kernel 'k1' (fused: softmax, dropout)
// CHECK-NEXT: memset((void *)((ctx->arena + 512ULL)), 0, 8ULL);
// CHECK-NEXT: sluice_kernel_1_k1((const sluice_f16 *)(args->x), (const float *)((ctx->arena + 0ULL)), (sluice_bf16 *)(args->y), (uint32_t *)((ctx->arena + 512ULL)), args->seed);
// CHECK-NEXT: SLUICE_PROFILE_END(0, 2);
// CHECK-NEXT: memcpy((void *)args->z, (const void *)((ctx->arena + 0ULL)), 96ULL);
// CHECK-NOT: {{.}}
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
}
