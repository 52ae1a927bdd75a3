sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "a"})
    -> !sluice.tensor<[i=4], f32> {
  sluice.return %a : !sluice.tensor<[i=4], f32>
}
