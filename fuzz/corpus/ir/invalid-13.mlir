sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "a"})
    -> (!sluice.tensor<[i=4], f32> {sluice.name = "y"}) {
  sluice.return
}
