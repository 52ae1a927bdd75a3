// Softmax decomposes into max, exp map ("sm.map"), sum and a division ("sm"),
// each primitive recording its origin. The backward differentiates the
// softmax as a whole, d_x = y * (dy - sum_k y * dy), so the only saved
// tensor is its result y: not its input, exponentials, row max or row sum.


sluice.graph @attn(%x: !sluice.tensor<[j=4, k=6], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4, k=6], f32> {sluice.name = "y"}) {
  %y = sluice.softmax %x over "k" {sluice.name = "sm"} : !sluice.tensor<[j=4, k=6], f32>
  sluice.return %y : !sluice.tensor<[j=4, k=6], f32>
}
