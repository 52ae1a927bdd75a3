// RUN: sluice-opt --sluice-autodiff=compute-type=f64 %s | %strip-origins | FileCheck %s

// A map broadcasting c over j and writing another layout: d_c is summed over
// j (in f32) and d_x is relaid out to x's layout. Residual adds pass the
// cotangent through without any op. Map bodies compute in f64.

// CHECK-LABEL: sluice.graph @scale_backward(
// CHECK-SAME:    %[[SX:[^:]*]]: {{.*}} {sluice.name = "saved.x", sluice.saved = "x"}, %[[SC:[^:]*]]: {{.*}} {sluice.name = "saved.c", sluice.saved = "c"}, %[[DY:[^:]*]]: {{.*}} {sluice.name = "dy"})
// CHECK-SAME:    -> ({{.*}} {sluice.name = "d_x"}, {{.*}} {sluice.name = "d_c"}, {{.*}} {sluice.name = "d_r"})
// CHECK:         %[[GX:.*]] = map(%[[SX]], %[[SC]], %[[DY]]) {sluice.name = "e.grad0"}
// CHECK-SAME:      -> !sluice.tensor<[i=8, j=4], f32>
// CHECK:         ^bb0(%{{.*}}: f64, %{{.*}}: f64, %{{.*}}: f64):
// CHECK:           math.exp
// CHECK:         %[[DX:.*]] = relayout %[[GX]] {sluice.name = "e.grad0.convert"}
// CHECK-SAME:      -> !sluice.tensor<[j=4, i=8], f32>
// CHECK:         %[[GC:.*]] = map(%[[SX]], %[[SC]], %[[DY]]) {sluice.name = "e.grad1"}
// CHECK:         %[[DC:.*]] = reduce sum %[[GC]] over ["j"] {sluice.name = "e.grad1.sum"}
// CHECK-SAME:      -> !sluice.tensor<[i=8], f32>
// CHECK:         return %[[DX]], %[[DC]], %[[DY]] :
sluice.graph @scale(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                    %c: !sluice.tensor<[i=8], f32> {sluice.name = "c"},
                    %r: !sluice.tensor<[i=8, j=4], f32> {sluice.name = "r"})
    -> (!sluice.tensor<[i=8, j=4], f32> {sluice.name = "y"}) {
  %e = sluice.map (%x, %c) {sluice.name = "e"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> !sluice.tensor<[i=8, j=4], f32> {
  ^bb0(%a: f64, %b: f64):
    %p = arith.mulf %a, %b : f64
    %q = math.exp %p : f64
    sluice.yield %q : f64
  }
  %y = sluice.residual_add %e, %r {sluice.name = "res"} : (!sluice.tensor<[i=8, j=4], f32>, !sluice.tensor<[i=8, j=4], f32>)
      -> !sluice.tensor<[i=8, j=4], f32>
  sluice.return %y : !sluice.tensor<[i=8, j=4], f32>
}
