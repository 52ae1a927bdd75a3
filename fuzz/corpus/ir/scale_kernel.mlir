// Another hand-written fused kernel, for "module of another layer" errors:
// c[j, i] = 2 * a[j, i].
sluice.graph @scale(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}) -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "c"}) {
  %c = sluice.kernel (%a) {kind = #sluice<kernel_kind fused>, members = ["twice"], sluice.name = "k0"} : (!sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
  ^bb0(%aa: !sluice.tensor<[j=4, i=8], f32>):
    %t = sluice.map (%aa) {sluice.name = "twice"} : (!sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
    ^bb0(%u: f32):
      %s = arith.addf %u, %u : f32
      sluice.yield %s : f32
    }
    sluice.kernel_yield %t : !sluice.tensor<[j=4, i=8], f32>
  }
  sluice.return %c : !sluice.tensor<[j=4, i=8], f32>
}
