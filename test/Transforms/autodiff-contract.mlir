// RUN: sluice-opt --sluice-autodiff %s | %strip-origins | FileCheck %s

// A contraction, a broadcast bias and relu. The backward reads the relu's
// input, both contraction operands (x and w are returned as saved tensors),
// and nothing for the bias (its derivative is 1). An argument no result
// depends on gets a zero gradient; sluice.shape follows the gradient.

// CHECK-LABEL: sluice.graph @ffn_forward(
// CHECK-SAME:    %x: {{.*}} {sluice.name = "x"}
// CHECK-SAME:    -> ({{.*}} {sluice.name = "y"}, {{.*}} {sluice.name = "saved.bias1", sluice.saved = "bias1"}, {{.*}} {sluice.name = "saved.w", sluice.saved = "w"}, {{.*}} {sluice.name = "saved.x", sluice.saved = "x"})
// CHECK:         %[[H:.*]] = contract %x, %w {sluice.name = "ffn1"}
// CHECK:         %[[HB:.*]] = map(%[[H]], %b) {sluice.name = "bias1"}
// CHECK:         %[[Y:.*]] = map(%[[HB]]) {sluice.name = "act"}
// CHECK:         return %[[Y]], %[[HB]], %w, %x :

// CHECK-LABEL: sluice.graph @ffn_backward(
// CHECK-SAME:    %[[SH:[^:]*]]: {{.*}} {sluice.name = "saved.bias1", sluice.saved = "bias1"}, %[[SW:[^:]*]]: {{.*}} {sluice.name = "saved.w", sluice.saved = "w"}, %[[SX:[^:]*]]: {{.*}} {sluice.name = "saved.x", sluice.saved = "x"}, %[[DY:[^:]*]]: {{.*}} {sluice.name = "dy"})
// CHECK-SAME:    -> ({{.*}} {sluice.name = "d_x"}, {{.*}} {sluice.name = "d_w", sluice.shape = [16, 8]}, {{.*}} {sluice.name = "d_b"}, {{.*}} {sluice.name = "d_unused"})
// CHECK-SAME:    phase = #sluice<phase backward>
// CHECK:         %[[DH:.*]] = map(%[[SH]], %[[DY]]) {sluice.name = "act.grad0"}
// CHECK:           arith.cmpf oge
// CHECK:         %[[DB:.*]] = reduce sum %[[DH]] over ["j"] {sluice.name = "bias1.grad1.sum"}
// CHECK:         %[[DX:.*]] = contract %[[DH]], %[[SW]] {sluice.name = "ffn1.grad_lhs"}
// CHECK-SAME:      -> !sluice.tensor<[j=4, i=8], f32>
// CHECK:         %[[DW:.*]] = contract %[[SX]], %[[DH]] {sluice.name = "ffn1.grad_rhs"}
// CHECK-SAME:      -> !sluice.tensor<[i=8, u=16], f32>
// CHECK:         %[[DZ:.*]] = map() {sluice.name = "d_unused.zero"}
// CHECK:         return %[[DX]], %[[DW]], %[[DB]], %[[DZ]] :
sluice.graph @ffn(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                  %w: !sluice.tensor<[i=8, u=16], f32> {sluice.name = "w", sluice.shape = [16, 8]},
                  %b: !sluice.tensor<[u=16], f32> {sluice.name = "b"},
                  %unused: !sluice.tensor<[u=16], f32> {sluice.name = "unused"})
    -> (!sluice.tensor<[j=4, u=16], f32> {sluice.name = "y"}) {
  %h = sluice.contract %x, %w {sluice.name = "ffn1"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8, u=16], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %hb = sluice.bias_add %h, %b {sluice.name = "bias1"} : (!sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[u=16], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %y = sluice.relu %hb {sluice.name = "act"} : !sluice.tensor<[j=4, u=16], f32>
  sluice.return %y : !sluice.tensor<[j=4, u=16], f32>
}

// Batched attention scores: b and h stay batch dimensions in both gradients;
// x used twice (as queries and, renamed, as keys) accumulates with an addf
// map. The rename is a view: x is saved once and renamed again.

// CHECK-LABEL: sluice.graph @scores_backward(
// CHECK-SAME:    %[[SX:[^:]*]]: {{.*}} {sluice.name = "saved.x", sluice.saved = "x"}, %[[DS:[^:]*]]: {{.*}} {sluice.name = "ds"})
// CHECK-NOT:     saved.keys
// CHECK:         %[[K:.*]] = rename %[[SX]] {sluice.name = "keys.recompute"}
// CHECK:         %[[GQ:.*]] = contract %[[DS]], %[[K]] {scale = 1.250000e-01 : f64, sluice.name = "qk.grad_lhs"}
// CHECK-SAME:      -> !sluice.tensor<[b=2, j=4, h=2, p=8], f32>
// CHECK:         %[[GK:.*]] = contract %[[SX]], %[[DS]] {scale = 1.250000e-01 : f64, sluice.name = "qk.grad_rhs"}
// CHECK-SAME:      -> !sluice.tensor<[b=2, k=4, h=2, p=8], f32>
// CHECK:         %[[GX:.*]] = rename %[[GK]] {sluice.name = "keys.grad"}
// CHECK-SAME:      -> !sluice.tensor<[b=2, j=4, h=2, p=8], f32>
// CHECK:         %[[DX:.*]] = map(%[[GQ]], %[[GX]]) {sluice.name = "x.grad_acc"}
// CHECK:           arith.addf
// CHECK:         return %[[DX]] :
sluice.graph @scores(%x: !sluice.tensor<[b=2, j=4, h=2, p=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[b=2, h=2, j=4, k=4], f32> {sluice.name = "s"}) {
  %k = sluice.rename %x {sluice.name = "keys"} : !sluice.tensor<[b=2, j=4, h=2, p=8], f32> -> !sluice.tensor<[b=2, k=4, h=2, p=8], f32>
  %s = sluice.contract %x, %k {scale = 0.125 : f64, sluice.name = "qk"}
      : (!sluice.tensor<[b=2, j=4, h=2, p=8], f32>, !sluice.tensor<[b=2, k=4, h=2, p=8], f32>)
      -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
  sluice.return %s : !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
}
