// RUN: sluice-opt %s -split-input-file --sluice-decompose --sluice-fuse | FileCheck %s
// RUN: sluice-opt %s -split-input-file --sluice-decompose --sluice-fuse=fold-epilogues=false | FileCheck %s --check-prefix=NOFOLD
// RUN: sluice-opt %s -split-input-file --sluice-decompose --sluice-fuse=enable=false | FileCheck %s --check-prefix=OFF
// RUN: sluice-opt %s -split-input-file --sluice-decompose --sluice-fuse=mask-policy=bitpack | FileCheck %s --check-prefix=BITPACK
// RUN: sluice-opt %s -split-input-file --sluice-decompose --sluice-fuse=max-ops=3 | FileCheck %s --check-prefix=MAXOPS

// Bias + dropout + residual + layernorm: element-wise ops and reductions
// over the same rows make one kernel; the dropout mask is regenerated inside
// it (no input), the intermediates never leave it.
// CHECK-LABEL: sluice.graph @ln_chain
// CHECK: %[[K:.*]] = kernel(%x, %b, %r, %g, %bb) {members = ["drop.random_mask", "bias", "drop", "res", "ln.reduce", "ln.map", "ln.map", "ln.reduce", "ln.map", "ln"], sluice.name = "k0"}
// CHECK-NOT: kernel(
// CHECK: return %[[K]]
// Without fusion: one kernel per primitive, the mask stored element-sized.
// OFF-LABEL: sluice.graph @ln_chain
// OFF-COUNT-10: kernel(
// OFF-NOT: packed
// OFF: return
// Always storing masks: a kernel of its own writes it bit-packed.
// BITPACK-LABEL: sluice.graph @ln_chain
// BITPACK: %[[M:.*]] = kernel() {members = ["drop.random_mask"], packed = array<i64: 0>, sluice.name = "k0"}
// BITPACK: kernel(%x, %b, %[[M]], %r, %g, %bb) {members = ["bias", "drop", "res", "ln.reduce", "ln.map", "ln.map", "ln.reduce", "ln.map", "ln"], sluice.name = "k1"}
// At most three primitives per kernel (a regenerated mask does not count).
// MAXOPS-LABEL: sluice.graph @ln_chain
// MAXOPS: kernel(%x, %b, %r) {members = ["drop.random_mask", "bias", "drop", "res"]
// MAXOPS-COUNT-3: kernel(
sluice.graph @ln_chain(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                       %r: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "r"},
                       %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"},
                       %g: !sluice.tensor<[i=8], f32> {sluice.name = "g"},
                       %bb: !sluice.tensor<[i=8], f32> {sluice.name = "bb"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  %0 = sluice.bias_add %x, %b {sluice.name = "bias"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32>
  %1, %m = sluice.dropout %0 {probability = 0.1 : f64, stream = 1 : i64, sluice.name = "drop"} : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>
  %2 = sluice.residual_add %r, %1 {sluice.name = "res"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32>
  %y, %mean, %rstd = sluice.layernorm %2, %g, %bb over ["i"] {sluice.name = "ln"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>) -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
}

// -----

// Reductions over different dimensions stay in different kernels when
// neither reads the other's result (row and column reductions share a
// kernel only when the column sums need the row sums: @row_then_column).
// CHECK-LABEL: sluice.graph @two_levels
// CHECK: %[[K0:.*]]:2 = kernel(%x) {members = ["square", "rows"], sluice.name = "k0"}
// CHECK: %[[K1:.*]] = kernel(%[[K0]]#0) {members = ["cols"], sluice.name = "k1"}
// CHECK: return %[[K0]]#1, %[[K1]]
sluice.graph @two_levels(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4], f32> {sluice.name = "rows"}, !sluice.tensor<[i=8], f32> {sluice.name = "cols"}) {
  %t = sluice.map (%x) {sluice.name = "square"} : (!sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
  ^bb0(%v: f32):
    %s = arith.mulf %v, %v : f32
    sluice.yield %s : f32
  }
  %rows = sluice.reduce sum %t over ["i"] {sluice.name = "rows"} : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4], f32>
  %cols = sluice.reduce sum %t over ["j"] {sluice.name = "cols"} : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8], f32>
  sluice.return %rows, %cols : !sluice.tensor<[j=4], f32>, !sluice.tensor<[i=8], f32>
}

// -----

// Column sums of rows normalized by their own row sums (a layer-norm
// backward's shape: the row statistics, the row-wise result, the bias
// gradient over the rows) make one kernel: row blocks over chunks of rows
// whose threads also sum the columns (docs/Fusion.md, "Row and column
// reductions"), so x is read once. The cast of the column sums to f16 runs
// per column in the same kernel.
// CHECK-LABEL: sluice.graph @row_then_column
// CHECK: %[[K:.*]]:3 = kernel(%x) {members = ["square", "rows", "normalized", "cols", "cols16"], sluice.name = "k0"}
// CHECK-NOT: kernel(
// CHECK: return %[[K]]#0, %[[K]]#1, %[[K]]#2
// OFF-LABEL: sluice.graph @row_then_column
// OFF-COUNT-5: kernel(
sluice.graph @row_then_column(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4], f32> {sluice.name = "rows"}, !sluice.tensor<[j=4, i=8], f32> {sluice.name = "n"},
        !sluice.tensor<[i=8], f16> {sluice.name = "cols"}) {
  %t = sluice.map (%x) {sluice.name = "square"} : (!sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
  ^bb0(%v: f32):
    %s = arith.mulf %v, %v : f32
    sluice.yield %s : f32
  }
  %rows = sluice.reduce sum %t over ["i"] {sluice.name = "rows"} : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4], f32>
  %n = sluice.map (%t, %rows) {sluice.name = "normalized"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
  ^bb0(%a: f32, %r: f32):
    %q = arith.divf %a, %r : f32
    sluice.yield %q : f32
  }
  %cols = sluice.reduce sum %n over ["j"] {sluice.name = "cols"} : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8], f32>
  %c16 = sluice.map (%cols) {sluice.name = "cols16"} : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f16> {
  ^bb0(%c: f32):
    sluice.yield %c : f32
  }
  sluice.return %rows, %n, %c16 : !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f16>
}

// -----

// A contraction stays a library call; cuBLASLt applies the bias and the
// tanh-gelu as its epilogue.
// CHECK-LABEL: sluice.graph @ffn_gelu_tanh
// CHECK: kernel(%x, %w, %b) {epilogue = #sluice<epilogue bias_gelu>, kind = #sluice<kernel_kind gemm>, members = ["fc", "fc_bias", "act"], sluice.name = "k0"}
// CHECK-NOT: kernel(
// NOFOLD-LABEL: sluice.graph @ffn_gelu_tanh
// NOFOLD: %[[G:.*]] = kernel(%x, %w) {kind = #sluice<kernel_kind gemm>, members = ["fc"], sluice.name = "k0"}
// NOFOLD: kernel(%[[G]], %b) {members = ["fc_bias", "act"], sluice.name = "k1"}
sluice.graph @ffn_gelu_tanh(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                  %w: !sluice.tensor<[u=16, i=8], f32> {sluice.name = "w"},
                  %b: !sluice.tensor<[u=16], f32> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, u=16], f32> {sluice.name = "y"}) {
  %h = sluice.contract %x, %w {sluice.name = "fc"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=16, i=8], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %hb = sluice.bias_add %h, %b {sluice.name = "fc_bias"} : (!sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[u=16], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %a = sluice.gelu_tanh %hb {sluice.name = "act"} : !sluice.tensor<[j=4, u=16], f32>
  sluice.return %a : !sluice.tensor<[j=4, u=16], f32>
}

// -----

// cuBLASLt's GELU epilogue is the tanh form: the erf gelu runs in a kernel.
// CHECK-LABEL: sluice.graph @ffn_gelu_erf
// CHECK: %[[G:.*]] = kernel(%x, %w, %b) {epilogue = #sluice<epilogue bias>, kind = #sluice<kernel_kind gemm>, members = ["fc", "fc_bias"], sluice.name = "k0"}
// CHECK: kernel(%[[G]]) {members = ["act"], sluice.name = "k1"}
sluice.graph @ffn_gelu_erf(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                  %w: !sluice.tensor<[u=16, i=8], f32> {sluice.name = "w"},
                  %b: !sluice.tensor<[u=16], f32> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, u=16], f32> {sluice.name = "y"}) {
  %h = sluice.contract %x, %w {sluice.name = "fc"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=16, i=8], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %hb = sluice.bias_add %h, %b {sluice.name = "fc_bias"} : (!sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[u=16], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %a = sluice.gelu %hb {sluice.name = "act"} : !sluice.tensor<[j=4, u=16], f32>
  sluice.return %a : !sluice.tensor<[j=4, u=16], f32>
}

// -----

// A bias gradient, the sum of the weight gradient's operand over the
// contracted dimension, folds into the GEMM (CUBLASLT_EPILOGUE_BGRADB).
// CHECK-LABEL: sluice.graph @wgrad
// CHECK: %[[K:.*]]:2 = kernel(%dy, %x) {epilogue = #sluice<epilogue bgradb>, kind = #sluice<kernel_kind gemm>, members = ["fc.grad_rhs", "fc_bias.grad"], sluice.name = "k0"}
// CHECK: return %[[K]]#0, %[[K]]#1
// NOFOLD-LABEL: sluice.graph @wgrad
// NOFOLD-COUNT-2: kernel(
sluice.graph @wgrad(%dy: !sluice.tensor<[j=4, u=16], f32> {sluice.name = "dy"},
                    %x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[u=16, i=8], f32> {sluice.name = "d_w"}, !sluice.tensor<[u=16], f32> {sluice.name = "d_b"}) {
  %dw = sluice.contract %dy, %x {sluice.name = "fc.grad_rhs"} : (!sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[u=16, i=8], f32>
  %db = sluice.reduce sum %dy over ["j"] {sluice.name = "fc_bias.grad"} : !sluice.tensor<[j=4, u=16], f32> -> !sluice.tensor<[u=16], f32>
  sluice.return %dw, %db : !sluice.tensor<[u=16, i=8], f32>, !sluice.tensor<[u=16], f32>
}

// -----

// m1 -> (view) -> mm -> m2 and m1 -> m2: fusing m1 with m2 would make a
// cycle through the contraction, so they stay apart. Renames stay views.
// CHECK-LABEL: sluice.graph @cycle
// CHECK: %[[A:.*]] = kernel(%x) {members = ["m1"], sluice.name = "k0"}
// CHECK: %[[V:.*]] = rename %[[A]]
// CHECK: %[[B:.*]] = kernel(%[[V]], %w) {kind = #sluice<kernel_kind gemm>, members = ["mm"], sluice.name = "k1"}
// CHECK: kernel(%[[A]], %[[B]]) {members = ["m2"], sluice.name = "k2"}
sluice.graph @cycle(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                    %w: !sluice.tensor<[k=8, i=8], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  %m1 = sluice.map (%x) {sluice.name = "m1"} : (!sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
  ^bb0(%v: f32):
    %s = arith.mulf %v, %v : f32
    sluice.yield %s : f32
  }
  %r = sluice.rename %m1 {sluice.name = "view"} : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, k=8], f32>
  %c = sluice.contract %r, %w {sluice.name = "mm"} : (!sluice.tensor<[j=4, k=8], f32>, !sluice.tensor<[k=8, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32>
  %m2 = sluice.map (%m1, %c) {sluice.name = "m2"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    sluice.yield %s : f32
  }
  sluice.return %m2 : !sluice.tensor<[j=4, i=8], f32>
}
