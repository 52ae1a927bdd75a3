// Overflow is an error at the op, not a wrapped number.
// Distinct dimensions m, c, n of 2^22 each: 2 x 2^66 = 2^67 flop (the
// tensors themselves are only 2^46 bytes).
sluice.graph @flop_overflow(%a: !sluice.tensor<[m=4194304, c=4194304], f32> {sluice.name = "a"},
                            %b: !sluice.tensor<[c=4194304, n=4194304], f32> {sluice.name = "b"}) {
  %c = sluice.contract %a, %b
      : (!sluice.tensor<[m=4194304, c=4194304], f32>, !sluice.tensor<[c=4194304, n=4194304], f32>)
      -> !sluice.tensor<[m=4194304, n=4194304], f32>
  sluice.return
}
