sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                %b: !sluice.tensor<[i=4], f32> {sluice.name = "b"}) {
  %m = sluice.map (%a, %b) : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=4], f32>)
      -> !sluice.tensor<[j=4, i=8], f32> {
  ^bb0(%v: f32, %w: f32):
    sluice.yield %v : f32
  }
  sluice.return
}
