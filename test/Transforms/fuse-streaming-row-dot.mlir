// RUN: sluice-opt %s -split-input-file --sluice-fuse=streaming=true | FileCheck %s

// The backward streaming rule absorbs the softmax gradient's row term
// d = rowsum(dout * out) (a product map and a sum over the dims d lacks, as
// the recomputation rewrite writes it) when nothing else reads d: the
// kernel reads `out` in d's place and computes d per query row itself, so
// no kernel before it writes d (docs/Fusion.md, "Backward by
// recomputation"). Hand-written backward graphs with two value dims (e, f)
// and no attention names.
// CHECK-LABEL: sluice.graph @blend
// CHECK-NOT: kernel(
// CHECK: kernel(%a, %m, %w, %dout, %lse, %out) {kind = #sluice<kernel_kind streaming>, members = ["score", "weights", "mix.grad_lhs", "mix.grad_rhs", "rowdot.product", "rowdot.sum", "weights.grad", "score.grad_lhs", "score.grad_rhs"]
// CHECK-SAME: streaming = #sluice.streaming<direction = backward, rows = "r", cols = "s"
// CHECK-NOT: kernel(
// CHECK: return
sluice.graph @blend(%w: !sluice.tensor<[n=2, s=5, e=2, f=3], f32> {sluice.name = "w"},
    %m: !sluice.tensor<[n=2, s=5, d=4], f32> {sluice.name = "m"},
    %a: !sluice.tensor<[n=2, r=3, d=4], f32> {sluice.name = "a"},
    %lse: !sluice.tensor<[n=2, r=3], f32> {sluice.name = "lse"},
    %out: !sluice.tensor<[n=2, r=3, e=2, f=3], f32> {sluice.name = "out"},
    %dout: !sluice.tensor<[n=2, r=3, e=2, f=3], f32> {sluice.name = "dout"})
    -> (!sluice.tensor<[n=2, r=3, d=4], f32> {sluice.name = "d_a"}, !sluice.tensor<[n=2, s=5, d=4], f32> {sluice.name = "d_m"}, !sluice.tensor<[n=2, s=5, e=2, f=3], f32> {sluice.name = "d_w"})
    attributes {phase = #sluice<phase backward>} {
  %s = contract %a, %m {scale = 5.000000e-01 : f64, sluice.name = "score"} : (!sluice.tensor<[n=2, r=3, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>) -> !sluice.tensor<[n=2, r=3, s=5], f32>
  %p = map(%s, %lse) {sluice.name = "weights"} : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, r=3], f32>) -> !sluice.tensor<[n=2, r=3, s=5], f32> {
  ^bb0(%x: f32, %y: f32):
    %z = arith.subf %x, %y : f32
    %e = math.exp %z : f32
    sluice.yield %e : f32
  }
  %dp = contract %dout, %w {sluice.name = "mix.grad_lhs"} : (!sluice.tensor<[n=2, r=3, e=2, f=3], f32>, !sluice.tensor<[n=2, s=5, e=2, f=3], f32>) -> !sluice.tensor<[n=2, r=3, s=5], f32>
  %gw = contract %p, %dout {sluice.name = "mix.grad_rhs"} : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, r=3, e=2, f=3], f32>) -> !sluice.tensor<[n=2, s=5, e=2, f=3], f32>
  %prod = map(%dout, %out) {sluice.name = "rowdot.product"} : (!sluice.tensor<[n=2, r=3, e=2, f=3], f32>, !sluice.tensor<[n=2, r=3, e=2, f=3], f32>) -> !sluice.tensor<[n=2, r=3, e=2, f=3], f32> {
  ^bb0(%x: f32, %y: f32):
    %z = arith.mulf %x, %y : f32
    sluice.yield %z : f32
  }
  %row = reduce sum %prod over ["e", "f"] {sluice.name = "rowdot.sum"} : !sluice.tensor<[n=2, r=3, e=2, f=3], f32> -> !sluice.tensor<[n=2, r=3], f32>
  %ds = map(%p, %dp, %row) {sluice.name = "weights.grad"} : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, r=3], f32>) -> !sluice.tensor<[n=2, r=3, s=5], f32> {
  ^bb0(%x: f32, %y: f32, %v: f32):
    %z = arith.subf %y, %v : f32
    %t = arith.mulf %x, %z : f32
    sluice.yield %t : f32
  }
  %ga = contract %ds, %m {scale = 5.000000e-01 : f64, sluice.name = "score.grad_lhs"} : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>) -> !sluice.tensor<[n=2, r=3, d=4], f32>
  %gm = contract %a, %ds {scale = 5.000000e-01 : f64, sluice.name = "score.grad_rhs"} : (!sluice.tensor<[n=2, r=3, d=4], f32>, !sluice.tensor<[n=2, r=3, s=5], f32>) -> !sluice.tensor<[n=2, s=5, d=4], f32>
  return %ga, %gm, %gw : !sluice.tensor<[n=2, r=3, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>, !sluice.tensor<[n=2, s=5, e=2, f=3], f32>
}

// -----

// Escape: `out` lays out its value dims (f, e) unlike dout (e, f), so the
// runtime kernels could not read it through dout's strides roles: the row
// term stays a kernel of its own and the streaming kernel reads d.
// CHECK-LABEL: sluice.graph @blend_permuted
// CHECK: %[[ROW:.*]] = kernel(%dout, %out) {members = ["rowdot.product", "rowdot.sum"]
// CHECK: kernel(%a, %m, %w, %dout, %lse, %[[ROW]]) {kind = #sluice<kernel_kind streaming>, members = ["score", "weights", "mix.grad_lhs", "mix.grad_rhs", "weights.grad", "score.grad_lhs", "score.grad_rhs"]
sluice.graph @blend_permuted(%w: !sluice.tensor<[n=2, s=5, e=2, f=3], f32> {sluice.name = "w"},
    %m: !sluice.tensor<[n=2, s=5, d=4], f32> {sluice.name = "m"},
    %a: !sluice.tensor<[n=2, r=3, d=4], f32> {sluice.name = "a"},
    %lse: !sluice.tensor<[n=2, r=3], f32> {sluice.name = "lse"},
    %out: !sluice.tensor<[n=2, r=3, f=3, e=2], f32> {sluice.name = "out"},
    %dout: !sluice.tensor<[n=2, r=3, e=2, f=3], f32> {sluice.name = "dout"})
    -> (!sluice.tensor<[n=2, r=3, d=4], f32> {sluice.name = "d_a"}, !sluice.tensor<[n=2, s=5, d=4], f32> {sluice.name = "d_m"}, !sluice.tensor<[n=2, s=5, e=2, f=3], f32> {sluice.name = "d_w"})
    attributes {phase = #sluice<phase backward>} {
  %s = contract %a, %m {scale = 5.000000e-01 : f64, sluice.name = "score"} : (!sluice.tensor<[n=2, r=3, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>) -> !sluice.tensor<[n=2, r=3, s=5], f32>
  %p = map(%s, %lse) {sluice.name = "weights"} : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, r=3], f32>) -> !sluice.tensor<[n=2, r=3, s=5], f32> {
  ^bb0(%x: f32, %y: f32):
    %z = arith.subf %x, %y : f32
    %e = math.exp %z : f32
    sluice.yield %e : f32
  }
  %dp = contract %dout, %w {sluice.name = "mix.grad_lhs"} : (!sluice.tensor<[n=2, r=3, e=2, f=3], f32>, !sluice.tensor<[n=2, s=5, e=2, f=3], f32>) -> !sluice.tensor<[n=2, r=3, s=5], f32>
  %gw = contract %p, %dout {sluice.name = "mix.grad_rhs"} : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, r=3, e=2, f=3], f32>) -> !sluice.tensor<[n=2, s=5, e=2, f=3], f32>
  %prod = map(%dout, %out) {sluice.name = "rowdot.product"} : (!sluice.tensor<[n=2, r=3, e=2, f=3], f32>, !sluice.tensor<[n=2, r=3, f=3, e=2], f32>) -> !sluice.tensor<[n=2, r=3, e=2, f=3], f32> {
  ^bb0(%x: f32, %y: f32):
    %z = arith.mulf %x, %y : f32
    sluice.yield %z : f32
  }
  %row = reduce sum %prod over ["e", "f"] {sluice.name = "rowdot.sum"} : !sluice.tensor<[n=2, r=3, e=2, f=3], f32> -> !sluice.tensor<[n=2, r=3], f32>
  %ds = map(%p, %dp, %row) {sluice.name = "weights.grad"} : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, r=3], f32>) -> !sluice.tensor<[n=2, r=3, s=5], f32> {
  ^bb0(%x: f32, %y: f32, %v: f32):
    %z = arith.subf %y, %v : f32
    %t = arith.mulf %x, %z : f32
    sluice.yield %t : f32
  }
  %ga = contract %ds, %m {scale = 5.000000e-01 : f64, sluice.name = "score.grad_lhs"} : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>) -> !sluice.tensor<[n=2, r=3, d=4], f32>
  %gm = contract %a, %ds {scale = 5.000000e-01 : f64, sluice.name = "score.grad_rhs"} : (!sluice.tensor<[n=2, r=3, d=4], f32>, !sluice.tensor<[n=2, r=3, s=5], f32>) -> !sluice.tensor<[n=2, s=5, d=4], f32>
  return %ga, %gm, %gw : !sluice.tensor<[n=2, r=3, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>, !sluice.tensor<[n=2, s=5, e=2, f=3], f32>
}

// -----

// Escape: d is also a result of the graph, so it is written anyway: the
// row term stays a kernel of its own.
// CHECK-LABEL: sluice.graph @blend_row_returned
// CHECK: %[[ROW:.*]] = kernel(%dout, %out) {members = ["rowdot.product", "rowdot.sum"]
// CHECK: kernel(%a, %m, %w, %dout, %lse, %[[ROW]]) {kind = #sluice<kernel_kind streaming>
sluice.graph @blend_row_returned(%w: !sluice.tensor<[n=2, s=5, e=2, f=3], f32> {sluice.name = "w"},
    %m: !sluice.tensor<[n=2, s=5, d=4], f32> {sluice.name = "m"},
    %a: !sluice.tensor<[n=2, r=3, d=4], f32> {sluice.name = "a"},
    %lse: !sluice.tensor<[n=2, r=3], f32> {sluice.name = "lse"},
    %out: !sluice.tensor<[n=2, r=3, e=2, f=3], f32> {sluice.name = "out"},
    %dout: !sluice.tensor<[n=2, r=3, e=2, f=3], f32> {sluice.name = "dout"})
    -> (!sluice.tensor<[n=2, r=3, d=4], f32> {sluice.name = "d_a"}, !sluice.tensor<[n=2, s=5, d=4], f32> {sluice.name = "d_m"}, !sluice.tensor<[n=2, s=5, e=2, f=3], f32> {sluice.name = "d_w"}, !sluice.tensor<[n=2, r=3], f32> {sluice.name = "row"})
    attributes {phase = #sluice<phase backward>} {
  %s = contract %a, %m {scale = 5.000000e-01 : f64, sluice.name = "score"} : (!sluice.tensor<[n=2, r=3, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>) -> !sluice.tensor<[n=2, r=3, s=5], f32>
  %p = map(%s, %lse) {sluice.name = "weights"} : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, r=3], f32>) -> !sluice.tensor<[n=2, r=3, s=5], f32> {
  ^bb0(%x: f32, %y: f32):
    %z = arith.subf %x, %y : f32
    %e = math.exp %z : f32
    sluice.yield %e : f32
  }
  %dp = contract %dout, %w {sluice.name = "mix.grad_lhs"} : (!sluice.tensor<[n=2, r=3, e=2, f=3], f32>, !sluice.tensor<[n=2, s=5, e=2, f=3], f32>) -> !sluice.tensor<[n=2, r=3, s=5], f32>
  %gw = contract %p, %dout {sluice.name = "mix.grad_rhs"} : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, r=3, e=2, f=3], f32>) -> !sluice.tensor<[n=2, s=5, e=2, f=3], f32>
  %prod = map(%dout, %out) {sluice.name = "rowdot.product"} : (!sluice.tensor<[n=2, r=3, e=2, f=3], f32>, !sluice.tensor<[n=2, r=3, e=2, f=3], f32>) -> !sluice.tensor<[n=2, r=3, e=2, f=3], f32> {
  ^bb0(%x: f32, %y: f32):
    %z = arith.mulf %x, %y : f32
    sluice.yield %z : f32
  }
  %row = reduce sum %prod over ["e", "f"] {sluice.name = "rowdot.sum"} : !sluice.tensor<[n=2, r=3, e=2, f=3], f32> -> !sluice.tensor<[n=2, r=3], f32>
  %ds = map(%p, %dp, %row) {sluice.name = "weights.grad"} : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, r=3], f32>) -> !sluice.tensor<[n=2, r=3, s=5], f32> {
  ^bb0(%x: f32, %y: f32, %v: f32):
    %z = arith.subf %y, %v : f32
    %t = arith.mulf %x, %z : f32
    sluice.yield %t : f32
  }
  %ga = contract %ds, %m {scale = 5.000000e-01 : f64, sluice.name = "score.grad_lhs"} : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>) -> !sluice.tensor<[n=2, r=3, d=4], f32>
  %gm = contract %a, %ds {scale = 5.000000e-01 : f64, sluice.name = "score.grad_rhs"} : (!sluice.tensor<[n=2, r=3, d=4], f32>, !sluice.tensor<[n=2, r=3, s=5], f32>) -> !sluice.tensor<[n=2, s=5, d=4], f32>
  return %ga, %gm, %gw, %row : !sluice.tensor<[n=2, r=3, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>, !sluice.tensor<[n=2, s=5, e=2, f=3], f32>, !sluice.tensor<[n=2, r=3], f32>
}
