// The composites of LLaMA-style layers (rmsnorm, silu, swiglu, rope) round-trip
// in the custom form, and the printed form parses back to the same text.
// RUN: sluice-opt %s | FileCheck %s
// RUN: sluice-opt %s | sluice-opt | FileCheck %s
// RUN: sluice-opt %s --mlir-print-op-generic | sluice-opt | FileCheck %s

// CHECK-LABEL: sluice.graph @llama_ops
// CHECK: %[[Y:.*]], %[[R:.*]] = rmsnorm %{{.*}}, %{{.*}} over ["i"] {eps = 9.9999999999999995E-7 : f64} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>)
// CHECK: %[[S:.*]] = silu %[[Y]] : !sluice.tensor<[j=4, i=8], f32>
// CHECK: %[[G:.*]] = swiglu %[[S]], %[[Y]] : !sluice.tensor<[j=4, i=8], f32>
// CHECK: %{{.*}} = rope %{{.*}} pair "r" freq "f" position "j" {theta = 5.000000e+05 : f64} : !sluice.tensor<[j=4, h=2, r=2, f=3], bf16>
sluice.graph @llama_ops(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                        %g: !sluice.tensor<[i=8], f32> {sluice.name = "g"},
                        %q: !sluice.tensor<[j=4, h=2, r=2, f=3], bf16> {sluice.name = "q"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"},
        !sluice.tensor<[j=4, h=2, r=2, f=3], bf16> {sluice.name = "qr"}) {
  %y, %rstd = sluice.rmsnorm %x, %g over ["i"] {eps = 1.0e-6 : f64}
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>)
  %s = sluice.silu %y : !sluice.tensor<[j=4, i=8], f32>
  %h = sluice.swiglu %s, %y : !sluice.tensor<[j=4, i=8], f32>
  %qr = sluice.rope %q pair "r" freq "f" position "j" {theta = 5.0e5 : f64}
      : !sluice.tensor<[j=4, h=2, r=2, f=3], bf16>
  sluice.return %h, %qr : !sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, h=2, r=2, f=3], bf16>
}
