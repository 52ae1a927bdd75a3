sluice.graph @g(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}, %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"}) -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  %y = sluice.kernel (%x, %b) {kind = #sluice<kernel_kind fused>, members = ["bias", "relu"], sluice.name = "k0"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
  ^bb0(%xa: !sluice.tensor<[j=4, i=8], f32>, %ba: !sluice.tensor<[i=8], f32>):
    %s = sluice.map (%xa, %ba) : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
    ^bb0(%u: f32, %v: f32):
      %a = arith.addf %u, %v : f32
      sluice.yield %a : f32
    }
    sluice.kernel_yield %s : !sluice.tensor<[j=4, i=8], f32>
  }
  sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
}
