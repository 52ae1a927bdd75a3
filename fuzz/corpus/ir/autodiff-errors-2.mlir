sluice.graph @G(%x: !sluice.tensor<[i=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=4], f32> {sluice.name = "y"}) {
  sluice.return %x : !sluice.tensor<[i=4], f32>
}
sluice.graph @G_backward(%x: !sluice.tensor<[i=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=4], f32> {sluice.name = "y"}) attributes {phase = #sluice<phase backward>} {
  sluice.return %x : !sluice.tensor<[i=4], f32>
}
