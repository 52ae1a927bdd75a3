sluice.graph @bad_packed(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  %k = sluice.kernel (%x) {packed = array<i64: 3>} : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%a: !sluice.tensor<[i=8], f32>):
    sluice.kernel_yield %a : !sluice.tensor<[i=8], f32>
  }
  sluice.return %k : !sluice.tensor<[i=8], f32>
}
