// --sluice-count annotates every counted op with its class, flop and bytes
// (dialects/sluice/Analysis/DataMovement.cpp) and every graph with its totals. The
// expected numbers are worked out by hand from the rules:
//   contract: flop = 2 x the product of the sizes of every distinct dimension
//     of the two operands;
//   map: flop = result elements x body ops (constants and casts are free);
//   reduce: flop = input elements - result elements;
//   random_mask, relayout: no flop;
//   composite: the flop of its decomposition;
//   bytes read: each distinct operand tensor once (a rename is a view of its
//     source); bytes written: every result. f32 = 4 bytes, f16/bf16 = 2;
//   rename is not counted at all.
// RUN: sluice-opt %s --sluice-count --split-input-file --verify-diagnostics | FileCheck %s

// q: 2*4*2*8 = 128 elements, k: 2*4*2*8 = 128, s: 2*2*4*4 = 64.
// Distinct dimensions b=2, j=4, h=2, p=8, k=4: 2 * 512 = 1024 flop.
// CHECK-LABEL: sluice.graph @contract
// CHECK-SAME: attributes {sluice.total_bytes_read = 1536 : ui64, sluice.total_bytes_written = 384 : ui64, sluice.total_flop = 2048 : ui64}
// CHECK: contract
// CHECK-SAME: {scale = 1.250000e-01 : f64, sluice.bytes_read = 1024 : ui64, sluice.bytes_written = 256 : ui64, sluice.class = "contraction", sluice.flop = 1024 : ui64}
// CHECK: contract
// CHECK-SAME: {sluice.bytes_read = 512 : ui64, sluice.bytes_written = 128 : ui64, sluice.class = "contraction", sluice.flop = 1024 : ui64}
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

// -----

// An operand used twice, directly or through a rename, is read once.
// x: 4*8 = 32 elements, 128 bytes.
// CHECK-LABEL: sluice.graph @operand_once
// CHECK-SAME: attributes {sluice.total_bytes_read = 256 : ui64, sluice.total_bytes_written = 80 : ui64, sluice.total_flop = 320 : ui64}
// x . x over i -> [j=4]: dims j=4, i=8: 2 * 32 = 64 flop; 16 bytes written.
// CHECK: contract
// CHECK-SAME: {sluice.bytes_read = 128 : ui64, sluice.bytes_written = 16 : ui64, sluice.class = "contraction", sluice.flop = 64 : ui64}
// CHECK: %[[XK:.*]] = rename
// CHECK-NOT: sluice.flop
// CHECK-SAME: !sluice.tensor<[k=4, i=8], f32>{{$}}
// x . xk over i -> [j=4, k=4]: dims j=4, i=8, k=4: 2 * 128 = 256 flop; 64 bytes written.
// CHECK: contract %{{.*}}, %[[XK]]
// CHECK-SAME: {sluice.bytes_read = 128 : ui64, sluice.bytes_written = 64 : ui64, sluice.class = "contraction", sluice.flop = 256 : ui64}
sluice.graph @operand_once(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}) {
  %sq = sluice.contract %x, %x
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4], f32>
  %xk = sluice.rename %x : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[k=4, i=8], f32>
  %s = sluice.contract %x, %xk
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[k=4, i=8], f32>) -> !sluice.tensor<[j=4, k=4], f32>
  sluice.return
}

// -----

// CHECK-LABEL: sluice.graph @primitives
// x: 32 f32 elements = 128 bytes; b: 8 f32 = 32 bytes; xh: 32 f16 = 64 bytes.
// map: 2 ops per element (the constant is free) x 32 = 64 flop; reads x and b.
// CHECK: map(
// CHECK-SAME: {sluice.bytes_read = 160 : ui64, sluice.bytes_written = 128 : ui64, sluice.class = "element-wise", sluice.flop = 64 : ui64}
// The same map writing f16: half the bytes written; the casts are free.
// CHECK: map(
// CHECK-SAME: {sluice.bytes_read = 160 : ui64, sluice.bytes_written = 64 : ui64, sluice.class = "element-wise", sluice.flop = 64 : ui64}
// reduce over i: 32 - 4 = 28 flop; writes 4 f32.
// CHECK: reduce sum
// CHECK-SAME: {sluice.bytes_read = 128 : ui64, sluice.bytes_written = 16 : ui64, sluice.class = "normalization", sluice.flop = 28 : ui64}
// reduce over j and i of f16 into f32: 32 - 1 = 31 flop.
// CHECK: reduce max
// CHECK-SAME: {sluice.bytes_read = 64 : ui64, sluice.bytes_written = 4 : ui64, sluice.class = "normalization", sluice.flop = 31 : ui64}
// CHECK: relayout
// CHECK-SAME: {sluice.bytes_read = 128 : ui64, sluice.bytes_written = 128 : ui64, sluice.class = "element-wise", sluice.flop = 0 : ui64}
// random_mask: 16 bf16 elements written, nothing read.
// CHECK: random_mask
// CHECK-SAME: {probability = 1.000000e-01 : f64, sluice.bytes_read = 0 : ui64, sluice.bytes_written = 32 : ui64, sluice.class = "element-wise", sluice.flop = 0 : ui64, stream = 0 : i64}
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

// -----

// Composites count the flop of their decomposition and the bytes of their own
// operands and results.
// x, a: 32 f32 = 128 bytes; b, g: 8 f32 = 32 bytes; v: 8 f32 = 32 bytes;
// s: 16 f32 = 64 bytes; sh: 16 f16 = 32 bytes.
// CHECK-LABEL: sluice.graph @composites
// bias_add: one addf x 32.
// CHECK: bias_add
// CHECK-SAME: {sluice.bytes_read = 160 : ui64, sluice.bytes_written = 128 : ui64, sluice.class = "element-wise", sluice.flop = 32 : ui64}
// residual_add: one addf x 32.
// CHECK: residual_add
// CHECK-SAME: {sluice.bytes_read = 256 : ui64, sluice.bytes_written = 128 : ui64, sluice.class = "element-wise", sluice.flop = 32 : ui64}
// relu: maximumf x 8.
// CHECK: relu
// CHECK-SAME: {sluice.bytes_read = 32 : ui64, sluice.bytes_written = 32 : ui64, sluice.class = "element-wise", sluice.flop = 8 : ui64}
// gelu: mulf, erf, addf, mulf, mulf = 5 x 8.
// CHECK: gelu
// CHECK-SAME: {sluice.bytes_read = 32 : ui64, sluice.bytes_written = 32 : ui64, sluice.class = "element-wise", sluice.flop = 40 : ui64}
// gelu_tanh: 3 mulf (x^3, * 0.044715), addf, mulf, tanh, addf, 2 mulf = 9 x 8.
// CHECK: gelu_tanh
// CHECK-SAME: {sluice.bytes_read = 32 : ui64, sluice.bytes_written = 32 : ui64, sluice.class = "element-wise", sluice.flop = 72 : ui64}
// dropout: random_mask (0) + mulf, divf = 2 x 8; writes result and mask.
// CHECK: dropout
// CHECK-SAME: {probability = 1.000000e-01 : f64, sluice.bytes_read = 32 : ui64, sluice.bytes_written = 64 : ui64, sluice.class = "element-wise", sluice.flop = 16 : ui64, stream = 1 : i64}
// causal_mask: cmpi, select = 2 x 16.
// CHECK: causal_mask
// CHECK-SAME: {sluice.bytes_read = 64 : ui64, sluice.bytes_written = 64 : ui64, sluice.class = "element-wise", sluice.flop = 32 : ui64}
// softmax: max 16 - 4 = 12, subf+exp 2 x 16 = 32, sum 12, divf 16: 72.
// CHECK: softmax
// CHECK-SAME: {sluice.bytes_read = 64 : ui64, sluice.bytes_written = 64 : ui64, sluice.class = "normalization", sluice.flop = 72 : ui64}
// The same in f16: the same flop, half the bytes.
// CHECK: softmax
// CHECK-SAME: {sluice.bytes_read = 32 : ui64, sluice.bytes_written = 32 : ui64, sluice.class = "normalization", sluice.flop = 72 : ui64}
// layernorm over i (x: [j=4, i=8]): sum 32 - 4 = 28, mean divf 4,
// squares subf+mulf 2 x 32 = 64, sum 28, rstd divf+addf+rsqrt 3 x 4 = 12,
// output subf+mulf+mulf+addf 4 x 32 = 128: 264. Reads x, g, b (192);
// writes y (128), mean (16), rstd (16).
// CHECK: layernorm
// CHECK-SAME: {sluice.bytes_read = 192 : ui64, sluice.bytes_written = 160 : ui64, sluice.class = "normalization", sluice.flop = 264 : ui64}
sluice.graph @composites(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                         %a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                         %b: !sluice.tensor<[i=8], f32> {sluice.name = "b"},
                         %g: !sluice.tensor<[i=8], f32> {sluice.name = "g"},
                         %v: !sluice.tensor<[i=8], f32> {sluice.name = "v"},
                         %s: !sluice.tensor<[j=4, k=4], f32> {sluice.name = "s"},
                         %sh: !sluice.tensor<[j=4, k=4], f16> {sluice.name = "sh"}) {
  %ba = sluice.bias_add %x, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32>
  %ra = sluice.residual_add %x, %a : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32>
  %relu = sluice.relu %v : !sluice.tensor<[i=8], f32>
  %gelu = sluice.gelu %v : !sluice.tensor<[i=8], f32>
  %gt = sluice.gelu_tanh %v : !sluice.tensor<[i=8], f32>
  %d:2 = sluice.dropout %v {probability = 0.1 : f64, stream = 1 : i64} : !sluice.tensor<[i=8], f32> -> !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>
  %cm = sluice.causal_mask %s query "j" key "k" : !sluice.tensor<[j=4, k=4], f32>
  %sm = sluice.softmax %s over "k" : !sluice.tensor<[j=4, k=4], f32>
  %smh = sluice.softmax %sh over "k" : !sluice.tensor<[j=4, k=4], f16>
  %ln:3 = sluice.layernorm %x, %g, %b over ["i"]
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return
}

// -----

// Counting a composite and counting its decomposition give the same flop.
// softmax [j=4, k=4] decomposed: 12 + 32 + 12 + 16 = 72.
// CHECK-LABEL: sluice.graph @totals
// CHECK-SAME: sluice.total_flop = 72 : ui64
sluice.graph @totals(%s: !sluice.tensor<[j=4, k=4], f32> {sluice.name = "s"}) {
  %sm = sluice.softmax %s over "k" : !sluice.tensor<[j=4, k=4], f32>
  sluice.return
}

// -----

// Overflow is an error at the op, not a wrapped number.
// Distinct dimensions m, c, n of 2^22 each: 2 x 2^66 = 2^67 flop (the
// tensors themselves are only 2^46 bytes).
sluice.graph @flop_overflow(%a: !sluice.tensor<[m=4194304, c=4194304], f32> {sluice.name = "a"},
                            %b: !sluice.tensor<[c=4194304, n=4194304], f32> {sluice.name = "b"}) {
  // expected-error @+1 {{'sluice.contract' op its flop count overflows 64 bits}}
  %c = sluice.contract %a, %b
      : (!sluice.tensor<[m=4194304, c=4194304], f32>, !sluice.tensor<[c=4194304, n=4194304], f32>)
      -> !sluice.tensor<[m=4194304, n=4194304], f32>
  sluice.return
}

// -----

// 2^31 x 2^31 f32 elements = 2^64 bytes.
sluice.graph @bytes_overflow(%a: !sluice.tensor<[m=2147483648, n=2147483648], f32> {sluice.name = "a"}) {
  // expected-error @+1 {{'sluice.relayout' op its bytes-read count overflows 64 bits}}
  %t = sluice.relayout %a
      : !sluice.tensor<[m=2147483648, n=2147483648], f32> -> !sluice.tensor<[n=2147483648, m=2147483648], f32>
  sluice.return
}

// -----

// Each mask is 2^61 f32 elements = 2^63 bytes; the second makes the total
// 2^64.
sluice.graph @total_overflow() {
  %m0 = sluice.random_mask {probability = 0.5 : f64, stream = 0 : i64}
      : !sluice.tensor<[m=2147483648, n=1073741824], f32>
  // expected-error @+1 {{'sluice.random_mask' op adding its counts to the totals overflows 64 bits}}
  %m1 = sluice.random_mask {probability = 0.5 : f64, stream = 1 : i64}
      : !sluice.tensor<[m=2147483648, n=1073741824], f32>
  sluice.return
}
