sluice.graph @g(%a: !sluice.tensor<[j=4, k=4], f32> {sluice.name = "a"}) {
  %r = sluice.softmax %a over "i" : !sluice.tensor<[j=4, k=4], f32>
  sluice.return
}
