sluice.graph @contract_in_fused(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}, %w: !sluice.tensor<[u=2, i=8], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[j=4, u=2], f32> {sluice.name = "y"}) {
  %k = sluice.kernel (%x, %w) : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=2, i=8], f32>) -> !sluice.tensor<[j=4, u=2], f32> {
  ^bb0(%a: !sluice.tensor<[j=4, i=8], f32>, %b: !sluice.tensor<[u=2, i=8], f32>):
    %c = sluice.contract %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=2, i=8], f32>) -> !sluice.tensor<[j=4, u=2], f32>
    sluice.kernel_yield %c : !sluice.tensor<[j=4, u=2], f32>
  }
  sluice.return %k : !sluice.tensor<[j=4, u=2], f32>
}
