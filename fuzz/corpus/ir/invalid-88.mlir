sluice.graph @residual_add_rhs_element_type(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                                            %b: !sluice.tensor<[j=4, i=8], bf16> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  %y = sluice.residual_add %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], bf16>) -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
}
