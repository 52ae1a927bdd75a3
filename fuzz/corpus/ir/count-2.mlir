// x: 32 f32 elements = 128 bytes; b: 8 f32 = 32 bytes; xh: 32 f16 = 64 bytes.
// map: 2 ops per element (the constant is free) x 32 = 64 flop; reads x and b.
// The same map writing f16: half the bytes written; the casts are free.
// reduce over i: 32 - 4 = 28 flop; writes 4 f32.
// reduce over j and i of f16 into f32: 32 - 1 = 31 flop.
// random_mask: 16 bf16 elements written, nothing read.
sluice.graph @primitives(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                         %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"},
                         %xh: !sluice.tensor<[j=4, i=8], f16> {sluice.name = "xh"}) {
  %m = sluice.map (%x, %b) : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> !sluice.tensor<[j=4, i=8], f32> {
  ^bb0(%xv: f32, %bv: f32):
    %two = arith.constant 2.0 : f32
    %s = arith.addf %xv, %bv : f32
    %p = arith.mulf %s, %two : f32
    sluice.yield %p : f32
  }
  %mh = sluice.map (%x, %b) : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> !sluice.tensor<[j=4, i=8], f16> {
  ^bb0(%xv: f32, %bv: f32):
    %xe = arith.truncf %xv : f32 to f16
    %xw = arith.extf %xe : f16 to f32
    %s = arith.addf %xw, %bv : f32
    %p = arith.mulf %s, %s : f32
    sluice.yield %p : f32
  }
  %r = sluice.reduce sum %x over ["i"] : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4], f32>
  %rh = sluice.reduce max %xh over ["j", "i"] : !sluice.tensor<[j=4, i=8], f16> -> !sluice.tensor<[], f32>
  %t = sluice.relayout %x : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8, j=4], f32>
  %mask = sluice.random_mask {probability = 0.1 : f64, stream = 0 : i64} : !sluice.tensor<[i=8, j=2], bf16>
  sluice.return
}
