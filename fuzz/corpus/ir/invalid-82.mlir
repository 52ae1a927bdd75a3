sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}) {
  %y:2 = sluice.dropout %x {probability = 1.5 : f64, stream = 0 : i64}
      : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>
  sluice.return
}

//===----------------------------------------------------------------------===//
// causal_mask
//===----------------------------------------------------------------------===//
