// An operand used twice, directly or through a rename, is read once.
// x: 4*8 = 32 elements, 128 bytes.
// x . x over i -> [j=4]: dims j=4, i=8: 2 * 32 = 64 flop; 16 bytes written.
// x . xk over i -> [j=4, k=4]: dims j=4, i=8, k=4: 2 * 128 = 256 flop; 64 bytes written.
sluice.graph @operand_once(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}) {
  %sq = sluice.contract %x, %x
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4], f32>
  %xk = sluice.rename %x : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[k=4, i=8], f32>
  %s = sluice.contract %x, %xk
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[k=4, i=8], f32>) -> !sluice.tensor<[j=4, k=4], f32>
  sluice.return
}
