// Bias + dropout + residual + layernorm: element-wise ops and reductions
// over the same rows make one kernel; the dropout mask is regenerated inside
// it (no input), the intermediates never leave it.
// Without fusion: one kernel per primitive, the mask stored element-sized.
// OFF-LABEL: sluice.graph @ln_chain
// OFF-COUNT-10: kernel(
// OFF-NOT: packed
// OFF: return
// Always storing masks: a kernel of its own writes it bit-packed.
// BITPACK-LABEL: sluice.graph @ln_chain
// BITPACK: %[[M:.*]] = kernel() {members = ["drop.random_mask"], packed = array<i64: 0>, sluice.name = "k0"}
// BITPACK: kernel(%x, %b, %[[M]], %r, %g, %bb) {members = ["bias", "drop", "res", "ln.reduce", "ln.map", "ln.map", "ln.reduce", "ln.map", "ln"], sluice.name = "k1"}
// At most three primitives per kernel (a regenerated mask does not count).
// MAXOPS-LABEL: sluice.graph @ln_chain
// MAXOPS: kernel(%x, %b, %r) {members = ["drop.random_mask", "bias", "drop", "res"]
// MAXOPS-COUNT-3: kernel(
sluice.graph @ln_chain(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                       %r: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "r"},
                       %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"},
                       %g: !sluice.tensor<[i=8], f32> {sluice.name = "g"},
                       %bb: !sluice.tensor<[i=8], f32> {sluice.name = "bb"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  %0 = sluice.bias_add %x, %b {sluice.name = "bias"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32>
  %1, %m = sluice.dropout %0 {probability = 0.1 : f64, stream = 1 : i64, sluice.name = "drop"} : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>
  %2 = sluice.residual_add %r, %1 {sluice.name = "res"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32>
  %y, %mean, %rstd = sluice.layernorm %2, %g, %bb over ["i"] {sluice.name = "ln"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>) -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
}
