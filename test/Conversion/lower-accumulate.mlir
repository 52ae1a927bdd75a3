// Accumulating GEMMs (epilogue accumulate, docs/Fusion.md) lowered to
// sluice_exec and printed. The chain of test/Transforms/fuse-accumulate.mlir:
// the memory plan stores every partial sum where the first product is, here
// the caller's `sum` field, so all three GEMMs write it and the last two
// add to it (beta = 1). The C++ module passes beta to sluice_cpu_gemm, the
// CUDA module to cublasLtMatmul (D is C, in place) and to its cuBLAS
// fallback.
// RUN: sluice-opt %s --sluice-legalize-contractions --sluice-fuse=accumulate-gemms=true | sluice-opt --sluice-lower-to-exec | FileCheck %s
// RUN: sluicec %s --emit=cpp | FileCheck %s --check-prefix=CPP
// RUN: sluicec %s --emit=cuda | FileCheck %s --check-prefix=CUDA
// RUN: sluicec %s --emit=cpp --accumulate-gemms=off | FileCheck %s --check-prefix=OFF
// OFF-NOT: 1.0f))
// OFF: sluice_kernel_0_k3
// OFF-NOT: 1.0f))

// CHECK-LABEL: sluice_exec.entry @sluice_chain_forward
// CHECK: %[[SUM:.*]] = sluice_exec.arg "sum"
// CHECK: sluice_exec.gemm %{{.*}} * %{{.*}} -> %[[SUM]] {a_type = f32, alpha = 1.000000e+00 : f64, b_type = f32, batch_count = 1 : i64, c_type = f32,
// CHECK-SAME: label = "kernel 'k0' (gemm: p0)"
// CHECK: sluice_exec.gemm %{{.*}} * %{{.*}} -> %[[SUM]] {{{.*}}beta = 1.000000e+00 : f64,
// CHECK-SAME: label = "kernel 'k1' (gemm: p1, s1)"
// CHECK-NOT: sluice_exec.launch
// CHECK: sluice_exec.gemm %{{.*}} * %{{.*}} -> %[[SUM]] {{{.*}}beta = 1.000000e+00 : f64,
// CHECK-SAME: label = "kernel 'k2' (gemm: p2, s2)"
// CHECK-NOT: sluice_exec.launch
// CHECK: }
// CPP: // kernel 'k0' (gemm: p0): C[8 x 6] = 1.000000e+00 * op(A)[8 x 4] op(B), batch 1
// CPP: sluice_cpu_gemm({{.*}}, (float *)(args->sum), 8LL, 0LL, 1LL))
// CPP: // kernel 'k1' (gemm: p1, s1): C[8 x 6] = 1.000000e+00 * op(A)[8 x 4] op(B) + C, batch 1
// CPP: sluice_cpu_gemm({{.*}}, (float *)(args->sum), 8LL, 0LL, 1LL, 1.0f))
// CPP: // kernel 'k2' (gemm: p2, s2): C[8 x 6] = 1.000000e+00 * op(A)[8 x 4] op(B) + C, batch 1
// CPP: sluice_cpu_gemm({{.*}}, (float *)(args->sum), 8LL, 0LL, 1LL, 1.0f))
// CUDA: // kernel 'k0' (gemm: p0)
// CUDA: const float beta = 0.0f;
// CUDA: // kernel 'k1' (gemm: p1, s1)
// CUDA: const float beta = 1.0f;
// CUDA: cublasLtMatmul({{.*}}, &beta, args->sum, ctx->lt_c_1, args->sum, ctx->lt_c_1, &ctx->lt_algo_1,
// CUDA: cublasGemmStridedBatchedEx({{.*}}, &beta, args->sum,
sluice.graph @chain(%d0: !sluice.tensor<[t=6, g=4], f32> {sluice.name = "d0"}, %d1: !sluice.tensor<[t=6, g=4], f32> {sluice.name = "d1"},
    %d2: !sluice.tensor<[s=6, g=4], f32> {sluice.name = "d2"}, %w: !sluice.tensor<[g=4, f=8], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[t=6, f=8], f32> {sluice.name = "sum"}) {
  %p0 = sluice.contract %d0, %w {sluice.name = "p0"} : (!sluice.tensor<[t=6, g=4], f32>, !sluice.tensor<[g=4, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32>
  %p1 = sluice.contract %d1, %w {sluice.name = "p1"} : (!sluice.tensor<[t=6, g=4], f32>, !sluice.tensor<[g=4, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32>
  %p2 = sluice.contract %d2, %w {sluice.name = "p2"} : (!sluice.tensor<[s=6, g=4], f32>, !sluice.tensor<[g=4, f=8], f32>) -> !sluice.tensor<[s=6, f=8], f32>
  %p2v = sluice.rename %p2 {sluice.name = "p2.view"} : !sluice.tensor<[s=6, f=8], f32> -> !sluice.tensor<[t=6, f=8], f32>
  %s1 = sluice.map (%p0, %p1) {sluice.name = "s1"} : (!sluice.tensor<[t=6, f=8], f32>, !sluice.tensor<[t=6, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32> {
  ^bb0(%l: f32, %r: f32):
    %v = arith.addf %l, %r : f32
    sluice.yield %v : f32
  }
  %s2 = sluice.map (%s1, %p2v) {sluice.name = "s2"} : (!sluice.tensor<[t=6, f=8], f32>, !sluice.tensor<[t=6, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32> {
  ^bb0(%l: f32, %r: f32):
    %v = arith.addf %l, %r : f32
    sluice.yield %v : f32
  }
  sluice.return %s2 : !sluice.tensor<[t=6, f=8], f32>
}
