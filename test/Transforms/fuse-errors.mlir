// RUN: sluice-opt %s -split-input-file --sluice-fuse -verify-diagnostics
// RUN: not sluice-opt %s -split-input-file --sluice-fuse=mask-policy=sometimes 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not sluice-opt %s -split-input-file --sluice-fuse=max-resident=0 2>&1 | FileCheck %s --check-prefix=RESIDENT

// The option is typed: the parser rejects an unknown policy by name.
// POLICY: for the --mask-policy option: Cannot find option named 'sometimes'!
// RESIDENT: --sluice-fuse: max-resident must be positive, got 0

// Fusion works on primitives.
sluice.graph @composite(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  // expected-error @+1 {{must be decomposed before --sluice-fuse (run --sluice-decompose first)}}
  %y = sluice.relu %x : !sluice.tensor<[i=8], f32>
  sluice.return %y : !sluice.tensor<[i=8], f32>
}

// -----

// A graph that already has kernels must have nothing else.
sluice.graph @mixed(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  %k = sluice.kernel (%x) {members = ["copy"]} : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%a: !sluice.tensor<[i=8], f32>):
    sluice.kernel_yield %a : !sluice.tensor<[i=8], f32>
  }
  // expected-error @+1 {{is outside a kernel in a graph that already has kernels; --sluice-fuse takes unfused graphs}}
  %y = sluice.map (%k) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%v: f32):
    sluice.yield %v : f32
  }
  sluice.return %y : !sluice.tensor<[i=8], f32>
}

// -----

// A fused graph goes through again unchanged.
sluice.graph @fused(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  %k = sluice.kernel (%x) {members = ["copy"]} : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%a: !sluice.tensor<[i=8], f32>):
    sluice.kernel_yield %a : !sluice.tensor<[i=8], f32>
  }
  sluice.return %k : !sluice.tensor<[i=8], f32>
}
