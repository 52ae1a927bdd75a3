// Graphs whose counts do not fit in 64 bits: --sluice-count names the op
// (the spec-level checks of test/Errors/spec-counts.test keep specs from
// getting here; a hand-written graph still can).
// RUN: sluice-opt %s --sluice-count --split-input-file --verify-diagnostics

// 2 x 2^32 x 2^32 x 2^32 flop.
sluice.graph @contract_flop(%a: !sluice.tensor<[i=4294967296, j=4294967296], f32> {sluice.name = "a"},
                            %b: !sluice.tensor<[j=4294967296, k=4294967296], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.contract' op its flop count overflows 64 bits}}
  %c = sluice.contract %a, %b
      : (!sluice.tensor<[i=4294967296, j=4294967296], f32>, !sluice.tensor<[j=4294967296, k=4294967296], f32>)
      -> !sluice.tensor<[i=4294967296, k=4294967296], f32>
  sluice.return
}

// -----

// 2^62 elements x 4 bytes.
sluice.graph @map_bytes(%x: !sluice.tensor<[i=2147483648, j=2147483648], f32> {sluice.name = "x"}) {
  // expected-error @+1 {{'sluice.map' op its bytes-read count overflows 64 bits}}
  %m = sluice.map (%x) : (!sluice.tensor<[i=2147483648, j=2147483648], f32>)
      -> !sluice.tensor<[i=2147483648, j=2147483648], f32> {
  ^bb0(%v: f32):
    %s = arith.mulf %v, %v : f32
    sluice.yield %s : f32
  }
  sluice.return
}

// -----

// Each map fits (2^63 bytes read and written), their sum does not.
sluice.graph @totals(%x: !sluice.tensor<[i=2147483648, j=1073741824], f32> {sluice.name = "x"}) {
  %m = sluice.map (%x) : (!sluice.tensor<[i=2147483648, j=1073741824], f32>)
      -> !sluice.tensor<[i=2147483648, j=1073741824], f32> {
  ^bb0(%v: f32):
    sluice.yield %v : f32
  }
  // expected-error @+1 {{'sluice.map' op adding its counts to the totals overflows 64 bits}}
  %n = sluice.map (%m) : (!sluice.tensor<[i=2147483648, j=1073741824], f32>)
      -> !sluice.tensor<[i=2147483648, j=1073741824], f32> {
  ^bb0(%v: f32):
    sluice.yield %v : f32
  }
  sluice.return
}

// -----

// 2^61 elements, 8 ops each: 2^64 flop.
sluice.graph @map_flop(%x: !sluice.tensor<[i=2147483648, j=1073741824], f16> {sluice.name = "x"}) {
  // expected-error @+1 {{'sluice.map' op its flop count overflows 64 bits}}
  %m = sluice.map (%x) : (!sluice.tensor<[i=2147483648, j=1073741824], f16>)
      -> !sluice.tensor<[i=2147483648, j=1073741824], f16> {
  ^bb0(%v: f32):
    %a = arith.mulf %v, %v : f32
    %b = arith.mulf %a, %a : f32
    %c = arith.mulf %b, %b : f32
    %d = arith.mulf %c, %c : f32
    %e = arith.mulf %d, %d : f32
    %f = arith.mulf %e, %e : f32
    %g = arith.mulf %f, %f : f32
    %h = arith.mulf %g, %g : f32
    sluice.yield %h : f32
  }
  sluice.return
}

// -----

// A reduction over 2^64 elements.
sluice.graph @reduce_count(%x: !sluice.tensor<[i=4294967296, j=4294967296], f32> {sluice.name = "x"}) {
  // expected-error @+1 {{'sluice.reduce' op its}}
  %r = sluice.reduce sum %x over ["j"] : !sluice.tensor<[i=4294967296, j=4294967296], f32> -> !sluice.tensor<[i=4294967296], f32>
  sluice.return
}
