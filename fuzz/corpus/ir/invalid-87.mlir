sluice.graph @bias_add_bias_element_type(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                                         %b: !sluice.tensor<[i=8], f16> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  %y = sluice.bias_add %x, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f16>) -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
}
