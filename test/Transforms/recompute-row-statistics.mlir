// RUN: sluice-opt %s --pass-pipeline='builtin.module(sluice-autodiff,sluice.graph(sluice-decompose),sluice-recompute-row-statistics)' | FileCheck %s
// RUN: sluice-opt %s --pass-pipeline='builtin.module(sluice-autodiff,sluice.graph(sluice-decompose),sluice-recompute-row-statistics,sluice.graph(sluice-fuse{streaming=true}))' | FileCheck %s --check-prefix=FUSED

// A contraction-softmax-dropout-contraction chain with no attention names.
// The forward saves the row statistic (lse = max + log(sum), in f32 for an
// f16 graph) instead of the probabilities and their dropout; the backward
// recomputes them from the saved contraction operands and lse, redraws the
// mask from its stream, and takes the softmax gradient's row term from the
// output and its gradient.
// CHECK-LABEL: sluice.graph @mixer_forward
// CHECK-SAME: sluice.baseline_bytes =
// CHECK: %[[MAX:.*]] = reduce max %{{.*}} over ["s"]
// CHECK: %[[SUM:.*]] = reduce sum %{{.*}} over ["s"]
// CHECK: %[[LSE:.*]] = map(%[[MAX]], %[[SUM]]) {sluice.name = "weights.lse"{{.*}} -> !sluice.tensor<[n=2, r=3], f32>
// CHECK: math.log
// CHECK: return
// CHECK-SAME: %[[LSE]]
// CHECK-NOT: sluice.saved = "weights"
// CHECK-NOT: sluice.saved = "drop"
// CHECK-LABEL: sluice.graph @mixer_backward
// CHECK-SAME: %[[SLSE:[^:]*]]: !sluice.tensor<[n=2, r=3], f32> {sluice.name = "saved.weights.lse", sluice.saved = "weights.lse"}
// CHECK: %[[S:.*]] = contract %{{.*}}, %{{.*}} {scale = 5.000000e-01 : f64, sluice.name = "score.recompute"}
// CHECK: %[[P:.*]] = map(%[[S]], %[[SLSE]]) {sluice.name = "weights.recompute"
// CHECK: math.exp
// CHECK: %[[MASK:.*]] = random_mask {probability = 2.500000e-01 : f64, sluice.name = "drop.mask.recompute"{{.*}}stream = 7
// CHECK: map(%[[P]], %[[MASK]]) {sluice.name = "drop.recompute"
// CHECK: %[[DOT:.*]] = map(%{{.*}}, %{{.*}}) {sluice.name = "weights.grad_dot.output"{{.*}} -> !sluice.tensor<[n=2, r=3, e=6], f32>
// CHECK: reduce sum %[[DOT]] over ["e"]
// CHECK-NOT: "weights.grad_sum"
// CHECK: return

// Fused: one streaming kernel each way; the backward's reads q, k, v, the
// output gradient, lse and the saved output (it computes the row term
// rowsum(dout * out) itself: those two ops are members, no kernel before
// it), and writes the three gradients.
// FUSED-LABEL: sluice.graph @mixer_forward
// FUSED: kernel(%a, %m, %w) {kind = #sluice<kernel_kind streaming>
// FUSED-SAME: streaming = #sluice.streaming<direction = forward, rows = "r", cols = "s"
// FUSED-SAME: -> (!sluice.tensor<[n=2, r=3, e=6], f16>, !sluice.tensor<[n=2, r=3], f32>)
// FUSED-LABEL: sluice.graph @mixer_backward
// FUSED-SAME: %[[O:[^:]*]]: !sluice.tensor<[n=2, r=3, e=6], f16> {sluice.name = "saved.mix", sluice.saved = "mix"}
// FUSED-NOT: kernel(
// FUSED: kernel(%{{.*}}, %{{.*}}, %{{.*}}, %dout, %{{.*}}, %[[O]]) {kind = #sluice<kernel_kind streaming>
// FUSED-SAME: "drop.grad0", "weights.grad_dot.output", "weights.grad_sum.output", "weights.grad",
// FUSED-SAME: streaming = #sluice.streaming<direction = backward, rows = "r", cols = "s", scale = 5.000000e-01 : f64, causal = false, dropout = 2.500000e-01 : f64, stream = 7>
// FUSED-SAME: -> (!sluice.tensor<[n=2, r=3, d=4], f16>, !sluice.tensor<[n=2, s=5, d=4], f16>, !sluice.tensor<[n=2, s=5, e=6], f16>)
sluice.graph @mixer(%a: !sluice.tensor<[n=2, r=3, d=4], f16> {sluice.name = "a"},
                    %m: !sluice.tensor<[n=2, s=5, d=4], f16> {sluice.name = "m"},
                    %w: !sluice.tensor<[n=2, s=5, e=6], f16> {sluice.name = "w"})
    -> (!sluice.tensor<[n=2, r=3, e=6], f16> {sluice.name = "out"}) {
  %sc = sluice.contract %a, %m {scale = 0.5 : f64, sluice.name = "score"}
      : (!sluice.tensor<[n=2, r=3, d=4], f16>, !sluice.tensor<[n=2, s=5, d=4], f16>)
      -> !sluice.tensor<[n=2, r=3, s=5], f16>
  %pr = sluice.softmax %sc over "s" {sluice.name = "weights"} : !sluice.tensor<[n=2, r=3, s=5], f16>
  %pd, %mask = sluice.dropout %pr {probability = 0.25 : f64, stream = 7 : i64, sluice.name = "drop"}
      : !sluice.tensor<[n=2, r=3, s=5], f16> -> !sluice.tensor<[n=2, r=3, s=5], f16>, !sluice.tensor<[n=2, r=3, s=5], f16>
  %o = sluice.contract %pd, %w {sluice.name = "mix"}
      : (!sluice.tensor<[n=2, r=3, s=5], f16>, !sluice.tensor<[n=2, s=5, e=6], f16>)
      -> !sluice.tensor<[n=2, r=3, e=6], f16>
  sluice.return %o : !sluice.tensor<[n=2, r=3, e=6], f16>
}
