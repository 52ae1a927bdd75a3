// Each mask is 2^61 f32 elements = 2^63 bytes; the second makes the total
// 2^64.
sluice.graph @total_overflow() {
  %m0 = sluice.random_mask {probability = 0.5 : f64, stream = 0 : i64}
      : !sluice.tensor<[m=2147483648, n=1073741824], f32>
  %m1 = sluice.random_mask {probability = 0.5 : f64, stream = 1 : i64}
      : !sluice.tensor<[m=2147483648, n=1073741824], f32>
  sluice.return
}
