sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                %s: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "s"},
                %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"}) {
  %y:3 = sluice.layernorm %x, %s, %b over ["i"]
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return
}
