// Two blocks.
sluice.graph @g(%a: !sluice.tensor<[i=8], f32> {sluice.name = "a"}) {
  %m = sluice.map (%a) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%v: f32):
    sluice.yield %v : f32
  ^bb1(%w: f32):
    sluice.yield %w : f32
  }
  sluice.return
}

//===----------------------------------------------------------------------===//
// reduce
//===----------------------------------------------------------------------===//
