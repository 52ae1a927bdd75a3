// RUN: sluice-opt %s --pass-pipeline='builtin.module(sluice-autodiff,sluice.graph(sluice-decompose),sluice-recompute-row-statistics,sluice.graph(sluice-fuse{streaming=true}))' | FileCheck %s

// Grouped-query attention through autodiff, recomputation and fusion: the
// query-only dim e (3 query heads per key/value head g) is a batch dim of
// both streaming kernels. The forward saves lse [n, g, e, r]; the backward
// kernel reads q, k, v, the output gradient, lse and the output (the row
// term rowsum(dout * out) is computed inside: no kernel before it) and
// writes dK and dV without e (the kernel sums them over the group, as the
// dense members' contractions do), at their own size at the boundary.
// CHECK-LABEL: sluice.graph @grouped_forward
// CHECK: kernel(%a, %m, %w) {kind = #sluice<kernel_kind streaming>
// CHECK-SAME: streaming = #sluice.streaming<direction = forward, rows = "r", cols = "s", scale = 5.000000e-01 : f64, causal = true
// CHECK-SAME: -> (!sluice.tensor<[n=2, g=2, e=3, r=5, v=6], bf16>, !sluice.tensor<[n=2, g=2, e=3, r=5], f32>)
// CHECK-LABEL: sluice.graph @grouped_backward
// CHECK-SAME: %[[O:[^:]*]]: !sluice.tensor<[n=2, g=2, e=3, r=5, v=6], bf16> {sluice.name = "saved.mix", sluice.saved = "mix"}
// CHECK-NOT: kernel(
// CHECK: kernel(%{{.*}}, %{{.*}}, %{{.*}}, %dout, %{{.*}}, %[[O]]) {kind = #sluice<kernel_kind streaming>
// CHECK-SAME: "weights.grad_dot.output", "weights.grad_sum.output"
// CHECK-SAME: streaming = #sluice.streaming<direction = backward, rows = "r", cols = "s", scale = 5.000000e-01 : f64, causal = true, dropout = 1.000000e-01 : f64, stream = 3>
// CHECK-SAME: -> (!sluice.tensor<[n=2, g=2, e=3, r=5, d=4], bf16>, !sluice.tensor<[n=2, g=2, s=5, d=4], bf16>, !sluice.tensor<[n=2, g=2, s=5, v=6], bf16>)
// CHECK-NOT: kind = #sluice<kernel_kind streaming>
// CHECK: return
sluice.graph @grouped(%a: !sluice.tensor<[n=2, g=2, e=3, r=5, d=4], bf16> {sluice.name = "a"},
                      %m: !sluice.tensor<[n=2, g=2, s=5, d=4], bf16> {sluice.name = "m"},
                      %w: !sluice.tensor<[n=2, g=2, s=5, v=6], bf16> {sluice.name = "w"})
    -> (!sluice.tensor<[n=2, g=2, e=3, r=5, v=6], bf16> {sluice.name = "out"}) {
  %sc = sluice.contract %a, %m {scale = 0.5 : f64, sluice.name = "score"}
      : (!sluice.tensor<[n=2, g=2, e=3, r=5, d=4], bf16>, !sluice.tensor<[n=2, g=2, s=5, d=4], bf16>)
      -> !sluice.tensor<[n=2, g=2, e=3, r=5, s=5], bf16>
  %cm = sluice.causal_mask %sc query "r" key "s" {sluice.name = "causal"} : !sluice.tensor<[n=2, g=2, e=3, r=5, s=5], bf16>
  %pr = sluice.softmax %cm over "s" {sluice.name = "weights"} : !sluice.tensor<[n=2, g=2, e=3, r=5, s=5], bf16>
  %pd, %mask = sluice.dropout %pr {probability = 0.1 : f64, stream = 3 : i64, sluice.name = "drop"}
      : !sluice.tensor<[n=2, g=2, e=3, r=5, s=5], bf16> -> !sluice.tensor<[n=2, g=2, e=3, r=5, s=5], bf16>, !sluice.tensor<[n=2, g=2, e=3, r=5, s=5], bf16>
  %o = sluice.contract %pd, %w {sluice.name = "mix"}
      : (!sluice.tensor<[n=2, g=2, e=3, r=5, s=5], bf16>, !sluice.tensor<[n=2, g=2, s=5, v=6], bf16>)
      -> !sluice.tensor<[n=2, g=2, e=3, r=5, v=6], bf16>
  sluice.return %o : !sluice.tensor<[n=2, g=2, e=3, r=5, v=6], bf16>
}
