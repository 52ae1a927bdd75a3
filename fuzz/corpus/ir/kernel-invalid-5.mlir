sluice.graph @composite_in_kernel(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  %k = sluice.kernel (%x) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%a: !sluice.tensor<[i=8], f32>):
    %r = sluice.relu %a : !sluice.tensor<[i=8], f32>
    sluice.kernel_yield %r : !sluice.tensor<[i=8], f32>
  }
  sluice.return %k : !sluice.tensor<[i=8], f32>
}
