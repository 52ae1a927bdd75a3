// RUN: sluice-opt --sluice-autodiff %s | FileCheck %s

// Softmax decomposes into max, exp map ("sm.map"), sum and a division ("sm").
// The saved set is what the rules read: the exp and the sum (division), the
// input and the row max (the reduce-max rule routes the max's cotangent to
// the positions equal to it). The exp map's derivative reads its own output
// (already saved) instead of recomputing exp.

// CHECK-LABEL: sluice.graph @attn_forward(
// CHECK-SAME:    -> ({{.*}} {sluice.name = "y"}, {{.*}} {sluice.name = "saved.sm.sum"}, {{.*}} {sluice.name = "saved.sm.map"}, {{.*}} {sluice.name = "saved.x"}, {{.*}} {sluice.name = "saved.sm.max"})
// CHECK:         %[[MAX:.*]] = reduce max %x over ["k"] {sluice.name = "sm.max"}
// CHECK:         %[[EXP:.*]] = map(%x, %[[MAX]]) {sluice.name = "sm.map"}
// CHECK:         %[[SUM:.*]] = reduce sum %[[EXP]] over ["k"] {sluice.name = "sm.sum"}
// CHECK:         %[[Y:.*]] = map(%[[EXP]], %[[SUM]]) {sluice.name = "sm"}
// CHECK:         return %[[Y]], %[[SUM]], %[[EXP]], %x, %[[MAX]] :

// CHECK-LABEL: sluice.graph @attn_backward(
// CHECK-SAME:    %[[SSUM:[^:]*]]: {{.*}} {sluice.name = "saved.sm.sum"}, %[[SEXP:[^:]*]]: {{.*}} {sluice.name = "saved.sm.map"}, %[[SX:[^:]*]]: {{.*}} {sluice.name = "saved.x"}, %[[SMAX:[^:]*]]: {{.*}} {sluice.name = "saved.sm.max"}, %[[DY:[^:]*]]: {{.*}} {sluice.name = "dy"})
// CHECK-SAME:    -> ({{.*}} {sluice.name = "d_x"})
// CHECK-SAME:    phase = #sluice<phase backward>
// CHECK:         %[[G0:.*]] = map(%[[SSUM]], %[[DY]]) {sluice.name = "sm.grad0"}
// CHECK:         %[[G1:.*]] = map(%[[SEXP]], %[[SSUM]], %[[DY]]) {sluice.name = "sm.grad1"}
// CHECK:         %[[G1S:.*]] = reduce sum %[[G1]] over ["k"] {sluice.name = "sm.grad1.sum"}
// CHECK:         %[[GSUM:.*]] = map(%[[G1S]]) {sluice.name = "sm.sum.grad"}
// CHECK:         %[[GEXP:.*]] = map(%[[G0]], %[[GSUM]]) {sluice.name = "sm.map.grad_acc"}
// CHECK:         %[[GX0:.*]] = map(%[[GEXP]], %[[SEXP]]) {sluice.name = "sm.map.grad0"}
// CHECK:         %[[GM:.*]] = map(%[[GEXP]], %[[SEXP]]) {sluice.name = "sm.map.grad1"}
// CHECK:         %[[GMS:.*]] = reduce sum %[[GM]] over ["k"] {sluice.name = "sm.map.grad1.sum"}
// CHECK:         %[[GX1:.*]] = map(%[[SX]], %[[SMAX]], %[[GMS]]) {sluice.name = "sm.max.grad"}
// CHECK:           arith.cmpf oeq
// CHECK:         %[[DX:.*]] = map(%[[GX0]], %[[GX1]]) {sluice.name = "x.grad_acc"}
// CHECK:         return %[[DX]] :
sluice.graph @attn(%x: !sluice.tensor<[j=4, k=6], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4, k=6], f32> {sluice.name = "y"}) {
  %y = sluice.softmax %x over "k" {sluice.name = "sm"} : !sluice.tensor<[j=4, k=6], f32>
  sluice.return %y : !sluice.tensor<[j=4, k=6], f32>
}
