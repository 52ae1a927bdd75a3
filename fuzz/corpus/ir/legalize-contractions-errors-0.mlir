// GEMM sizes and strides are int64_t: 2^32 x 2^32 elements do not fit.
sluice.graph @G(%x: !sluice.tensor<[j=4294967296, i=4294967296], f16> {sluice.name = "x"},
                %w: !sluice.tensor<[i=4294967296], f16> {sluice.name = "w"})
    -> (!sluice.tensor<[j=4294967296], f16> {sluice.name = "y"}) {
  %y = sluice.contract %x, %w
      : (!sluice.tensor<[j=4294967296, i=4294967296], f16>, !sluice.tensor<[i=4294967296], f16>)
      -> !sluice.tensor<[j=4294967296], f16>
  sluice.return %y : !sluice.tensor<[j=4294967296], f16>
}
