// RUN: sluice-opt --sluice-autodiff %s | FileCheck %s

// Softmax decomposes into max, exp map ("sm.map"), sum and a division ("sm"),
// each primitive recording its origin. The backward differentiates the
// softmax as a whole, d_x = y * (dy - sum_k y * dy), so the only saved
// tensor is its result y: not its input, exponentials, row max or row sum.

// CHECK-LABEL: sluice.graph @attn_forward(
// CHECK-SAME:    -> ({{.*}} {sluice.name = "y"}, {{.*}} {sluice.name = "saved.sm", sluice.saved = "sm"})
// CHECK:         %[[MAX:.*]] = reduce max %x over ["k"] {sluice.name = "sm.max", sluice.origin = "sm", sluice.origin_kind = #sluice<origin_kind softmax>}
// CHECK:         %[[EXP:.*]] = map(%x, %[[MAX]]) {sluice.name = "sm.map", sluice.origin = "sm", sluice.origin_kind = #sluice<origin_kind softmax>}
// CHECK:         %[[SUM:.*]] = reduce sum %[[EXP]] over ["k"] {sluice.name = "sm.sum", sluice.origin = "sm", sluice.origin_kind = #sluice<origin_kind softmax>}
// CHECK:         %[[Y:.*]] = map(%[[EXP]], %[[SUM]]) {sluice.name = "sm", sluice.origin = "sm", sluice.origin_kind = #sluice<origin_kind softmax>}
// CHECK:         return %[[Y]], %[[Y]] :

// CHECK-LABEL: sluice.graph @attn_backward(
// CHECK-SAME:    %[[SY:[^:]*]]: {{.*}} {sluice.name = "saved.sm", sluice.saved = "sm"}, %[[DY:[^:]*]]: {{.*}} {sluice.name = "dy"})
// CHECK-SAME:    -> ({{.*}} {sluice.name = "d_x"})
// CHECK:         %[[DOT:.*]] = map(%[[SY]], %[[DY]]) {sluice.name = "sm.grad_dot", sluice.origin = "sm", sluice.origin_kind = #sluice<origin_kind softmax>}
// CHECK:           arith.mulf
// CHECK:         %[[S:.*]] = reduce sum %[[DOT]] over ["k"] {sluice.name = "sm.grad_sum", sluice.origin = "sm", sluice.origin_kind = #sluice<origin_kind softmax>} : {{.*}} -> !sluice.tensor<[j=4], f32>
// CHECK:         %[[DX:.*]] = map(%[[SY]], %[[DY]], %[[S]]) {sluice.name = "sm.grad", sluice.origin = "sm", sluice.origin_kind = #sluice<origin_kind softmax>}
// CHECK:           arith.subf
// CHECK:           arith.mulf
// CHECK:         return %[[DX]] :
sluice.graph @attn(%x: !sluice.tensor<[j=4, k=6], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4, k=6], f32> {sluice.name = "y"}) {
  %y = sluice.softmax %x over "k" {sluice.name = "sm"} : !sluice.tensor<[j=4, k=6], f32>
  sluice.return %y : !sluice.tensor<[j=4, k=6], f32>
}
