// --sluice-lower-to-exec on the hand-fused kernels of emit-kernels.mlir
// (test/Codegen): what the lowering decides, read as sluice_exec IR. CUDA
// folds the bias+gelu epilogue into a cuBLASLt GEMM (descriptor 0) and
// writes C straight into the output; the C++ target folds nothing, so the
// same GEMM has no epilogue and the epilogue runs as a generated kernel in
// place on C. The bias gradient of the second GEMM is, on CUDA, cuBLASLt's
// BGRADB epilogue (the sum of B = dy over k, through the bias pointer:
// descriptor 1, no kernel of its own); the C++ target runs it as a
// generated reduction after the GEMM, and so does the CUDA fallback region.
// RUN: sluice-opt %S/../Codegen/emit-kernels.mlir --sluice-lower-to-exec | FileCheck %s --check-prefixes=CHECK,CUDA
// RUN: sluice-opt %S/../Codegen/emit-kernels.mlir '--sluice-lower-to-exec=target=cpp' | FileCheck %s --check-prefixes=CHECK,CPP
// A training layer with bit-packed dropout masks: the mask kernels clear
// their words (i1 pointers), and the backward entry has its own pointer
// ops for the tensors the forward saved in the arena. Without the streaming
// rule, so that the attention dropout mask is one of them (a streaming
// kernel regenerates its mask: test/Fusion/streaming-emit.test).
// RUN: sluicec %S/../Compile/Inputs/post_relu_f32_train_dropout.json --emit=ir --mask-policy=bitpack --fuse-streaming=off | sluice-opt --sluice-lower-to-exec | FileCheck %s --check-prefix=TRAIN

// The graphs stay; the entries follow them.
// CHECK: sluice.graph @fused
// CHECK-LABEL: sluice_exec.entry @sluice_fused_forward {
// CHECK-DAG: %[[X:.*]] = sluice_exec.arg "x"
// CHECK-DAG: %[[G:.*]] = sluice_exec.arg "g"
// CHECK-DAG: %[[W1:.*]] = sluice_exec.arg "w1"
// CHECK-DAG: %[[B1:.*]] = sluice_exec.arg "b1"
// CHECK-DAG: %[[Y:.*]] = sluice_exec.arg "y"
// CHECK-DAG: %[[RSTD:.*]] = sluice_exec.arg "rstd"
// CHECK-DAG: %[[H:.*]] = sluice_exec.arg "h"
// CHECK: sluice_exec.timer_begin 0, 0
// CHECK-NEXT: sluice_exec.launch @sluice_kernel_0_ln schedule <mode = row_block, reduction = warp, grid = 6, threads = 32, vector = 4, elements_per_thread = 4, outer = ["b", "j"], inner = ["i"]> (%[[X]], %[[G]]) -> (%[[Y]], %[[RSTD]]) {clear_bytes = array<i64: 0, 0>, input_types = [f32, f32], label = "kernel 'ln' (fused: ln)", output_types = [f32, f32]}
// CHECK-NEXT: sluice_exec.timer_end 0, 0
// CHECK: sluice_exec.launch @sluice_kernel_2_transpose schedule <mode = elementwise, reduction = none, grid = 1, threads = 256,
// CHECK: sluice_exec.timer_begin 0, 3
// CUDA-NEXT: sluice_exec.gemm %[[W1]] * %[[X]] -> %[[H]] bias %[[B1]] {{{.*}}descriptor = 0 : i64, epilogue = #sluice_exec.epilogue<bias_gelu>, k = 40 : i64, {{.*}}lda = 40 : i64, ldb = 40 : i64, ldc = 16 : i64, m = 16 : i64, n = 6 : i64, {{.*}}trans_a = #sluice_exec.blas_op<t>, trans_b = #sluice_exec.blas_op<n>} fallback {
// Its fallback (where cuBLASLt refuses the epilogue at run time) is what the
// C++ target runs: the plain GEMM (a slot of its own, numbered after the
// top-level GEMMs') and the epilogue kernel in place on C.
// CUDA-NEXT: sluice_exec.gemm %[[W1]] * %[[X]] -> %[[H]] {{{.*}}descriptor = 2 : i64, epilogue = #sluice_exec.epilogue<none>, k = 40 : i64, {{.*}}lda = 40 : i64, ldb = 40 : i64, ldc = 16 : i64, m = 16 : i64, n = 6 : i64, {{.*}}trans_a = #sluice_exec.blas_op<t>, trans_b = #sluice_exec.blas_op<n>}
// CUDA-NEXT: sluice_exec.launch @sluice_fallback_0_ffn1_epilogue schedule <{{.*}}> (%[[H]], %[[B1]]) -> (%[[H]])
// CUDA-NEXT: {{^ *}}}{{$}}
// CUDA-NEXT: sluice_exec.timer_end 0, 3
// CPP-NEXT: sluice_exec.gemm %[[W1]] * %[[X]] -> %[[H]] {{{.*}}epilogue = #sluice_exec.epilogue<none>, k = 40 : i64,
// CPP-NEXT: sluice_exec.launch @sluice_kernel_3_ffn1_epilogue schedule <{{.*}}> (%[[H]], %[[B1]]) -> (%[[H]])
// CPP-NEXT: sluice_exec.timer_end 0, 3
// CUDA: sluice_exec.gemm %[[DA:[0-9]+]] * %[[DB:[0-9]+]] -> %[[DW:[0-9]+]] bias %[[DBIAS:[0-9]+]] {{{.*}}descriptor = 1 : i64, epilogue = #sluice_exec.epilogue<bgradb>, k = 6 : i64, label = "kernel 'd_w1' (gemm: d_w1, d_b1)", lda = 40 : i64, ldb = 16 : i64, ldc = 40 : i64, m = 40 : i64, n = 16 : i64, {{.*}}trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<t>} fallback {
// CUDA-NEXT: sluice_exec.gemm %[[DA]] * %[[DB]] -> %[[DW]] {{{.*}}descriptor = 3 : i64, epilogue = #sluice_exec.epilogue<none>, k = 6 : i64,
// CUDA-NEXT: sluice_exec.launch @sluice_fallback_1_d_w1_bgrad schedule <mode = column_block, {{.*}}> (%[[DB]]) -> (%[[DBIAS]]) {{{.*}}label = "kernel 'd_w1' (gemm: d_w1, d_b1) bgrad"
// CUDA-NEXT: {{^ *}}}{{$}}
// CPP: sluice_exec.gemm {{.*}}epilogue = #sluice_exec.epilogue<none>, k = 6 : i64, label = "kernel 'd_w1' (gemm: d_w1, d_b1)", lda = 40 : i64, ldb = 16 : i64, ldc = 40 : i64, m = 40 : i64, n = 16 : i64, {{.*}}trans_a = #sluice_exec.blas_op<n>, trans_b = #sluice_exec.blas_op<t>}
// CPP-NEXT: sluice_exec.launch @sluice_kernel_4_d_w1_bgrad schedule <mode = row_block, reduction = warp, grid = 16, threads = 32,
// CHECK-NEXT: sluice_exec.timer_end 0, 4
// CHECK-NEXT: }

// TRAIN-LABEL: sluice_exec.entry @sluice_post_relu_f32_train_dropout_forward {
// TRAIN: sluice_exec.launch @sluice_kernel_0_k4 schedule <mode = elementwise, reduction = none, grid = 1, threads = 128, {{.*}}> () -> (%[[MASK:[0-9]+]]) {clear_bytes = array<i64: 16>, input_types = [], label = "kernel 'k4' (fused: attn_dropout.mask)", output_types = [i1]}
// TRAIN: sluice_exec.launch @sluice_kernel_1_k5 schedule <mode = row_block, {{.*}}grid = 20, threads = 32, {{.*}}> (%{{.*}}, %[[MASK]]) -> ({{.*}}) {clear_bytes = array<i64: 0, 0>, input_types = [f32, i1]
// TRAIN-LABEL: sluice_exec.entry @sluice_post_relu_f32_train_dropout_backward {
// The saved tensors are read from the saved region, at the forward's offsets.
// TRAIN: sluice_exec.saved
// TRAIN: sluice_exec.arena
// TRAIN: sluice_exec.launch @sluice_kernel_{{[0-9]+}}_k15 schedule <{{.*}}> () -> (%{{.*}}) {clear_bytes = array<i64: 16>, {{.*}}label = "kernel 'k15' (fused: attn_dropout.mask.recompute)", output_types = [i1]}
