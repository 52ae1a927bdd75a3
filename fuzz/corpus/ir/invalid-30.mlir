sluice.graph @g(%a: !sluice.tensor<[i=8], f32> {sluice.name = "a"}) {
  %m = sluice.map (%a) {index_dims = ["i", "i"]} : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%v: f32, %i: index, %i2: index):
    sluice.yield %v : f32
  }
  sluice.return
}
