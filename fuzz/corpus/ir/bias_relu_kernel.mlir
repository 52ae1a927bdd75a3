// One fused kernel, written by hand (no --sluice-fuse needed):
// y[j, i] = max(x[j, i] + b[i], 0).
sluice.graph @bias_relu(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}, %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"}) -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  %y = sluice.kernel (%x, %b) {kind = #sluice<kernel_kind fused>, members = ["bias", "relu"], sluice.name = "k0"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
  ^bb0(%xa: !sluice.tensor<[j=4, i=8], f32>, %ba: !sluice.tensor<[i=8], f32>):
    %s = sluice.map (%xa, %ba) {sluice.name = "bias"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
    ^bb0(%u: f32, %v: f32):
      %a = arith.addf %u, %v : f32
      sluice.yield %a : f32
    }
    %r = sluice.map (%s) {sluice.name = "relu"} : (!sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
    ^bb0(%u: f32):
      %z = arith.constant 0.0 : f32
      %m = arith.maximumf %u, %z : f32
      sluice.yield %m : f32
    }
    sluice.kernel_yield %r : !sluice.tensor<[j=4, i=8], f32>
  }
  sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
}
