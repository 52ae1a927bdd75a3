sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  %r = sluice.reduce sum %a over [] : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return
}
