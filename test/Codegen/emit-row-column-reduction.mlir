// Row and column reductions in one kernel (docs/Codegen.md, "Row and column
// reductions"): a layer-norm-backward shape over [b, j, i] f16, the row sum
// over i, a row-wise result that needs it, and two column sums over (b, j)
// (one of the input, one of the result; the second scaled per column after
// it). Row blocks take chunks of consecutive rows: each thread keeps the
// column sums of its points of i over the chunk's rows in registers; the
// chunks' partials are added in chunk order (by <kernel>_total over the
// workspace on CUDA, inside `omp ordered` on the CPU).
// RUN: sluicec %s --emit=cuda | FileCheck %s --check-prefix=CUDA
// RUN: sluicec %s --emit=cpp | FileCheck %s --check-prefix=CPP
// RUN: sluice-opt %s --sluice-schedule | FileCheck %s --check-prefix=SCHED

// One vector group per thread (4 points: the widest tensor, the f32 row
// sums, sets 16 bytes): 256 threads over the 1024 points of i; 64 row
// chunks of the 8 x 64 rows (target-independent), or 2 per SM (132 on an
// H100) on CUDA.
// SCHED: sluice.schedule = #sluice_exec.schedule<mode = row_block, reduction = block, grid = 64, threads = 256, vector = 4, elements_per_thread = 4, outer = ["b", "j"], inner = ["i"], row_chunks = 64>

// CUDA-LABEL: // kernel 'ln_bwd' (fused: ln_bwd): row blocks, 256 threads, 264 row chunks, column partials summed by sluice_kernel_0_ln_bwd_total, vector 4
// CUDA: __global__ void __launch_bounds__(256) sluice_kernel_0_ln_bwd({{.*}}, uint64_t seed, float *__restrict__ partials) {
// CUDA: float [[C1:cacc_v[0-9]+]][4];
// CUDA: float [[C2:cacc_v[0-9]+]][4];
// CUDA: const int64_t o_first = (int64_t)blockIdx.x * 2LL;
// CUDA-NEXT: const int64_t o_end = o_first + 2LL < 512LL ? o_first + 2LL : 512LL;
// CUDA-NEXT: for (int64_t o = o_first; o < o_end; ++o) {
// The column sums accumulate where their inputs are: the input's in the
// row sum's stage, the result's in the stage after it.
// CUDA: [[C1]][q * 4 + v] = sluice_sum_combine([[C1]][q * 4 + v], ld0[v]);
// CUDA: sluice_block_reduce<false, 256>
// CUDA: [[C2]][q * 4 + v] = sluice_sum_combine([[C2]][q * 4 + v], v{{[0-9]+}});
// CUDA: sluice_store_vec<4, Aligned>(out1
// After the chunk: one partial per reduction and point of i.
// CUDA: partials[(0LL * 264LL + blockIdx.x) * 1024LL + r] = [[C1]][q * 4 + v];
// CUDA-NEXT: partials[(1LL * 264LL + blockIdx.x) * 1024LL + r] = [[C2]][q * 4 + v];
// CUDA: __global__ void __launch_bounds__(256) sluice_kernel_0_ln_bwd_total({{.*}}, float *__restrict__ partials) {
// CUDA-NEXT: (void)seed;
// CUDA-NEXT: for (int64_t r = (int64_t)blockIdx.x * 256 + threadIdx.x; r < 1024LL; r += (int64_t)gridDim.x * 256) {
// CUDA-NEXT: const int64_t i_i = r;
// CUDA-NEXT: float tot_[[S1:v[0-9]+]] = 0.0f;
// CUDA-NEXT: for (int64_t c = 0; c < 264LL; ++c)
// CUDA-NEXT: tot_[[S1]] = sluice_sum_combine(tot_[[S1]], partials[(0LL * 264LL + c) * 1024LL + r]);
// CUDA-NEXT: const float [[S1]] = sluice_round_f16(tot_[[S1]]);
// CUDA: partials[(1LL * 264LL + c) * 1024LL + r]
// The per-column scale, then the column outputs.
// CUDA: sluice_store(&out2[i_i], [[S1]]);
// CUDA: sluice_store(&out3[i_i], v{{[0-9]+}});
// The launches: a block per chunk, then the totals over the workspace.
// CUDA: sluice_kernel_0_ln_bwd<false>)<<<264, 256, 0, stream>>>({{.*}}, (float *)ctx->workspace);
// CUDA: sluice_kernel_0_ln_bwd_total<<<264, 256, 0, stream>>>({{.*}}, (float *)ctx->workspace);

// CPP-LABEL: // kernel 'ln_bwd' (fused: ln_bwd): row blocks, 256 threads, 64 row chunks, column partials summed in chunk order, vector 4
// CPP: float [[T1:ctot_v[0-9]+]][1024];
// CPP: float [[T2:ctot_v[0-9]+]][1024];
// CPP: #pragma omp parallel for ordered schedule(static, 1)
// CPP: for (int64_t c = 0; c < 64LL; ++c) {
// CPP: const int64_t o_first = c * 8LL;
// CPP: #pragma omp ordered
// CPP: [[T1]][k] = sluice_sum_combine([[T1]][k], cacc_{{v[0-9]+}}[k]);
// CPP: for (int64_t r = 0; r < 1024LL; ++r) {
// CPP: const float [[S:v[0-9]+]] = sluice_round_f16([[T1]][r]);
// CPP: sluice_store(&out2[i_i], [[S]]);

module attributes {sluice.target = "sm_90"} {
  sluice.graph @ln_bwd(%x: !sluice.tensor<[b=8, j=64, i=1024], f16> {sluice.name = "x"})
      -> (!sluice.tensor<[b=8, j=64], f32> {sluice.name = "rows"},
          !sluice.tensor<[b=8, j=64, i=1024], f16> {sluice.name = "dx"},
          !sluice.tensor<[i=1024], f16> {sluice.name = "dbeta"},
          !sluice.tensor<[i=1024], f16> {sluice.name = "dgamma"}) {
    %rows, %dx, %db, %dg = sluice.kernel (%x) {kind = #sluice<kernel_kind fused>, members = ["ln_bwd"], sluice.name = "ln_bwd"}
        : (!sluice.tensor<[b=8, j=64, i=1024], f16>)
        -> (!sluice.tensor<[b=8, j=64], f32>, !sluice.tensor<[b=8, j=64, i=1024], f16>, !sluice.tensor<[i=1024], f16>, !sluice.tensor<[i=1024], f16>) {
    ^bb0(%xa: !sluice.tensor<[b=8, j=64, i=1024], f16>):
      %r = sluice.reduce sum %xa over ["i"] : !sluice.tensor<[b=8, j=64, i=1024], f16> -> !sluice.tensor<[b=8, j=64], f32>
      %n = sluice.map (%xa, %r) : (!sluice.tensor<[b=8, j=64, i=1024], f16>, !sluice.tensor<[b=8, j=64], f32>) -> !sluice.tensor<[b=8, j=64, i=1024], f16> {
      ^bb0(%p: f32, %q: f32):
        %d = arith.subf %p, %q : f32
        sluice.yield %d : f32
      }
      %cb = sluice.reduce sum %xa over ["b", "j"] : !sluice.tensor<[b=8, j=64, i=1024], f16> -> !sluice.tensor<[i=1024], f16>
      %cg = sluice.reduce sum %n over ["b", "j"] : !sluice.tensor<[b=8, j=64, i=1024], f16> -> !sluice.tensor<[i=1024], f32>
      %sg = sluice.map (%cg) : (!sluice.tensor<[i=1024], f32>) -> !sluice.tensor<[i=1024], f16> {
      ^bb0(%v: f32):
        %h = arith.constant 0.5 : f32
        %w = arith.mulf %v, %h : f32
        sluice.yield %w : f32
      }
      sluice.kernel_yield %r, %n, %cb, %sg : !sluice.tensor<[b=8, j=64], f32>, !sluice.tensor<[b=8, j=64, i=1024], f16>, !sluice.tensor<[i=1024], f16>, !sluice.tensor<[i=1024], f16>
    }
    sluice.return %rows, %dx, %db, %dg : !sluice.tensor<[b=8, j=64], f32>, !sluice.tensor<[b=8, j=64, i=1024], f16>, !sluice.tensor<[i=1024], f16>, !sluice.tensor<[i=1024], f16>
  }
}
