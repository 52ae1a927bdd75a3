sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) {
  %r = sluice.relayout %a : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8, j=4], f16>
  sluice.return
}
