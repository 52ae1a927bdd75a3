sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  %r = sluice.rename %a : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[k=4, i=8, h=1], f32>
  sluice.return
}
