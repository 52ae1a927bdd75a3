// Reductions over different dimensions stay in different kernels (one
// iteration space, one reduction level per kernel).
sluice.graph @two_levels(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4], f32> {sluice.name = "rows"}, !sluice.tensor<[i=8], f32> {sluice.name = "cols"}) {
  %t = sluice.map (%x) {sluice.name = "square"} : (!sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
  ^bb0(%v: f32):
    %s = arith.mulf %v, %v : f32
    sluice.yield %s : f32
  }
  %rows = sluice.reduce sum %t over ["i"] {sluice.name = "rows"} : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4], f32>
  %cols = sluice.reduce sum %t over ["j"] {sluice.name = "cols"} : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8], f32>
  sluice.return %rows, %cols : !sluice.tensor<[j=4], f32>, !sluice.tensor<[i=8], f32>
}
