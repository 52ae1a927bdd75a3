// POLICY: --sluice-fuse: mask-policy must be 'auto', 'regenerate' or 'bitpack', got 'sometimes'
// RESIDENT: --sluice-fuse: max-resident must be positive, got 0

// Fusion works on primitives.
sluice.graph @composite(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  %y = sluice.relu %x : !sluice.tensor<[i=8], f32>
  sluice.return %y : !sluice.tensor<[i=8], f32>
}
