// Dropout masks are not saved: the backward draws the same mask again from
// the same probability and stream (same seed, same mask). With nothing else
// to read, the forward returns only y and the backward takes only dy.


sluice.graph @drop(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  %y, %m = sluice.dropout %x {sluice.name = "drop", probability = 0.1 : f64, stream = 3 : i64}
      : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>
  sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
}
