sluice.graph @g() {
  %m = sluice.random_mask {probability = 0x7FF8000000000000 : f64, stream = 0 : i64} : !sluice.tensor<[i=8], f32>
  sluice.return
}
