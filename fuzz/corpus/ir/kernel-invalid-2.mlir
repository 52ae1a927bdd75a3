sluice.graph @wrong_yield(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f16> {sluice.name = "y"}) {
  %k = sluice.kernel (%x) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f16> {
  ^bb0(%a: !sluice.tensor<[i=8], f32>):
    sluice.kernel_yield %a : !sluice.tensor<[i=8], f32>
  }
  sluice.return %k : !sluice.tensor<[i=8], f16>
}
