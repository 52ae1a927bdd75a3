// 2^31 x 2^31 f32 elements = 2^64 bytes.
sluice.graph @bytes_overflow(%a: !sluice.tensor<[m=2147483648, n=2147483648], f32> {sluice.name = "a"}) {
  %t = sluice.relayout %a
      : !sluice.tensor<[m=2147483648, n=2147483648], f32> -> !sluice.tensor<[n=2147483648, m=2147483648], f32>
  sluice.return
}
