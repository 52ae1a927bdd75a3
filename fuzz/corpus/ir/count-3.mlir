// Composites count the flop of their decomposition and the bytes of their own
// operands and results.
// x, a: 32 f32 = 128 bytes; b, g: 8 f32 = 32 bytes; v: 8 f32 = 32 bytes;
// s: 16 f32 = 64 bytes; sh: 16 f16 = 32 bytes.
// bias_add: one addf x 32.
// residual_add: one addf x 32.
// relu: maximumf x 8.
// gelu: mulf, erf, addf, mulf, mulf = 5 x 8.
// gelu_tanh: 3 mulf (x^3, * 0.044715), addf, mulf, tanh, addf, 2 mulf = 9 x 8.
// dropout: random_mask (0) + mulf, divf = 2 x 8; writes result and mask.
// causal_mask: cmpi, select = 2 x 16.
// softmax: max 16 - 4 = 12, subf+exp 2 x 16 = 32, sum 12, divf 16: 72.
// The same in f16: the same flop, half the bytes.
// layernorm over i (x: [j=4, i=8]): sum 32 - 4 = 28, mean divf 4,
// squares subf+mulf 2 x 32 = 64, sum 28, rstd divf+addf+rsqrt 3 x 4 = 12,
// output subf+mulf+mulf+addf 4 x 32 = 128: 264. Reads x, g, b (192);
// writes y (128), mean (16), rstd (16).
sluice.graph @composites(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                         %a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                         %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"},
                         %g: !sluice.tensor<[i=8], f32> {sluice.name = "g"},
                         %v: !sluice.tensor<[i=8], f32> {sluice.name = "v"},
                         %s: !sluice.tensor<[j=4, k=4], f32> {sluice.name = "s"},
                         %sh: !sluice.tensor<[j=4, k=4], f16> {sluice.name = "sh"}) {
  %ba = sluice.bias_add %x, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32>
  %ra = sluice.residual_add %x, %a : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32>
  %relu = sluice.relu %v : !sluice.tensor<[i=8], f32>
  %gelu = sluice.gelu %v : !sluice.tensor<[i=8], f32>
  %gt = sluice.gelu_tanh %v : !sluice.tensor<[i=8], f32>
  %d:2 = sluice.dropout %v {probability = 0.1 : f64, stream = 1 : i64} : !sluice.tensor<[i=8], f32> -> !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>
  %cm = sluice.causal_mask %s query "j" key "k" : !sluice.tensor<[j=4, k=4], f32>
  %sm = sluice.softmax %s over "k" : !sluice.tensor<[j=4, k=4], f32>
  %smh = sluice.softmax %sh over "k" : !sluice.tensor<[j=4, k=4], f16>
  %ln:3 = sluice.layernorm %x, %g, %b over ["i"]
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return
}
