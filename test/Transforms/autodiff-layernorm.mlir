// RUN: sluice-opt --sluice-autodiff %s | %strip-origins | FileCheck %s

// Layernorm: the statistics mean and rstd are saved (with x and the scale);
// the sum of squares is not: the rstd map's derivative reads rstd itself.
// Primitives are named after the composite ("ln.mean", "ln.rstd", ...).

// CHECK-LABEL: sluice.graph @norm_forward(
// CHECK-SAME:    -> ({{.*}} {sluice.name = "y"}, {{.*}} {sluice.name = "saved.ln.rstd", sluice.saved = "ln.rstd"}, {{.*}} {sluice.name = "saved.g", sluice.saved = "g"}, {{.*}} {sluice.name = "saved.x", sluice.saved = "x"}, {{.*}} {sluice.name = "saved.ln.mean", sluice.saved = "ln.mean"})
// CHECK-NOT:     saved.ln.sum
// CHECK:         reduce sum %x over ["i"] {sluice.name = "ln.sum"}
// CHECK:         %[[MEAN:.*]] = map({{.*}}) {sluice.name = "ln.mean"}
// CHECK:         map(%x, %[[MEAN]]) {sluice.name = "ln.map"}
// CHECK:         reduce sum {{.*}} {sluice.name = "ln.sum.1"}
// CHECK:         %[[RSTD:.*]] = map({{.*}}) {sluice.name = "ln.rstd"}
// CHECK:         %[[Y:.*]] = map(%x, %[[MEAN]], %[[RSTD]], %g, %b) {sluice.name = "ln"}
// CHECK:         return %[[Y]], %[[RSTD]], %g, %x, %[[MEAN]] :

// CHECK-LABEL: sluice.graph @norm_backward(
// CHECK-SAME:    %[[SRSTD:[^:]*]]: {{.*}} {sluice.name = "saved.ln.rstd", sluice.saved = "ln.rstd"}, %[[SG:[^:]*]]: {{.*}} {sluice.name = "saved.g", sluice.saved = "g"}, %[[SX:[^:]*]]: {{.*}} {sluice.name = "saved.x", sluice.saved = "x"}, %[[SMEAN:[^:]*]]: {{.*}} {sluice.name = "saved.ln.mean", sluice.saved = "ln.mean"}, %[[DY:[^:]*]]: {{.*}} {sluice.name = "dy"})
// CHECK-SAME:    -> ({{.*}} {sluice.name = "d_x"}, {{.*}} {sluice.name = "d_g"}, {{.*}} {sluice.name = "d_b"})
// CHECK-SAME:    phase = #sluice<phase backward>
// CHECK:         map(%[[SRSTD]], %[[SG]], %[[DY]]) {sluice.name = "ln.grad0"}
// CHECK:         %[[DG:.*]] = reduce sum {{.*}} over ["j"] {sluice.name = "ln.grad3.sum"}
// CHECK:         %[[DB:.*]] = reduce sum %[[DY]] over ["j"] {sluice.name = "ln.grad4.sum"}
// CHECK:         map({{.*}}, %[[SRSTD]]) {sluice.name = "ln.rstd.grad0"}
// CHECK-NOT:       math.rsqrt
// CHECK:           arith.constant -5.000000e-01
// CHECK:         %[[DX:.*]] = map({{.*}}) {sluice.name = "x.grad_acc.1"}
// CHECK:         return %[[DX]], %[[DG]], %[[DB]] :
sluice.graph @norm(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                   %g: !sluice.tensor<[i=8], f32> {sluice.name = "g"},
                   %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  %y, %m, %r = sluice.layernorm %x, %g, %b over ["i"] {sluice.name = "ln"}
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
}
