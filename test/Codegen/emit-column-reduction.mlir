// CUDA column reductions (docs/Codegen.md, "Column reductions"): a bias
// gradient summed over the rows (b, j) of [b, j, u], with a dropout mask
// drawn inside, a full-domain output and an outer op after the sum, runs in
// two stages: column tiles (threadIdx.x over u, the contiguous dim, each
// thread `vector` consecutive columns) x row chunks (blockIdx.y, threadIdx.y
// within) write f32 partials to the workspace; <kernel>_total sums them in
// chunk order. The same reduction over a tensor laid out [u, b, j] (its rows
// contiguous) keeps the row path.
// RUN: sluicec %s --emit=cuda | FileCheck %s --check-prefixes=CUDA,SM90
// RUN: sed -e 's/sluice.target = "sm_90"/sluice.target = "sm_80"/' %s > %t.mlir
// RUN: sluicec %t.mlir --emit=cuda | FileCheck %s --check-prefixes=CUDA,SM80
// RUN: sluicec %s --emit=cpp | FileCheck %s --check-prefix=CPP
// The GPU kit's correctness cases run such kernels against the CPU backend
// and the reference (docs/GPU.md), e.g. its quick case:
// RUN: sluicec %S/../Compile/Inputs/post_relu_f32_train_dropout.json --emit=cuda --fuse=off | FileCheck %s --check-prefix=KIT
// (its small dims give the 8-byte f32 path and the element path):
// KIT: column blocks, 256 threads (16 columns x 16 rows), {{.*}}, vector 2
// KIT: column blocks, 256 threads (32 columns x 8 rows), {{.*}}, vector 1

// f32: 4 consecutive columns per thread (16 bytes), 8 lanes along a row
// (128 contiguous bytes) x 32 rows per block; the grid fills the device: 2
// column tiles x as many row chunks as 132 SMs x 8 blocks of 256 threads
// want (sm_90, h100; sm_80, a100: 108), at most one per 4 x 32 rows. The
// launch bound asks for 4 blocks per SM: at most 64 registers per thread.
// CUDA-LABEL: // kernel 'bgrad' (fused: bgrad)
// CUDA-SAME: column blocks, 256 threads (8 columns x 32 rows), 2 column tiles x 256 row chunks, partials summed by sluice_kernel_0_bgrad_total, vector 4
// CUDA-NEXT: // 16-byte: in0 out0
// CUDA-NEXT: template <bool Aligned>
// CUDA-NEXT: __global__ void __launch_bounds__(256, 4) sluice_kernel_0_bgrad(const float *__restrict__ in0, float *__restrict__ out0, float *__restrict__ out1, float *__restrict__ out2, uint64_t seed, float *__restrict__ partials) {
// CUDA: const int64_t o = ((int64_t)blockIdx.x * 8 + threadIdx.x) * 4LL;
// CUDA-NEXT: float [[ACC:acc_v[0-9]+]][4];
// CUDA-NEXT: #pragma unroll
// CUDA-NEXT: for (int v = 0; v < 4; ++v)
// CUDA-NEXT: [[ACC]][v] = 0.0f;
// CUDA-NEXT: if (o < 64LL) {
// CUDA-NEXT: const int64_t i_u = o;
// CUDA-NEXT: const int64_t r_begin = (int64_t)blockIdx.y * 128LL;
// CUDA-NEXT: const int64_t r_end = r_begin + 128LL < 32768LL ? r_begin + 128LL : 32768LL;
// CUDA: for (int64_t r0 = r_begin + threadIdx.y; r0 < r_end; r0 += 32) {
// CUDA-NEXT: const int64_t i_b = (r0 / 1024LL);
// CUDA-NEXT: const int64_t i_j = r0 % 1024LL;
// One 16-byte load of the thread's 4 columns of the row.
// CUDA-NEXT: float ld0[4];
// CUDA-NEXT: sluice_load_vec<4, Aligned>(ld0, in0 + (i_b * 65536LL + i_j * 64LL + i_u));
// CUDA-NEXT: float st0[4];
// The mask: one Philox call (sluice_dropout_keep4) per 4 consecutive
// columns, at the canonical index of the first (as the row path draws).
// CUDA-NEXT: uint32_t bits_[[MASK:v[0-9]+]][1];
// CUDA-NEXT: for (int w = 0; w < 1; ++w)
// CUDA-NEXT: bits_[[MASK]][w] = sluice_dropout_keep4(seed, 3ULL, ((uint64_t)(i_b * 65536LL + i_j * 64LL + i_u) >> 2) + w, 0x1999999au);
// CUDA-NEXT: #pragma unroll
// CUDA-NEXT: for (int v = 0; v < 4; ++v) {
// CUDA-NEXT: const float [[MASK]] = (bits_[[MASK]][v >> 2] >> (v & 3)) & 1u ? 1.0f : 0.0f;
// CUDA: [[ACC]][v] = sluice_sum_combine([[ACC]][v], v{{[0-9]+}});
// CUDA-NEXT: st0[v] = v{{[0-9]+}};
// CUDA-NEXT: }
// CUDA-NEXT: sluice_store_vec<4, Aligned>(out0 + (i_b * 65536LL + i_j * 64LL + i_u), st0);
// The block's 32 row partials of each column, combined in threadIdx.y order
// by one thread per column.
// CUDA: __shared__ float sluice_column_scratch[1][32][32];
// CUDA-NEXT: #pragma unroll
// CUDA-NEXT: for (int v = 0; v < 4; ++v)
// CUDA-NEXT: sluice_column_scratch[0][threadIdx.y][threadIdx.x * 4 + v] = [[ACC]][v];
// CUDA-NEXT: __syncthreads();
// CUDA-NEXT: for (int c = threadIdx.y * 8 + threadIdx.x; c < 32; c += 256) {
// CUDA-NEXT: const int64_t oc = (int64_t)blockIdx.x * 32 + c;
// CUDA-NEXT: if (oc >= 64LL)
// CUDA-NEXT: break;
// CUDA-NEXT: float total0 = sluice_column_scratch[0][0][c];
// CUDA-NEXT: for (int y = 1; y < 32; ++y)
// CUDA-NEXT: total0 = sluice_sum_combine(total0, sluice_column_scratch[0][y][c]);
// CUDA-NEXT: partials[((int64_t)0 + blockIdx.y) * 64LL + oc] = total0;
// The second stage: one thread per column (32 per tile) sums its chunks in
// order, rounds once, then the outer op and the outer outputs.
// CUDA: __global__ void __launch_bounds__(32) sluice_kernel_0_bgrad_total(const float *__restrict__ in0, float *__restrict__ out0, float *__restrict__ out1, float *__restrict__ out2, uint64_t seed, float *__restrict__ partials) {
// CUDA-NEXT: (void)seed;
// CUDA-NEXT: const int64_t o = (int64_t)blockIdx.x * 32 + threadIdx.x;
// CUDA-NEXT: if (o >= 64LL)
// CUDA: float [[TOTAL:acc_v[0-9]+]] = partials[((int64_t)0 + 0) * 64LL + o];
// CUDA-NEXT: #pragma unroll 4
// CUDA-NEXT: for (int c = 1; c < 256; ++c)
// CUDA-NEXT: [[TOTAL]] = sluice_sum_combine([[TOTAL]], partials[((int64_t)0 + c) * 64LL + o]);
// CUDA-NEXT: const float [[SUM:v[0-9]+]] = [[TOTAL]];
// CUDA: sluice_store(&out1[i_u], [[SUM]]);
// CUDA: sluice_store(&out2[i_u], v{{[0-9]+}});

// The fallback: rows contiguous ([u, b, j]), one block per column as before.
// CUDA-LABEL: // kernel 'rows' (fused: rows): row blocks, 1024 threads, vector 4
// CUDA: for (int64_t o = blockIdx.x; o < 64LL; o += gridDim.x) {

// f16 with 1028 columns (not a multiple of 8): 4 columns per thread,
// 8-byte accesses (no 16-byte list), 16 lanes (128 bytes of a row) x 16
// rows; 17 tiles of 64 columns, the last one partly past the end. The grid
// fills the device: as many row chunks as 132 SMs x 8 blocks of 256 threads
// want over 17 tiles (sm_90, h100; sm_80, a100: 108 SMs). The bias [u] is
// read 4 columns at a time too, and the outer op over it runs per column
// inside the group.
// CUDA-LABEL: // kernel 'half' (fused: half)
// SM90-SAME: column blocks, 256 threads (16 columns x 16 rows), 17 column tiles x 63 row chunks, partials summed by sluice_kernel_2_half_total, vector 4
// SM80-SAME: column blocks, 256 threads (16 columns x 16 rows), 17 column tiles x 51 row chunks, partials summed by sluice_kernel_2_half_total, vector 4
// CUDA-NOT: 16-byte
// CUDA: template <bool Aligned>
// CUDA: const int64_t o = ((int64_t)blockIdx.x * 16 + threadIdx.x) * 4LL;
// CUDA: if (o < 1028LL) {
// SM90: const int64_t r_begin = (int64_t)blockIdx.y * 66LL;
// SM80: const int64_t r_begin = (int64_t)blockIdx.y * 81LL;
// CUDA: sluice_load_vec<4, Aligned>(ld0, in0 + (i_u));
// CUDA-NEXT: float ld1[4];
// CUDA-NEXT: sluice_load_vec<4, Aligned>(ld1, in1 + (i_b * 526336LL + i_j * 1028LL + i_u));
// CUDA-NEXT: #pragma unroll
// CUDA-NEXT: for (int v = 0; v < 4; ++v) {
// CUDA-NEXT: const float [[BIAS2:v[0-9]+]]_a0 = (float)(ld0[v]);
// CUDA: acc_v{{[0-9]+}}[v] = sluice_max_combine(acc_v{{[0-9]+}}[v], v{{[0-9]+}});
// CUDA: __shared__ float sluice_column_scratch[3][16][64];
// CUDA: if (oc >= 1028LL)
// CUDA-NEXT: break;
// CUDA: __global__ void __launch_bounds__(64) sluice_kernel_2_half_total(

// Two column dims (h, d) of [b, j, h, d]: the tensors ending with them are
// addressed by the column `o` (the group's first).
// CUDA-LABEL: // kernel 'heads' (fused: heads)
// CUDA-SAME: vector 4
// CUDA: const int64_t i_h = (o / 8LL);
// CUDA-NEXT: const int64_t i_d = o % 8LL;
// CUDA: sluice_load_vec<4, Aligned>(ld0, in0 + (i_b * 1024LL + i_j * 16LL + o));
// CUDA: sluice_store(&out0[o], v{{[0-9]+}});

// The launches: both stages, the partials in the context's workspace; the
// first stage's aligned variant chosen once on the host, as for the row
// kernels (the second reads no vector).
// CUDA-LABEL: extern "C" int sluice_columns_forward(
// CUDA: (sluice_aligned16(args->dy) && sluice_aligned16(args->dx) && sluice_aligned16(args->db) && sluice_aligned16(args->db_half) ? sluice_kernel_0_bgrad<true> : sluice_kernel_0_bgrad<false>)<<<dim3(2, 256), dim3(8, 32), 0, stream>>>((const float *)(args->dy), (float *)(args->dx), (float *)(args->db), (float *)(args->db_half), args->seed, (float *)ctx->workspace);
// CUDA-NEXT: SLUICE_CHECK_LAUNCH("kernel 'bgrad' (fused: bgrad)");
// CUDA-NEXT: sluice_kernel_0_bgrad_total<<<2, 32, 0, stream>>>((const float *)(args->dy), (float *)(args->dx), (float *)(args->db), (float *)(args->db_half), args->seed, (float *)ctx->workspace);
// CUDA-NEXT: SLUICE_CHECK_LAUNCH("kernel 'bgrad' (fused: bgrad) (column totals)");
// CUDA: sluice_kernel_1_rows<false>)<<<64, 1024, 0, stream>>>
// SM90: sluice_kernel_2_half<false>)<<<dim3(17, 63), dim3(16, 16), 0, stream>>>
// SM80: sluice_kernel_2_half<false>)<<<dim3(17, 51), dim3(16, 16), 0, stream>>>
// CUDA: sluice_kernel_2_half_total<<<17, 64, 0, stream>>>

// The CPU keeps its blocked column loops.
// CPP-LABEL: static void sluice_kernel_0_bgrad(
// CPP: for (int c = 0; c < width; ++c) {
// CPP-NOT: partials

module attributes {sluice.target = "sm_90"} {
  sluice.graph @columns(%dy: !sluice.tensor<[b=32, j=1024, u=64], f32> {sluice.name = "dy"},
                        %dyt: !sluice.tensor<[u=64, b=32, j=1024], f32> {sluice.name = "dyt"},
                        %gh: !sluice.tensor<[b=8, j=512, u=1028], f16> {sluice.name = "gh"},
                        %bh: !sluice.tensor<[u=1028], f16> {sluice.name = "bh"},
                        %g4: !sluice.tensor<[b=4, j=64, h=2, d=8], f32> {sluice.name = "g4"})
      -> (!sluice.tensor<[b=32, j=1024, u=64], f32> {sluice.name = "dx"},
          !sluice.tensor<[u=64], f32> {sluice.name = "db"},
          !sluice.tensor<[u=64], f32> {sluice.name = "db_half"},
          !sluice.tensor<[u=64], f32> {sluice.name = "dbt"},
          !sluice.tensor<[u=1028], f16> {sluice.name = "s0"},
          !sluice.tensor<[u=1028], f16> {sluice.name = "s1"},
          !sluice.tensor<[u=1028], f16> {sluice.name = "s2"},
          !sluice.tensor<[h=2, d=8], f32> {sluice.name = "dhd"}) {
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
    %s0, %s1, %s2 = sluice.kernel (%gh, %bh) {kind = #sluice<kernel_kind fused>, members = ["half"], sluice.name = "half"}
        : (!sluice.tensor<[b=8, j=512, u=1028], f16>, !sluice.tensor<[u=1028], f16>)
        -> (!sluice.tensor<[u=1028], f16>, !sluice.tensor<[u=1028], f16>, !sluice.tensor<[u=1028], f16>) {
    ^bb0(%x: !sluice.tensor<[b=8, j=512, u=1028], f16>, %bias: !sluice.tensor<[u=1028], f16>):
      %b2 = sluice.map (%bias) : (!sluice.tensor<[u=1028], f16>) -> !sluice.tensor<[u=1028], f32> {
      ^bb0(%v: f32):
        %w = arith.addf %v, %v : f32
        sluice.yield %w : f32
      }
      %y = sluice.map (%x, %b2) : (!sluice.tensor<[b=8, j=512, u=1028], f16>, !sluice.tensor<[u=1028], f32>) -> !sluice.tensor<[b=8, j=512, u=1028], f32> {
      ^bb0(%a: f32, %c: f32):
        %w = arith.mulf %a, %c : f32
        sluice.yield %w : f32
      }
      %r0 = sluice.reduce sum %x over ["b", "j"] : !sluice.tensor<[b=8, j=512, u=1028], f16> -> !sluice.tensor<[u=1028], f16>
      %r1 = sluice.reduce sum %y over ["b", "j"] : !sluice.tensor<[b=8, j=512, u=1028], f32> -> !sluice.tensor<[u=1028], f16>
      %r2 = sluice.reduce max %y over ["b", "j"] : !sluice.tensor<[b=8, j=512, u=1028], f32> -> !sluice.tensor<[u=1028], f16>
      sluice.kernel_yield %r0, %r1, %r2 : !sluice.tensor<[u=1028], f16>, !sluice.tensor<[u=1028], f16>, !sluice.tensor<[u=1028], f16>
    }
    %dhd = sluice.kernel (%g4) {kind = #sluice<kernel_kind fused>, members = ["heads"], sluice.name = "heads"}
        : (!sluice.tensor<[b=4, j=64, h=2, d=8], f32>) -> !sluice.tensor<[h=2, d=8], f32> {
    ^bb0(%g: !sluice.tensor<[b=4, j=64, h=2, d=8], f32>):
      %s = sluice.reduce sum %g over ["b", "j"] : !sluice.tensor<[b=4, j=64, h=2, d=8], f32> -> !sluice.tensor<[h=2, d=8], f32>
      sluice.kernel_yield %s : !sluice.tensor<[h=2, d=8], f32>
    }
    sluice.return %dx, %db, %dbh, %dbt, %s0, %s1, %s2, %dhd : !sluice.tensor<[b=32, j=1024, u=64], f32>, !sluice.tensor<[u=64], f32>, !sluice.tensor<[u=64], f32>, !sluice.tensor<[u=64], f32>, !sluice.tensor<[u=1028], f16>, !sluice.tensor<[u=1028], f16>, !sluice.tensor<[u=1028], f16>, !sluice.tensor<[h=2, d=8], f32>
  }
}
