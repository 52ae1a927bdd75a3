sluice.graph @g(%x: !sluice.tensor<[j=4, k=4], f32> {sluice.name = "x"}) {
  %y = sluice.causal_mask %x query "j" key "kk" : !sluice.tensor<[j=4, k=4], f32>
  sluice.return
}
