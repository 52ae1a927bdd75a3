sluice.graph @wrong_args(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  %k = sluice.kernel (%x) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%a: !sluice.tensor<[i=4], f32>):
    %z = sluice.map () : () -> !sluice.tensor<[i=8], f32> {
      %c = arith.constant 0.0 : f32
      sluice.yield %c : f32
    }
    sluice.kernel_yield %z : !sluice.tensor<[i=8], f32>
  }
  sluice.return %k : !sluice.tensor<[i=8], f32>
}
