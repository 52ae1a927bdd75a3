sluice.graph @g() {
  %c = arith.constant 1.0 : f32
  %y = "sluice.relu"(%c) : (f32) -> f32
  sluice.return
}
