// RUN: sluice-opt %s --pass-pipeline='builtin.module(sluice.graph(sluice-select-layouts{target=nope}))' -verify-diagnostics -split-input-file
// The pipeline's layout-target reaches the pass.
// RUN: sluice-opt %s --sluice-pipeline='layout-target=nope' -verify-diagnostics -split-input-file

// expected-error @below {{unknown target 'nope'; built-in targets: a100, h100, h200, v100}}
sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}, %w: !sluice.tensor<[i=8, u=16], f32> {sluice.name = "w"}) -> (!sluice.tensor<[j=4, u=16], f32> {sluice.name = "y"}) {
  %y = contract %x, %w : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8, u=16], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  return %y : !sluice.tensor<[j=4, u=16], f32>
}
