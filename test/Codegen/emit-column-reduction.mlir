// CUDA column reductions (docs/Codegen.md, "Column reductions"): a bias
// gradient summed over the rows (b, j) of [b, j, u], with a dropout mask
// drawn inside, a full-domain output and an outer op after the sum, runs in
// two stages: column tiles (threadIdx.x over u, the contiguous dim) x row
// chunks (blockIdx.y, threadIdx.y within) write f32 partials to the
// workspace; <kernel>_total sums them in chunk order. The same reduction
// over a tensor laid out [u, b, j] (its rows contiguous) keeps the row path.
// RUN: sluicec %s --emit=cuda | FileCheck %s --check-prefixes=CUDA,SM90
// RUN: sed -e 's/sluice.target = "sm_90"/sluice.target = "sm_80"/' %s > %t.mlir
// RUN: sluicec %t.mlir --emit=cuda | FileCheck %s --check-prefixes=CUDA,SM80
// RUN: sluicec %s --emit=cpp | FileCheck %s --check-prefix=CPP
// The GPU kit's correctness cases run such kernels against the CPU backend
// and the reference (docs/GPU.md), e.g. its quick case:
// RUN: sluicec %S/../Compile/Inputs/post_relu_f32_train_dropout.json --emit=cuda --fuse=off | FileCheck %s --check-prefix=KIT
// KIT: column blocks, 256 threads (32 columns x 8 rows)

// The grid fills the device: 2 column tiles x as many row chunks as
// 132 SMs x 8 blocks of 256 threads want (sm_90, h100; sm_80, a100: 108).
// CUDA-LABEL: // kernel 'bgrad' (fused: bgrad)
// SM90-SAME: column blocks, 256 threads (32 columns x 8 rows), 2 column tiles x 521 row chunks, partials summed by sluice_kernel_0_bgrad_total, vector 1
// SM80-SAME: column blocks, 256 threads (32 columns x 8 rows), 2 column tiles x 432 row chunks, partials summed by sluice_kernel_0_bgrad_total, vector 1
// CUDA-NEXT: __global__ void __launch_bounds__(256) sluice_kernel_0_bgrad(const float *__restrict__ in0, float *__restrict__ out0, float *__restrict__ out1, float *__restrict__ out2, uint64_t seed, float *__restrict__ partials) {
// CUDA: __shared__ float sluice_column_scratch[1][8][32];
// CUDA-NEXT: const int64_t o = (int64_t)blockIdx.x * 32 + threadIdx.x;
// CUDA-NEXT: float [[ACC:acc_v[0-9]+]] = 0.0f;
// CUDA-NEXT: if (o < 64LL) {
// CUDA-NEXT: const int64_t i_u = o;
// SM90-NEXT: const int64_t r_begin = (int64_t)blockIdx.y * 63LL;
// SM90-NEXT: const int64_t r_end = r_begin + 63LL < 32768LL ? r_begin + 63LL : 32768LL;
// SM80-NEXT: const int64_t r_begin = (int64_t)blockIdx.y * 76LL;
// CUDA: for (int64_t r0 = r_begin + threadIdx.y; r0 < r_end; r0 += 8) {
// CUDA-NEXT: const int64_t i_b = (r0 / 1024LL);
// CUDA-NEXT: const int64_t i_j = r0 % 1024LL;
// The mask is drawn at the element's canonical index, as on the row path.
// CUDA: const float [[MASK:v[0-9]+]] = sluice_dropout_keep(seed, 3ULL, (uint64_t)(i_b * 65536LL + i_j * 64LL + i_u), 0x1999999au) ? 1.0f : 0.0f;
// A warp's lanes read consecutive u (i_u = o): one contiguous run of a row.
// CUDA: sluice_to_f32(in0[i_b * 65536LL + i_j * 64LL + i_u])
// CUDA: [[ACC]] = sluice_sum_combine([[ACC]], v{{[0-9]+}});
// CUDA: sluice_store(&out0[i_b * 65536LL + i_j * 64LL + i_u], v{{[0-9]+}});
// CUDA: sluice_column_scratch[0][threadIdx.y][threadIdx.x] = [[ACC]];
// CUDA-NEXT: __syncthreads();
// CUDA-NEXT: if (threadIdx.y == 0 && o < 64LL) {
// CUDA-NEXT: float total0 = sluice_column_scratch[0][0][threadIdx.x];
// CUDA-NEXT: for (int y = 1; y < 8; ++y)
// CUDA-NEXT: total0 = sluice_sum_combine(total0, sluice_column_scratch[0][y][threadIdx.x]);
// CUDA-NEXT: partials[((int64_t)0 + blockIdx.y) * 64LL + o] = total0;
// The second stage: one thread per column sums its chunks in order, rounds
// once, then the outer op and the outer outputs.
// CUDA: __global__ void __launch_bounds__(32) sluice_kernel_0_bgrad_total(const float *__restrict__ in0, float *__restrict__ out0, float *__restrict__ out1, float *__restrict__ out2, uint64_t seed, float *__restrict__ partials) {
// CUDA: if (o >= 64LL)
// CUDA: float [[ACC]] = partials[((int64_t)0 + 0) * 64LL + o];
// CUDA-NEXT: #pragma unroll 4
// SM90-NEXT: for (int c = 1; c < 521; ++c)
// SM80-NEXT: for (int c = 1; c < 432; ++c)
// CUDA-NEXT: [[ACC]] = sluice_sum_combine([[ACC]], partials[((int64_t)0 + c) * 64LL + o]);
// CUDA-NEXT: const float [[SUM:v[0-9]+]] = [[ACC]];
// CUDA: sluice_store(&out1[i_u], [[SUM]]);
// CUDA: sluice_store(&out2[i_u], v{{[0-9]+}});

// The fallback: rows contiguous ([u, b, j]), one block per column as before.
// CUDA-LABEL: // kernel 'rows' (fused: rows): row blocks, 1024 threads, vector 4
// CUDA: for (int64_t o = blockIdx.x; o < 64LL; o += gridDim.x) {

// The launches: both stages, the partials in the context's workspace.
// CUDA-LABEL: extern "C" int sluice_columns_forward(
// SM90: sluice_kernel_0_bgrad<<<dim3(2, 521), dim3(32, 8), 0, stream>>>((const float *)(args->dy), (float *)(args->dx), (float *)(args->db), (float *)(args->db_half), args->seed, (float *)ctx->workspace);
// SM80: sluice_kernel_0_bgrad<<<dim3(2, 432), dim3(32, 8), 0, stream>>>
// CUDA-NEXT: SLUICE_CHECK_LAUNCH("kernel 'bgrad' (fused: bgrad)");
// CUDA-NEXT: sluice_kernel_0_bgrad_total<<<2, 32, 0, stream>>>((const float *)(args->dy), (float *)(args->dx), (float *)(args->db), (float *)(args->db_half), args->seed, (float *)ctx->workspace);
// CUDA-NEXT: SLUICE_CHECK_LAUNCH("kernel 'bgrad' (fused: bgrad) (column totals)");
// CUDA: sluice_kernel_1_rows<false>)<<<64, 1024, 0, stream>>>

// The CPU keeps its blocked column loops.
// CPP-LABEL: static void sluice_kernel_0_bgrad(
// CPP: for (int c = 0; c < width; ++c) {
// CPP-NOT: partials

module attributes {sluice.target = "sm_90"} {
  sluice.graph @columns(%dy: !sluice.tensor<[b=32, j=1024, u=64], f32> {sluice.name = "dy"},
                        %dyt: !sluice.tensor<[u=64, b=32, j=1024], f32> {sluice.name = "dyt"})
      -> (!sluice.tensor<[b=32, j=1024, u=64], f32> {sluice.name = "dx"},
          !sluice.tensor<[u=64], f32> {sluice.name = "db"},
          !sluice.tensor<[u=64], f32> {sluice.name = "db_half"},
          !sluice.tensor<[u=64], f32> {sluice.name = "dbt"}) {
    %dx, %db, %dbh = sluice.kernel (%dy) {kind = #sluice<kernel_kind fused>, members = ["bgrad"], sluice.name = "bgrad"}
        : (!sluice.tensor<[b=32, j=1024, u=64], f32>)
        -> (!sluice.tensor<[b=32, j=1024, u=64], f32>, !sluice.tensor<[u=64], f32>, !sluice.tensor<[u=64], f32>) {
    ^bb0(%g: !sluice.tensor<[b=32, j=1024, u=64], f32>):
      %mask = sluice.random_mask {probability = 0.1 : f64, stream = 3 : i64} : !sluice.tensor<[b=32, j=1024, u=64], f32>
      %d = sluice.map (%g, %mask) : (!sluice.tensor<[b=32, j=1024, u=64], f32>, !sluice.tensor<[b=32, j=1024, u=64], f32>) -> !sluice.tensor<[b=32, j=1024, u=64], f32> {
      ^bb0(%a: f32, %m: f32):
        %s = arith.constant 1.11111116 : f32
        %p = arith.mulf %a, %m : f32
        %q = arith.mulf %p, %s : f32
        sluice.yield %q : f32
      }
      %sum = sluice.reduce sum %d over ["b", "j"] : !sluice.tensor<[b=32, j=1024, u=64], f32> -> !sluice.tensor<[u=64], f32>
      %half = sluice.map (%sum) : (!sluice.tensor<[u=64], f32>) -> !sluice.tensor<[u=64], f32> {
      ^bb0(%v: f32):
        %h = arith.constant 0.5 : f32
        %w = arith.mulf %v, %h : f32
        sluice.yield %w : f32
      }
      sluice.kernel_yield %d, %sum, %half : !sluice.tensor<[b=32, j=1024, u=64], f32>, !sluice.tensor<[u=64], f32>, !sluice.tensor<[u=64], f32>
    }
    %dbt = sluice.kernel (%dyt) {kind = #sluice<kernel_kind fused>, members = ["rows"], sluice.name = "rows"}
        : (!sluice.tensor<[u=64, b=32, j=1024], f32>) -> !sluice.tensor<[u=64], f32> {
    ^bb0(%t: !sluice.tensor<[u=64, b=32, j=1024], f32>):
      %s = sluice.reduce sum %t over ["b", "j"] : !sluice.tensor<[u=64, b=32, j=1024], f32> -> !sluice.tensor<[u=64], f32>
      sluice.kernel_yield %s : !sluice.tensor<[u=64], f32>
    }
    sluice.return %dx, %db, %dbh, %dbt : !sluice.tensor<[b=32, j=1024, u=64], f32>, !sluice.tensor<[u=64], f32>, !sluice.tensor<[u=64], f32>, !sluice.tensor<[u=64], f32>
  }
}
