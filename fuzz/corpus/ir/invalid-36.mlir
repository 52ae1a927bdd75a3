sluice.graph @g(%a: !sluice.tensor<[i=8], f32> {sluice.name = "a"}) {
  %m = sluice.map (%a) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%v: f32):
    %r = builtin.unrealized_conversion_cast %v : f32 to f32
    sluice.yield %r : f32
  }
  sluice.return
}
