// A graph that already has kernels must have nothing else.
sluice.graph @mixed(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  %k = sluice.kernel (%x) {members = ["copy"]} : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%a: !sluice.tensor<[i=8], f32>):
    sluice.kernel_yield %a : !sluice.tensor<[i=8], f32>
  }
  %y = sluice.map (%k) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%v: f32):
    sluice.yield %v : f32
  }
  sluice.return %y : !sluice.tensor<[i=8], f32>
}
