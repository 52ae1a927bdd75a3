// RUN: sluice-opt --sluice-legalize-contractions -split-input-file -verify-diagnostics %s

// GEMM sizes and strides are int64_t: 2^32 x 2^32 elements do not fit.
sluice.graph @G(%x: !sluice.tensor<[j=4294967296, i=4294967296], f16> {sluice.name = "x"},
                %w: !sluice.tensor<[i=4294967296], f16> {sluice.name = "w"})
    -> (!sluice.tensor<[j=4294967296], f16> {sluice.name = "y"}) {
  // expected-error @below {{'sluice.contract' op lhs has more elements than a GEMM can index (2^63 - 1)}}
  %y = sluice.contract %x, %w
      : (!sluice.tensor<[j=4294967296, i=4294967296], f16>, !sluice.tensor<[i=4294967296], f16>)
      -> !sluice.tensor<[j=4294967296], f16>
  sluice.return %y : !sluice.tensor<[j=4294967296], f16>
}

// -----

sluice.graph @G(%x: !sluice.tensor<[j=4294967296], f16> {sluice.name = "x"},
                %w: !sluice.tensor<[u=4294967296], f16> {sluice.name = "w"})
    -> (!sluice.tensor<[j=4294967296, u=4294967296], f16> {sluice.name = "y"}) {
  // expected-error @below {{'sluice.contract' op result has more elements than a GEMM can index (2^63 - 1)}}
  %y = sluice.contract %x, %w
      : (!sluice.tensor<[j=4294967296], f16>, !sluice.tensor<[u=4294967296], f16>)
      -> !sluice.tensor<[j=4294967296, u=4294967296], f16>
  sluice.return %y : !sluice.tensor<[j=4294967296, u=4294967296], f16>
}

// -----

sluice.graph @G(%x: !sluice.tensor<[i=4294967296, j=4294967296], f16> {sluice.name = "x"},
                %w: !sluice.tensor<[i=4294967296], f16> {sluice.name = "w"})
    -> (!sluice.tensor<[j=4294967296], f16> {sluice.name = "y"}) {
  // expected-error @below {{'sluice.contract' op rhs has more elements than a GEMM can index (2^63 - 1)}}
  %y = sluice.contract %w, %x
      : (!sluice.tensor<[i=4294967296], f16>, !sluice.tensor<[i=4294967296, j=4294967296], f16>)
      -> !sluice.tensor<[j=4294967296], f16>
  sluice.return %y : !sluice.tensor<[j=4294967296], f16>
}
