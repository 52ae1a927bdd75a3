sluice.graph @dropout_mask_element_type(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  %y, %m = sluice.dropout %x {probability = 0.5 : f64, stream = 0 : i64} : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f16>
  sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
}
