// The same checks apply where a type is written inside an op.
sluice.graph @g(%x: !sluice.tensor<[j=4, j=4], f32> {sluice.name = "x"}) {
  sluice.return
}
