sluice.graph @g(%a: !sluice.tensor<[i=4], f32> {sluice.name = "a"}) {
  %c = arith.constant 1.0 : f32
  sluice.yield %c : f32
  sluice.return
}
