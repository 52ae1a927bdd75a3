// --sluice-count annotates every counted op with its class, flop and bytes
// (lib/Analysis/DataMovement.cpp) and every graph with its totals. The
//   contract: flop = 2 x the product of the sizes of every distinct dimension
//     of the two operands;
//   map: flop = result elements x body ops (constants and casts are free);
//   reduce: flop = input elements - result elements;
//   random_mask, relayout: no flop;
//   composite: the flop of its decomposition;
//   bytes read: each distinct operand tensor once (a rename is a view of its
//     source); bytes written: every result. f32 = 4 bytes, f16/bf16 = 2;
//   rename is not counted at all.

// q: 2*4*2*8 = 128 elements, k: 2*4*2*8 = 128, s: 2*2*4*4 = 64.
// Distinct dimensions b=2, j=4, h=2, p=8, k=4: 2 * 512 = 1024 flop.
sluice.graph @contract(%q: !sluice.tensor<[b=2, j=4, h=2, p=8], f32> {sluice.name = "q"},
                       %k: !sluice.tensor<[b=2, k=4, h=2, p=8], f32> {sluice.name = "k"},
                       %qh: !sluice.tensor<[b=2, j=4, h=2, p=8], f16> {sluice.name = "qh"},
                       %kh: !sluice.tensor<[b=2, k=4, h=2, p=8], f16> {sluice.name = "kh"}) {
  %s = sluice.contract %q, %k {scale = 0.125 : f64}
      : (!sluice.tensor<[b=2, j=4, h=2, p=8], f32>, !sluice.tensor<[b=2, k=4, h=2, p=8], f32>)
      -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
  // The same in f16: the same flop, half the bytes.
  %sh = sluice.contract %qh, %kh
      : (!sluice.tensor<[b=2, j=4, h=2, p=8], f16>, !sluice.tensor<[b=2, k=4, h=2, p=8], f16>)
      -> !sluice.tensor<[b=2, h=2, j=4, k=4], f16>
  sluice.return
}
