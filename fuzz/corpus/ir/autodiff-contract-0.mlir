// A contraction, a broadcast bias and relu. The backward reads the relu's
// input, both contraction operands (x and w are returned as saved tensors),
// and nothing for the bias (its derivative is 1). An argument no result
// depends on gets a zero gradient; sluice.shape follows the gradient.


sluice.graph @ffn(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                  %w: !sluice.tensor<[i=8, u=16], f32> {sluice.name = "w", sluice.shape = [16, 8]},
                  %b: !sluice.tensor<[u=16], f32> {sluice.name = "b"},
                  %unused: !sluice.tensor<[u=16], f32> {sluice.name = "unused"})
    -> (!sluice.tensor<[j=4, u=16], f32> {sluice.name = "y"}) {
  %h = sluice.contract %x, %w {sluice.name = "ffn1"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8, u=16], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %hb = sluice.bias_add %h, %b {sluice.name = "bias1"} : (!sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[u=16], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %y = sluice.relu %hb {sluice.name = "act"} : !sluice.tensor<[j=4, u=16], f32>
  sluice.return %y : !sluice.tensor<[j=4, u=16], f32>
}

// Batched attention scores: b and h stay batch dimensions in both gradients;
// x used twice (as queries and, renamed, as keys) accumulates with an addf
// map. The rename is a view: x is saved once and renamed again.

sluice.graph @scores(%x: !sluice.tensor<[b=2, j=4, h=2, p=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[b=2, h=2, j=4, k=4], f32> {sluice.name = "s"}) {
  %k = sluice.rename %x {sluice.name = "keys"} : !sluice.tensor<[b=2, j=4, h=2, p=8], f32> -> !sluice.tensor<[b=2, k=4, h=2, p=8], f32>
  %s = sluice.contract %x, %k {scale = 0.125 : f64, sluice.name = "qk"}
      : (!sluice.tensor<[b=2, j=4, h=2, p=8], f32>, !sluice.tensor<[b=2, k=4, h=2, p=8], f32>)
      -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
  sluice.return %s : !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
}
