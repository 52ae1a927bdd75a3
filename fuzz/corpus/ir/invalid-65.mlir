sluice.graph @g(%a: !sluice.tensor<[j=4, i=8], f16> {sluice.name = "a"},
                %b: !sluice.tensor<[i=8, j=4], f16> {sluice.name = "b"}) {
  %r = sluice.residual_add %a, %b : (!sluice.tensor<[j=4, i=8], f16>, !sluice.tensor<[i=8, j=4], f16>) -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return
}
