sluice.graph @gemm_without_contraction(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  %k = sluice.kernel (%x) {kind = #sluice<kernel_kind gemm>} : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%a: !sluice.tensor<[i=8], f32>):
    sluice.kernel_yield %a : !sluice.tensor<[i=8], f32>
  }
  sluice.return %k : !sluice.tensor<[i=8], f32>
}
