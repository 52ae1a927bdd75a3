sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[i=8], f32> {sluice.name = "s"}) {
  %y:3 = sluice.layernorm %x, %s, %s over ["i"] {eps = -1.0e-5 : f64}
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return
}

//===----------------------------------------------------------------------===//
// dropout
//===----------------------------------------------------------------------===//
