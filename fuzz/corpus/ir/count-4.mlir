// Counting a composite and counting its decomposition give the same flop.
// softmax [j=4, k=4] decomposed: 12 + 32 + 12 + 16 = 72.
sluice.graph @totals(%s: !sluice.tensor<[j=4, k=4], f32> {sluice.name = "s"}) {
  %sm = sluice.softmax %s over "k" : !sluice.tensor<[j=4, k=4], f32>
  sluice.return
}
