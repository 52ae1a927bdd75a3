sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "a"}) {
  %r = sluice.relu %a : !sluice.tensor<[i=4], f32>
}
