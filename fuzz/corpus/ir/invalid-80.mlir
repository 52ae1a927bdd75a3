sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}) {
  %y:2 = sluice.dropout %x {probability = 0.1 : f64, stream = 0 : i64}
      : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8, j=4], f32>, !sluice.tensor<[j=4, i=8], f32>
  sluice.return
}
