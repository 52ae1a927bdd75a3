// --sluice-decompose replaces every composite by the primitives it stands for
// (SluiceDecompositions.cpp); the output must verify and contain no
// composite.

// NONE-NOT: {{= (sluice\.)?(bias_add|residual_add|softmax|layernorm|relu|gelu|gelu_tanh|dropout|causal_mask) }}

// Map bodies compute in f32 whatever the storage type (f16 here); the
// composite's sluice.name moves to the op producing its first result.
sluice.graph @bias_add(%x: !sluice.tensor<[j=4, i=8], f16> {sluice.name = "x"},
                       %b: !sluice.tensor<[i=8], f16> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, i=8], f16> {sluice.name = "y"}) {
  %y = sluice.bias_add %x, %b {sluice.name = "fc1_bias"}
      : (!sluice.tensor<[j=4, i=8], f16>, !sluice.tensor<[i=8], f16>) -> !sluice.tensor<[j=4, i=8], f16>
  sluice.return %y : !sluice.tensor<[j=4, i=8], f16>
}

sluice.graph @residual_add(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                           %b: !sluice.tensor<[i=8, j=4], f32> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  %y = sluice.residual_add %a, %b
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8, j=4], f32>) -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
}

// softmax: max, exp(x - max), sum, divide; the statistics are f32.
sluice.graph @softmax(%x: !sluice.tensor<[j=4, k=4], f16> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4, k=4], f16> {sluice.name = "y"}) {
  %y = sluice.softmax %x over "k" {sluice.name = "attn_softmax"} : !sluice.tensor<[j=4, k=4], f16>
  sluice.return %y : !sluice.tensor<[j=4, k=4], f16>
}

// layernorm over two dimensions (count 8 x 2 = 16), eps 1e-6:
// mean = sum / 16, var = sum((x - mean)^2) / 16, rstd = rsqrt(var + eps),
// y = (x - mean) * rstd * scale + bias.
sluice.graph @layernorm(%x: !sluice.tensor<[j=4, u=2, i=8], f16> {sluice.name = "x"},
                        %g: !sluice.tensor<[i=8, u=2], f16> {sluice.name = "g"},
                        %b: !sluice.tensor<[u=2, i=8], f16> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, u=2, i=8], f16> {sluice.name = "y"},
        !sluice.tensor<[j=4], f32> {sluice.name = "mean"},
        !sluice.tensor<[j=4], f32> {sluice.name = "rstd"}) {
  %y:3 = sluice.layernorm %x, %g, %b over ["i", "u"] {eps = 1.0e-6 : f64, sluice.name = "ln1"}
      : (!sluice.tensor<[j=4, u=2, i=8], f16>, !sluice.tensor<[i=8, u=2], f16>, !sluice.tensor<[u=2, i=8], f16>)
      -> (!sluice.tensor<[j=4, u=2, i=8], f16>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>)
  sluice.return %y#0, %y#1, %y#2
      : !sluice.tensor<[j=4, u=2, i=8], f16>, !sluice.tensor<[j=4], f32>, !sluice.tensor<[j=4], f32>
}

sluice.graph @relu(%x: !sluice.tensor<[i=8], bf16> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], bf16> {sluice.name = "y"}) {
  %y = sluice.relu %x : !sluice.tensor<[i=8], bf16>
  sluice.return %y : !sluice.tensor<[i=8], bf16>
}

// gelu = 0.5 x (1 + erf(x / sqrt 2)); 1 / sqrt 2 = 0.70710678...
sluice.graph @gelu(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  %y = sluice.gelu %x : !sluice.tensor<[i=8], f32>
  sluice.return %y : !sluice.tensor<[i=8], f32>
}

// gelu_tanh = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)));
// sqrt(2 / pi) = 0.79788456...
sluice.graph @gelu_tanh(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  %y = sluice.gelu_tanh %x : !sluice.tensor<[i=8], f32>
  sluice.return %y : !sluice.tensor<[i=8], f32>
}

// dropout: the mask is a random_mask with the same probability and stream,
// and the kept elements are divided by 1 - p = 0.75.
sluice.graph @dropout(%x: !sluice.tensor<[j=2, i=8], f16> {sluice.name = "x"})
    -> (!sluice.tensor<[j=2, i=8], f16> {sluice.name = "y"},
        !sluice.tensor<[i=8, j=2], f16> {sluice.name = "mask"}) {
  %y:2 = sluice.dropout %x {probability = 0.25 : f64, stream = 5 : i64, sluice.name = "drop1"}
      : !sluice.tensor<[j=2, i=8], f16> -> !sluice.tensor<[j=2, i=8], f16>, !sluice.tensor<[i=8, j=2], f16>
  sluice.return %y#0, %y#1 : !sluice.tensor<[j=2, i=8], f16>, !sluice.tensor<[i=8, j=2], f16>
}

// causal_mask: the body takes the query and key positions as index
// arguments, in that order, whatever the layout.
sluice.graph @causal_mask(%x: !sluice.tensor<[b=2, k=4, j=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[b=2, k=4, j=4], f32> {sluice.name = "y"}) {
  %y = sluice.causal_mask %x query "j" key "k" : !sluice.tensor<[b=2, k=4, j=4], f32>
  sluice.return %y : !sluice.tensor<[b=2, k=4, j=4], f32>
}

// Primitives are left alone.
sluice.graph @primitives(%x: !sluice.tensor<[j=2, i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=2], f32> {sluice.name = "y"}) {
  %t = sluice.relayout %x : !sluice.tensor<[j=2, i=8], f32> -> !sluice.tensor<[i=8, j=2], f32>
  %r = sluice.reduce max %t over ["i"] : !sluice.tensor<[i=8, j=2], f32> -> !sluice.tensor<[j=2], f32>
  sluice.return %r : !sluice.tensor<[j=2], f32>
}

// With compute-type=f64 the bodies and their constants are f64 (the
// reference interpreter's precision); storage types do not change.
// F64-LABEL: sluice.graph @layernorm
// F64: map(%{{.*}}) : (!sluice.tensor<[j=4], f32>) -> !sluice.tensor<[j=4], f32> {
// F64-NEXT: ^bb0(%{{.*}}: f64):
// F64-NEXT: arith.constant 1.600000e+01 : f64
// F64: arith.constant 9.9999999999999995E-7 : f64
// F64-LABEL: sluice.graph @gelu
// F64: arith.constant 0.70710678118654757 : f64
// F64-LABEL: sluice.graph @gelu_tanh
// F64: arith.constant 0.79788456080286541 : f64
// F64-LABEL: sluice.graph @causal_mask
// F64: arith.constant 0xFFF0000000000000 : f64
