// An empty region.
sluice.graph @g(%a: !sluice.tensor<[i=8], f32> {sluice.name = "a"}) {
  %m = sluice.map (%a) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  }
  sluice.return
}
