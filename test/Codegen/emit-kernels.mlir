// Emitted code for hand-fused kernels (what --sluice-fuse makes): a
// layernorm (two reductions, outer-only maps between them), a causal
// softmax with dropout, a transpose, a GEMM with a bias+gelu epilogue and a
// GEMM with a bias-gradient result. EmitTest.cpp runs the CPU module of this
// file against the interpreter; here FileCheck pins the key lines.
// RUN: sluicec %s --emit=cuda | FileCheck %s --check-prefix=CUDA
// RUN: sluicec %s --emit=cpp | FileCheck %s --check-prefix=CPP
// RUN: sluice-opt %s --sluice-schedule | FileCheck %s --check-prefix=SCHED

// The layernorm: one warp per (b, j) row, 40 = 10 groups of 4 floats.
// SCHED-LABEL: sluice.graph @fused
// SCHED: kernel(%{{.*}}) {members = ["ln"], sluice.name = "ln", sluice.schedule = #sluice_exec.schedule<mode = row_block, reduction = warp, grid = 6, threads = 32, vector = 4, elements_per_thread = 4, outer = ["b", "j"], inner = ["i"]>}
// SCHED: sluice.name = "softmax", sluice.schedule = #sluice_exec.schedule<mode = row_block, reduction = warp, grid = 6, threads = 32, vector = 4, elements_per_thread = 4, outer = ["h", "j"], inner = ["k"]>
// The transpose: element-wise over its result's layout (j innermost, 3: no vector).
// SCHED: sluice.name = "transpose", sluice.schedule = #sluice_exec.schedule<mode = elementwise, reduction = none, grid = 1, threads = 256, vector = 1, elements_per_thread = 1, outer = [], inner = ["i", "b", "j"]>
// GEMM kernels get no thread schedule.
// SCHED-NOT: sluice.schedule
// SCHED: sluice.name = "ffn1"
// SCHED-NOT: sluice.schedule

// Kernels with vector groups are templates over Aligned (the launch picks
// the variant); the header lists the parameters accessed 16 bytes at a time
// (the static PTX checks want a 128-bit access for each); pointers that do
// not overlap are __restrict__.
// CUDA: // 16-byte: in0 in1 out0
// CUDA-NEXT: template <bool Aligned>
// CUDA-NEXT: __global__ void __launch_bounds__(32) sluice_kernel_0_ln(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out0, float *__restrict__ out1, uint64_t seed)
// CUDA: for (int64_t o = blockIdx.x; o < 6LL; o += gridDim.x)
// CUDA: sluice_load_vec<4, Aligned>(ld0, in0 + (i_b * 120LL + i_j * 40LL + i_i));
// CUDA: const float v0 = sluice_block_reduce<false, 32>(acc_v0, nullptr);
// CUDA: sluice_store_vec<4, Aligned>(out0 + (i_b * 120LL + i_j * 40LL + i_i), st0);
// CUDA: if (t == 0) {
// CUDA-NEXT: sluice_store(&out1[i_b * 3LL + i_j], v4);
// CUDA-LABEL: sluice_kernel_1_softmax(
// CUDA: sluice_block_reduce<true, 32>(acc_v0, nullptr);
// The mask element index is row-major over the dims sorted by name with the
// innermost (k) last: (h, j, k). k is the vector dim, so one Philox call
// draws four elements; the keep test is against the integer threshold
// ceil(0.25 * 2^32).
// CUDA: uint32_t [[BITS:bits_v[0-9]+]][1];
// CUDA: [[BITS]][w] = sluice_dropout_keep4(seed, 5ULL, ((uint64_t)(i_h * 108LL + i_j * 36LL + i_k) >> 2) + w, 0x40000000u);
// CUDA: const float v{{[0-9]+}} = ([[BITS]][v >> 2] >> (v & 3)) & 1u ? 1.0f : 0.0f;
// The softmax division allows the reciprocal (fastmath<arcp>): a multiply
// by the correctly rounded reciprocal of the row sum, no IEEE division.
// CUDA: const float v{{[0-9]+}}_0 = sluice_mul_rcp(v{{[0-9]+}}_a0, v{{[0-9]+}}_a1);
// CUDA-LABEL: sluice_kernel_2_transpose(
// CUDA: for (int64_t g = (int64_t)blockIdx.x * 256 + threadIdx.x; g < 240LL; g += (int64_t)gridDim.x * 256)
// The bias-gradient result of d_w1 is cuBLASLt's BGRADB epilogue (the sum
// of B = dy over k = (b, j), through the bias pointer); the C++ module runs
// it as a generated column reduction (CPP below; emit-column-reduction.mlir
// has the details). Each folded epilogue also has its fallback (run where
// cuBLASLt refuses the epilogue at run time): the kernels the C++ target
// runs, numbered apart so that the others keep their names.
// CUDA-NOT: sluice_kernel_3
// CUDA: __global__ void __launch_bounds__(32) sluice_fallback_0_ffn1_epilogue(const float *in0, const float *in1, float *out0, uint64_t seed)
// CUDA: sluice_load_vec<4, Aligned>(ld1, in1 + (i_u));
// CUDA: = tanhf(
// CUDA: sluice_fallback_1_d_w1_bgrad(const float *__restrict__ in0, float *__restrict__ out0, uint64_t seed, float *__restrict__ partials)
// CUDA: sluice_fallback_1_d_w1_bgrad_total(
// The scratch region: the plan's buffers, then the cuBLASLt workspace.
// CUDA-LABEL: static int sluice_fused_init(
// CUDA: return sluice_fail(ctx, SLUICE_ERROR_ARGUMENT, "%s: the scratch buffer has %llu bytes; this module needs [[#SCRATCH:]] (sluice_scratch_bytes)"
// CUDA: e = cudaMalloc((void **)&ctx->arena, [[#SCRATCH]]ULL);
// CUDA: ctx->workspace = ctx->arena + [[#SCRATCH-33554432]]ULL;
// CUDA-NEXT: ctx->workspace_bytes = 33554432ULL;
// CUDA: cublasLtMatmulDescCreate(&ctx->lt_desc_0, CUBLAS_COMPUTE_32F, CUDA_R_32F)
// CUDA: cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
// SLUICE_LT_NO_EPILOGUE=1 sends every folded epilogue to its fallback.
// CUDA: if (ctx->lt_algo_found_0) ctx->lt_algo_0 = result.algo;
// CUDA-NEXT: if (sluice_env_flag("SLUICE_LT_NO_EPILOGUE")) ctx->lt_algo_found_0 = 0;
// CUDA: cublasLtMatmulDescCreate(&ctx->lt_desc_1, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate for kernel 'd_w1' (gemm: d_w1, d_b1)");
// CUDA: cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_T;
// CUDA-NEXT: cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BGRADB;
// CUDA-LABEL: extern "C" int sluice_fused_forward(
// CUDA: (sluice_aligned16(args->x) && sluice_aligned16(args->g) && sluice_aligned16(args->y) && sluice_aligned16(args->rstd) ? sluice_kernel_0_ln<true> : sluice_kernel_0_ln<false>)<<<6, 32, 0, stream>>>((const float *)(args->x), (const float *)(args->g), (float *)(args->y), (float *)(args->rstd), args->seed);
// CUDA-NEXT: SLUICE_CHECK_LAUNCH("kernel 'ln' (fused: ln)");
// CUDA: sluice_kernel_1_softmax<false>)<<<6, 32, 0, stream>>>
// CUDA: sluice_kernel_2_transpose<<<1, 256, 0, stream>>>
// The folded GELU_BIAS call under create's algorithm; where there is none
// (or a pointer is not 16-byte aligned, or the call is refused), the
// fallback: the plain GEMM into h (cuBLASLt without an epilogue, slot 2, or
// cuBLAS), then the epilogue kernel in place on h.
// CUDA: SLUICE_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(ctx->lt_desc_0, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias))
// CUDA-NEXT: cublasStatus_t lt_status = CUBLAS_STATUS_NOT_SUPPORTED;
// CUDA-NEXT: if (ctx->lt_algo_found_0 && sluice_aligned16(args->w1) && sluice_aligned16(args->x) && sluice_aligned16(args->h) && sluice_aligned16(bias)) {
// CUDA-NEXT: SLUICE_CHECK_CUBLAS_OR_UNSUPPORTED(lt_status, cublasLtMatmul(ctx->lt, ctx->lt_desc_0, &alpha, args->w1, ctx->lt_a_0, args->x, ctx->lt_b_0, &beta, args->h, ctx->lt_c_0, args->h, ctx->lt_c_0, &ctx->lt_algo_0, ctx->workspace, ctx->workspace_bytes, stream), "cublasLtMatmul of kernel 'ffn1' (gemm: ffn1, ffn1_bias, act)");
// CUDA-NEXT: }
// CUDA-NEXT: if (lt_status != CUBLAS_STATUS_SUCCESS) {
// CUDA-NEXT: // fallback: the GEMM without the epilogue, then the epilogue as generated kernels
// CUDA-NEXT: // kernel 'ffn1' (gemm: ffn1, ffn1_bias, act): C[16 x 6] = 1.000000e+00 * op(A)[16 x 40] op(B), batch 1
// CUDA: if (ctx->lt_algo_found_2 && sluice_aligned16(args->w1) && sluice_aligned16(args->x) && sluice_aligned16(args->h)) {
// CUDA-NEXT: SLUICE_CHECK_CUBLAS(cublasLtMatmul(ctx->lt, ctx->lt_desc_2, &alpha, args->w1, ctx->lt_a_2, args->x, ctx->lt_b_2, &beta, args->h, ctx->lt_c_2, args->h, ctx->lt_c_2, &ctx->lt_algo_2,
// CUDA-NEXT: } else {
// CUDA: SLUICE_CHECK_CUBLAS(cublasGemmStridedBatchedEx(ctx->blas, CUBLAS_OP_T, CUBLAS_OP_N, 16, 6, 40, &alpha, args->w1, CUDA_R_32F, 40, 0LL, args->x, CUDA_R_32F, 40, 0LL, &beta, args->h, CUDA_R_32F, 16, 0LL, 1,
// CUDA: // kernel 'ffn1' (gemm: ffn1, ffn1_bias, act) epilogue
// CUDA-NEXT: sluice_fallback_0_ffn1_epilogue<false>)<<<1, 32, 0, stream>>>((const float *)(args->h), (const float *)(args->b1), (float *)(args->h), args->seed);
// CUDA-NEXT: SLUICE_CHECK_LAUNCH("kernel 'ffn1' (gemm: ffn1, ffn1_bias, act) epilogue");
// CUDA-NEXT: }
// CUDA-NEXT: }
// The folded BGRADB call, and its fallback: the plain GEMM into dw, then
// the column reduction of dy into db (two stages through the workspace).
// CUDA: // kernel 'd_w1' (gemm: d_w1, d_b1): C[40 x 16] = 1.000000e+00 * op(A)[40 x 6] op(B), batch 1
// CUDA: const void *bias = args->db;
// CUDA-NEXT: SLUICE_CHECK_CUBLAS(cublasLtMatmulDescSetAttribute(ctx->lt_desc_1, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias))
// CUDA-NEXT: cublasStatus_t lt_status = CUBLAS_STATUS_NOT_SUPPORTED;
// CUDA-NEXT: if (ctx->lt_algo_found_1 && sluice_aligned16(args->x) && sluice_aligned16(args->dy) && sluice_aligned16(args->dw) && sluice_aligned16(bias)) {
// CUDA-NEXT: SLUICE_CHECK_CUBLAS_OR_UNSUPPORTED(lt_status, cublasLtMatmul(ctx->lt, ctx->lt_desc_1, &alpha, args->x, ctx->lt_a_1, args->dy, ctx->lt_b_1, &beta, args->dw, ctx->lt_c_1, args->dw, ctx->lt_c_1, &ctx->lt_algo_1, ctx->workspace, ctx->workspace_bytes, stream), "cublasLtMatmul of kernel 'd_w1' (gemm: d_w1, d_b1)");
// CUDA-NEXT: }
// CUDA-NEXT: if (lt_status != CUBLAS_STATUS_SUCCESS) {
// CUDA: if (ctx->lt_algo_found_3 && sluice_aligned16(args->x) && sluice_aligned16(args->dy) && sluice_aligned16(args->dw)) {
// CUDA: SLUICE_CHECK_CUBLAS(cublasGemmStridedBatchedEx(ctx->blas, CUBLAS_OP_N, CUBLAS_OP_T, 40, 16, 6, &alpha, args->x, CUDA_R_32F, 40, 0LL, args->dy, CUDA_R_32F, 16, 0LL, &beta, args->dw, CUDA_R_32F, 40, 0LL, 1,
// CUDA: // kernel 'd_w1' (gemm: d_w1, d_b1) bgrad
// CUDA-NEXT: sluice_fallback_1_d_w1_bgrad<false>)<<<dim3(1, 1), dim3(8, 32), 0, stream>>>((const float *)(args->dy), (float *)(args->db), args->seed, (float *)ctx->workspace);
// CUDA-NEXT: SLUICE_CHECK_LAUNCH("kernel 'd_w1' (gemm: d_w1, d_b1) bgrad");
// CUDA-NEXT: sluice_fallback_1_d_w1_bgrad_total<<<1, 32, 0, stream>>>((const float *)(args->dy), (float *)(args->db), args->seed, (float *)ctx->workspace);
// CUDA-NEXT: SLUICE_CHECK_LAUNCH("kernel 'd_w1' (gemm: d_w1, d_b1) bgrad (column totals)");
// CUDA-NEXT: }
// CUDA-NEXT: }
// CUDA-LABEL: extern "C" int sluice_num_phases(void) { return 1; }
// CUDA: {"y", 0, 3, sluice_dims_0_6, 1},
// CUDA: extern "C" int sluice_abi_version(void) { return SLUICE_ABI_VERSION; }
// CUDA-NEXT: extern "C" uint64_t sluice_saved_bytes(void) { return 0ULL; }
// CUDA-NEXT: extern "C" uint64_t sluice_scratch_bytes(void) { return [[#SCRATCH]]ULL; }

// The CPU: OpenMP over the outer points, the inner extent as one loop of
// SIMD groups (8 points: the largest of 32, 16, 8 dividing i = 40), each
// lane summing its own partial; the lanes combine after the row. The SIMD
// loop reads the f32 input in place (no staging array).
// CPP-LABEL: static void sluice_kernel_0_ln(
// CPP: #ifdef _OPENMP
// CPP-NEXT: #pragma omp parallel for
// CPP-NEXT: #endif
// CPP-NEXT: for (int64_t o = 0; o < 6LL; ++o) {
// CPP: float acc_v0[8];
// CPP: for (int q = 0; q < 5; ++q) {
// CPP-NOT: sluice_load_vec
// CPP: #pragma omp simd
// CPP-NEXT: for (int v = 0; v < 8; ++v) {
// CPP-NEXT: acc_v0[v] = sluice_sum_combine(acc_v0[v], sluice_to_f32(in0[i_b * 120LL + i_j * 40LL + (i_i + v)]));
// The lanes' partials combine pairwise (a tree of SIMD steps).
// CPP: for (int half = 4; half > 0; half >>= 1) {
// CPP-NEXT: #pragma omp simd
// CPP-NEXT: for (int v = 0; v < half; ++v)
// CPP-NEXT: acc_v0[v] = sluice_sum_combine(acc_v0[v], acc_v0[v + half]);
// CPP-NEXT: }
// CPP-NEXT: float acc_v0_all = acc_v0[0];
// CPP-NEXT: const float v0 = acc_v0_all;
// The bias+gelu epilogue runs in place on the GEMM's output.
// CPP-LABEL: static void sluice_kernel_3_ffn1_epilogue(const float *in0, const float *in1, float *out0, uint64_t seed)
// CPP: = sluice_tanhf(
// The bias gradient (a sum over b, j of [b, j, u]) as blocked partial sums:
// each OpenMP thread takes a contiguous range of whole units of 16 columns
// (here one unit: the last thread takes it), rows streamed, a SIMD loop
// over the block's columns.
// CPP-LABEL: static void sluice_kernel_4_d_w1_bgrad(
// CPP: #pragma omp parallel
// CPP: part = omp_get_thread_num();
// CPP-NEXT: parts = omp_get_num_threads();
// CPP: const int64_t end = 1LL * (part + 1) / parts * 16LL;
// CPP-NEXT: for (int64_t c0 = 1LL * part / parts * 16LL; c0 < end; c0 += 16LL) {
// CPP-NEXT: const int64_t width = end - c0 < 16LL ? end - c0 : 16LL;
// CPP-NEXT: float acc_v0[16];
// CPP: for (int64_t r0 = 0; r0 < 6LL; ++r0) {
// CPP: #pragma omp simd
// CPP-NEXT: for (int c = 0; c < width; ++c) {
// CPP-NEXT: const int64_t o = c0 + c;
// CPP-NEXT: const int64_t i_u = o;
// CPP-NEXT: acc_v0[c] = sluice_sum_combine(acc_v0[c], sluice_to_f32(in0[i_b * 48LL + i_j * 16LL + i_u]));
// CPP: const float v0 = acc_v0[c];
// CPP-NEXT: sluice_store(&out0[i_u], v0);
// CPP-LABEL: extern "C" int sluice_fused_forward(
// CPP: if (sluice_cpu_gemm(true, false, 16LL, 6LL, 40LL, alpha, (const float *)(args->w1), 40LL, 0LL, (const float *)(args->x), 40LL, 0LL, (float *)(args->h), 16LL, 0LL, 1LL))
// CPP: sluice_kernel_3_ffn1_epilogue((const float *)(args->h), (const float *)(args->b1), (float *)(args->h), args->seed);

module {
  sluice.graph @fused(%x: !sluice.tensor<[b=2, j=3, i=40], f32> {sluice.name = "x"},
                      %g: !sluice.tensor<[i=40], f32> {sluice.name = "g"},
                      %s: !sluice.tensor<[h=2, j=3, k=36], f32> {sluice.name = "s"},
                      %w1: !sluice.tensor<[u=16, i=40], f32> {sluice.name = "w1"},
                      %b1: !sluice.tensor<[u=16], f32> {sluice.name = "b1"},
                      %dy: !sluice.tensor<[b=2, j=3, u=16], f32> {sluice.name = "dy"})
      -> (!sluice.tensor<[b=2, j=3, i=40], f32> {sluice.name = "y"},
          !sluice.tensor<[b=2, j=3], f32> {sluice.name = "rstd"},
          !sluice.tensor<[h=2, j=3, k=36], f32> {sluice.name = "p"},
          !sluice.tensor<[i=40, b=2, j=3], f32> {sluice.name = "xt"},
          !sluice.tensor<[b=2, j=3, u=16], f32> {sluice.name = "h"},
          !sluice.tensor<[u=16, i=40], f32> {sluice.name = "dw"},
          !sluice.tensor<[u=16], f32> {sluice.name = "db"}) {
    %y, %rso = sluice.kernel (%x, %g) {kind = #sluice<kernel_kind fused>, members = ["ln"], sluice.name = "ln"}
        : (!sluice.tensor<[b=2, j=3, i=40], f32>, !sluice.tensor<[i=40], f32>)
        -> (!sluice.tensor<[b=2, j=3, i=40], f32>, !sluice.tensor<[b=2, j=3], f32>) {
    ^bb0(%xa: !sluice.tensor<[b=2, j=3, i=40], f32>, %ga: !sluice.tensor<[i=40], f32>):
      %sum = sluice.reduce sum %xa over ["i"] : !sluice.tensor<[b=2, j=3, i=40], f32> -> !sluice.tensor<[b=2, j=3], f32>
      %mean = sluice.map (%sum) : (!sluice.tensor<[b=2, j=3], f32>) -> !sluice.tensor<[b=2, j=3], f32> {
      ^bb0(%v: f32):
        %c = arith.constant 40.0 : f32
        %q = arith.divf %v, %c fastmath<arcp> : f32
        sluice.yield %q : f32
      }
      %sq = sluice.map (%xa, %mean) : (!sluice.tensor<[b=2, j=3, i=40], f32>, !sluice.tensor<[b=2, j=3], f32>) -> !sluice.tensor<[b=2, j=3, i=40], f32> {
      ^bb0(%a: f32, %m: f32):
        %d = arith.subf %a, %m : f32
        %e = arith.mulf %d, %d : f32
        sluice.yield %e : f32
      }
      %var = sluice.reduce sum %sq over ["i"] : !sluice.tensor<[b=2, j=3, i=40], f32> -> !sluice.tensor<[b=2, j=3], f32>
      %rstd = sluice.map (%var) : (!sluice.tensor<[b=2, j=3], f32>) -> !sluice.tensor<[b=2, j=3], f32> {
      ^bb0(%v: f32):
        %c = arith.constant 40.0 : f32
        %eps = arith.constant 1.0e-5 : f32
        %q = arith.divf %v, %c fastmath<arcp> : f32
        %w = arith.addf %q, %eps : f32
        %rs = math.rsqrt %w : f32
        sluice.yield %rs : f32
      }
      %out = sluice.map (%xa, %mean, %rstd, %ga) : (!sluice.tensor<[b=2, j=3, i=40], f32>, !sluice.tensor<[b=2, j=3], f32>, !sluice.tensor<[b=2, j=3], f32>, !sluice.tensor<[i=40], f32>) -> !sluice.tensor<[b=2, j=3, i=40], f32> {
      ^bb0(%a: f32, %m: f32, %r: f32, %gv: f32):
        %d = arith.subf %a, %m : f32
        %n = arith.mulf %d, %r : f32
        %o = arith.mulf %n, %gv : f32
        sluice.yield %o : f32
      }
      sluice.kernel_yield %out, %rstd : !sluice.tensor<[b=2, j=3, i=40], f32>, !sluice.tensor<[b=2, j=3], f32>
    }
    %p = sluice.kernel (%s) {kind = #sluice<kernel_kind fused>, members = ["softmax"], sluice.name = "softmax"}
        : (!sluice.tensor<[h=2, j=3, k=36], f32>) -> !sluice.tensor<[h=2, j=3, k=36], f32> {
    ^bb0(%sa: !sluice.tensor<[h=2, j=3, k=36], f32>):
      %mx = sluice.reduce max %sa over ["k"] : !sluice.tensor<[h=2, j=3, k=36], f32> -> !sluice.tensor<[h=2, j=3], f32>
      %ex = sluice.map (%sa, %mx) {index_dims = ["j", "k"]} : (!sluice.tensor<[h=2, j=3, k=36], f32>, !sluice.tensor<[h=2, j=3], f32>) -> !sluice.tensor<[h=2, j=3, k=36], f32> {
      ^bb0(%a: f32, %m: f32, %jj: index, %kk: index):
        %d = arith.subf %a, %m : f32
        %e = math.exp %d : f32
        %late = arith.cmpi sgt, %kk, %jj : index
        %z = arith.constant 0.0 : f32
        %r = arith.select %late, %z, %e : f32
        sluice.yield %r : f32
      }
      %sm = sluice.reduce sum %ex over ["k"] : !sluice.tensor<[h=2, j=3, k=36], f32> -> !sluice.tensor<[h=2, j=3], f32>
      %mask = sluice.random_mask {probability = 0.25 : f64, stream = 5 : i64} : !sluice.tensor<[h=2, j=3, k=36], f32>
      %pr = sluice.map (%ex, %sm, %mask) : (!sluice.tensor<[h=2, j=3, k=36], f32>, !sluice.tensor<[h=2, j=3], f32>, !sluice.tensor<[h=2, j=3, k=36], f32>) -> !sluice.tensor<[h=2, j=3, k=36], f32> {
      ^bb0(%e: f32, %t: f32, %mk: f32):
        %q = arith.divf %e, %t fastmath<arcp> : f32
        %w = arith.mulf %q, %mk : f32
        sluice.yield %w : f32
      }
      sluice.kernel_yield %pr : !sluice.tensor<[h=2, j=3, k=36], f32>
    }
    %xt = sluice.kernel (%x) {kind = #sluice<kernel_kind fused>, members = ["transpose"], sluice.name = "transpose"}
        : (!sluice.tensor<[b=2, j=3, i=40], f32>) -> !sluice.tensor<[i=40, b=2, j=3], f32> {
    ^bb0(%xa: !sluice.tensor<[b=2, j=3, i=40], f32>):
      %t = sluice.relayout %xa : !sluice.tensor<[b=2, j=3, i=40], f32> -> !sluice.tensor<[i=40, b=2, j=3], f32>
      sluice.kernel_yield %t : !sluice.tensor<[i=40, b=2, j=3], f32>
    }
    %h = sluice.kernel (%x, %w1, %b1) {kind = #sluice<kernel_kind gemm>, epilogue = #sluice<epilogue bias_gelu>, members = ["ffn1", "ffn1_bias", "act"], sluice.name = "ffn1"}
        : (!sluice.tensor<[b=2, j=3, i=40], f32>, !sluice.tensor<[u=16, i=40], f32>, !sluice.tensor<[u=16], f32>) -> !sluice.tensor<[b=2, j=3, u=16], f32> {
    ^bb0(%xa: !sluice.tensor<[b=2, j=3, i=40], f32>, %wa: !sluice.tensor<[u=16, i=40], f32>, %ba: !sluice.tensor<[u=16], f32>):
      %c = sluice.contract %xa, %wa : (!sluice.tensor<[b=2, j=3, i=40], f32>, !sluice.tensor<[u=16, i=40], f32>) -> !sluice.tensor<[b=2, j=3, u=16], f32>
      %cb = sluice.map (%c, %ba) : (!sluice.tensor<[b=2, j=3, u=16], f32>, !sluice.tensor<[u=16], f32>) -> !sluice.tensor<[b=2, j=3, u=16], f32> {
      ^bb0(%a: f32, %bv: f32):
        %sum = arith.addf %a, %bv : f32
        sluice.yield %sum : f32
      }
      %act = sluice.map (%cb) : (!sluice.tensor<[b=2, j=3, u=16], f32>) -> !sluice.tensor<[b=2, j=3, u=16], f32> {
      ^bb0(%a: f32):
        %half = arith.constant 0.5 : f32
        %one = arith.constant 1.0 : f32
        %k0 = arith.constant 0.797884583 : f32
        %k1 = arith.constant 0.044715 : f32
        %a2 = arith.mulf %a, %a : f32
        %a3 = arith.mulf %a2, %a : f32
        %t1 = arith.mulf %a3, %k1 : f32
        %t2 = arith.addf %a, %t1 : f32
        %t3 = arith.mulf %t2, %k0 : f32
        %th = math.tanh %t3 : f32
        %t4 = arith.addf %th, %one : f32
        %t5 = arith.mulf %a, %half : f32
        %gl = arith.mulf %t5, %t4 : f32
        sluice.yield %gl : f32
      }
      sluice.kernel_yield %act : !sluice.tensor<[b=2, j=3, u=16], f32>
    }
    %dw, %db = sluice.kernel (%dy, %x) {kind = #sluice<kernel_kind gemm>, epilogue = #sluice<epilogue bgradb>, members = ["d_w1", "d_b1"], sluice.name = "d_w1"}
        : (!sluice.tensor<[b=2, j=3, u=16], f32>, !sluice.tensor<[b=2, j=3, i=40], f32>) -> (!sluice.tensor<[u=16, i=40], f32>, !sluice.tensor<[u=16], f32>) {
    ^bb0(%dya: !sluice.tensor<[b=2, j=3, u=16], f32>, %xa: !sluice.tensor<[b=2, j=3, i=40], f32>):
      %dwv = sluice.contract %dya, %xa : (!sluice.tensor<[b=2, j=3, u=16], f32>, !sluice.tensor<[b=2, j=3, i=40], f32>) -> !sluice.tensor<[u=16, i=40], f32>
      %dbv = sluice.reduce sum %dya over ["b", "j"] : !sluice.tensor<[b=2, j=3, u=16], f32> -> !sluice.tensor<[u=16], f32>
      sluice.kernel_yield %dwv, %dbv : !sluice.tensor<[u=16, i=40], f32>, !sluice.tensor<[u=16], f32>
    }
    sluice.return %y, %rso, %p, %xt, %h, %dw, %db : !sluice.tensor<[b=2, j=3, i=40], f32>, !sluice.tensor<[b=2, j=3], f32>, !sluice.tensor<[h=2, j=3, k=36], f32>, !sluice.tensor<[i=40, b=2, j=3], f32>, !sluice.tensor<[b=2, j=3, u=16], f32>, !sluice.tensor<[u=16, i=40], f32>, !sluice.tensor<[u=16], f32>
  }
}
