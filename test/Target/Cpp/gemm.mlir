// A hand-written sluice_exec entry printed as portable C++: GEMMs call
// sluice_cpu_gemm with the BLAS parameters as they are (transposes as
// bools, sizes, leading dimensions and batch strides as 64-bit literals,
// each operand cast to its storage type). The C++ GEMM folds no epilogue.
// RUN: sluice-translate --sluice-to-cpp %s | FileCheck %s

// CHECK-NOT: /* context fields */
// CHECK-NOT: /* create */
// CHECK-LABEL: /* entry tiny_backward */
// CHECK-NEXT: // kernel 'qk': C[16 x 40] = 1.250000e-01 * op(A)[16 x 6] op(B), batch 12
// CHECK-NEXT: {
// CHECK-NEXT: const float alpha = 0x1p-3f;
// CHECK-NEXT: if (sluice_cpu_gemm(true, false, 16LL, 40LL, 6LL, alpha, (const sluice_bf16 *)(args->x), 6LL, 96LL, (const float *)((ctx->arena + 0ULL)), 6LL, 240LL, (sluice_f16 *)(ctx->scratch), 16LL, 640LL, 12LL))
// CHECK-NEXT: return sluice_fail(ctx, SLUICE_ERROR_ALLOC, "%s: no scratch memory for the GEMM of kernel 'qk'", phase);
// CHECK-NEXT: }
// CHECK-NOT: {
sluice_exec.entry @tiny_backward {
  %x = sluice_exec.arg "x"
  %k = sluice_exec.arena 0
  %s = sluice_exec.scratch
  sluice_exec.gemm %x * %k -> %s {label = "kernel 'qk'",
      trans_a = #sluice_exec.blas_op<t>, trans_b = #sluice_exec.blas_op<n>,
      m = 16, n = 40, k = 6, lda = 6, ldb = 6, ldc = 16,
      batch_count = 12, stride_a = 96, stride_b = 240, stride_c = 640,
      alpha = 0.125, a_type = bf16, b_type = f32, c_type = f16,
      compute = #sluice_exec.compute<f32>,
      epilogue = #sluice_exec.epilogue<none>}
}
