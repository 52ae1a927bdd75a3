// RUN: sluice-opt --sluice-autodiff %s | %strip-origins | FileCheck %s

// Dropout masks are not saved: the backward draws the same mask again from
// the same probability and stream (same seed, same mask). With nothing else
// to read, the forward returns only y and the backward takes only dy.

// CHECK-LABEL: sluice.graph @drop_forward(
// CHECK-SAME:    -> ({{.*}} {sluice.name = "y"}) {
// CHECK:         %[[MASK:.*]] = random_mask {probability = 1.000000e-01 : f64, sluice.name = "drop.mask", stream = 3 : i64}
// CHECK:         %[[Y:.*]] = map(%x, %[[MASK]]) {sluice.name = "drop"}
// CHECK:         return %[[Y]] :

// CHECK-LABEL: sluice.graph @drop_backward(
// CHECK-SAME:    %[[DY:[^:]*]]: {{.*}} {sluice.name = "dy"})
// CHECK-SAME:    -> ({{.*}} {sluice.name = "d_x"})
// CHECK-SAME:    phase = #sluice<phase backward>
// CHECK:         %[[MASK:.*]] = random_mask {probability = 1.000000e-01 : f64, sluice.name = "drop.mask.recompute", stream = 3 : i64}
// CHECK:         %[[DX:.*]] = map(%[[MASK]], %[[DY]]) {sluice.name = "drop.grad0"}
// CHECK:         return %[[DX]] :
sluice.graph @drop(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  %y, %m = sluice.dropout %x {sluice.name = "drop", probability = 0.1 : f64, stream = 3 : i64}
      : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>
  sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
}
