// The layout is part of the type.
sluice.graph @g(%a: !sluice.tensor<[j=2, i=4], f32> {sluice.name = "a"})
    -> (!sluice.tensor<[i=4, j=2], f32> {sluice.name = "y"}) {
  sluice.return %a : !sluice.tensor<[j=2, i=4], f32>
}
