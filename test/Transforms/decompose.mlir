// --sluice-decompose replaces every composite by the primitives it stands for
// (SluiceDecompositions.cpp); the output must verify and contain no
// composite.
// RUN: sluice-opt %s --sluice-decompose | %strip-origins | FileCheck %s
// RUN: sluice-opt %s --sluice-decompose | %strip-origins | sluice-opt | FileCheck %s
// RUN: sluice-opt %s --sluice-decompose | %strip-origins | FileCheck %s --check-prefix=NONE
// RUN: sluice-opt %s --sluice-decompose=compute-type=f64 | %strip-origins | FileCheck %s --check-prefix=F64

// NONE-NOT: {{= (sluice\.)?(bias_add|residual_add|softmax|layernorm|relu|gelu|gelu_tanh|dropout|causal_mask) }}

// Map bodies compute in f32 whatever the storage type (f16 here); the
// composite's sluice.name moves to the op producing its first result.
// CHECK-LABEL: sluice.graph @bias_add
// CHECK-SAME: (%[[X:.*]]: !sluice.tensor<[j=4, i=8], f16> {sluice.name = "x"}, %[[B:.*]]: !sluice.tensor<[i=8], f16> {sluice.name = "b"})
// CHECK-NEXT: %[[Y:.*]] = map(%[[X]], %[[B]]) {sluice.name = "fc1_bias"}
// CHECK-SAME: : (!sluice.tensor<[j=4, i=8], f16>, !sluice.tensor<[i=8], f16>) -> !sluice.tensor<[j=4, i=8], f16> {
// CHECK-NEXT: ^bb0(%[[XV:.*]]: f32, %[[BV:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[XV]], %[[BV]] : f32
// CHECK-NEXT: yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: return %[[Y]]
sluice.graph @bias_add(%x: !sluice.tensor<[j=4, i=8], f16> {sluice.name = "x"},
                       %b: !sluice.tensor<[i=8], f16> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, i=8], f16> {sluice.name = "y"}) {
  %y = sluice.bias_add %x, %b {sluice.name = "fc1_bias"}
      : (!sluice.tensor<[j=4, i=8], f16>, !sluice.tensor<[i=8], f16>) -> !sluice.tensor<[j=4, i=8], f16>
  sluice.return %y : !sluice.tensor<[j=4, i=8], f16>
}

// CHECK-LABEL: sluice.graph @residual_add
// CHECK-SAME: (%[[A:.*]]: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"}, %[[B:.*]]: !sluice.tensor<[i=8, j=4], f32> {sluice.name = "b"})
// CHECK-NEXT: %[[Y:.*]] = map(%[[A]], %[[B]])
// CHECK-SAME: -> !sluice.tensor<[j=4, i=8], f32> {
// CHECK-NEXT: ^bb0(%[[AV:.*]]: f32, %[[BV:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[AV]], %[[BV]] : f32
// CHECK-NEXT: yield %[[S]] : f32
// CHECK: return %[[Y]]
sluice.graph @residual_add(%a: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "a"},
                           %b: !sluice.tensor<[i=8, j=4], f32> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "y"}) {
  %y = sluice.residual_add %a, %b
      : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8, j=4], f32>) -> !sluice.tensor<[j=4, i=8], f32>
  sluice.return %y : !sluice.tensor<[j=4, i=8], f32>
}

// softmax: max, exp(x - max), sum, divide; the statistics are f32.
// CHECK-LABEL: sluice.graph @softmax
// CHECK-SAME: (%[[X:.*]]: !sluice.tensor<[j=4, k=4], f16> {sluice.name = "x"})
// CHECK-NEXT: %[[MAX:.*]] = reduce max %[[X]] over ["k"] : !sluice.tensor<[j=4, k=4], f16> -> !sluice.tensor<[j=4], f32>
// CHECK-NEXT: %[[EXP:.*]] = map(%[[X]], %[[MAX]]) : (!sluice.tensor<[j=4, k=4], f16>, !sluice.tensor<[j=4], f32>) -> !sluice.tensor<[j=4, k=4], f16> {
// CHECK-NEXT: ^bb0(%[[XV:.*]]: f32, %[[MV:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[XV]], %[[MV]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT: yield %[[E]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[SUM:.*]] = reduce sum %[[EXP]] over ["k"] : !sluice.tensor<[j=4, k=4], f16> -> !sluice.tensor<[j=4], f32>
// CHECK-NEXT: %[[Y:.*]] = map(%[[EXP]], %[[SUM]]) {sluice.name = "attn_softmax"} : (!sluice.tensor<[j=4, k=4], f16>, !sluice.tensor<[j=4], f32>) -> !sluice.tensor<[j=4, k=4], f16> {
// CHECK-NEXT: ^bb0(%[[EV:.*]]: f32, %[[SV:.*]]: f32):
// CHECK-NEXT: %[[Q:.*]] = arith.divf %[[EV]], %[[SV]] fastmath<arcp> : f32
// CHECK-NEXT: yield %[[Q]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: return %[[Y]]
sluice.graph @softmax(%x: !sluice.tensor<[j=4, k=4], f16> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4, k=4], f16> {sluice.name = "y"}) {
  %y = sluice.softmax %x over "k" {sluice.name = "attn_softmax"} : !sluice.tensor<[j=4, k=4], f16>
  sluice.return %y : !sluice.tensor<[j=4, k=4], f16>
}

// layernorm over two dimensions (count 8 x 2 = 16), eps 1e-6:
// mean = sum / 16, var = sum((x - mean)^2) / 16, rstd = rsqrt(var + eps),
// y = (x - mean) * rstd * scale + bias.
// CHECK-LABEL: sluice.graph @layernorm
// CHECK-SAME: (%[[X:.*]]: !sluice.tensor<[j=4, u=2, i=8], f16> {sluice.name = "x"}, %[[G:.*]]: !sluice.tensor<[i=8, u=2], f16> {sluice.name = "g"}, %[[B:.*]]: !sluice.tensor<[u=2, i=8], f16> {sluice.name = "b"})
// CHECK-NEXT: %[[SUM:.*]] = reduce sum %[[X]] over ["i", "u"] : !sluice.tensor<[j=4, u=2, i=8], f16> -> !sluice.tensor<[j=4], f32>
// CHECK-NEXT: %[[MEAN:.*]] = map(%[[SUM]]) : (!sluice.tensor<[j=4], f32>) -> !sluice.tensor<[j=4], f32> {
// CHECK-NEXT: ^bb0(%[[SV:.*]]: f32):
// CHECK-NEXT: %[[N:.*]] = arith.constant 1.600000e+01 : f32
// CHECK-NEXT: %[[M:.*]] = arith.divf %[[SV]], %[[N]] fastmath<arcp> : f32
// CHECK-NEXT: yield %[[M]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[SQ:.*]] = map(%[[X]], %[[MEAN]]) : (!sluice.tensor<[j=4, u=2, i=8], f16>, !sluice.tensor<[j=4], f32>) -> !sluice.tensor<[j=4, u=2, i=8], f32> {
// CHECK-NEXT: ^bb0(%[[XV:.*]]: f32, %[[MV:.*]]: f32):
// CHECK-NEXT: %[[C:.*]] = arith.subf %[[XV]], %[[MV]] : f32
// CHECK-NEXT: %[[C2:.*]] = arith.mulf %[[C]], %[[C]] : f32
// CHECK-NEXT: yield %[[C2]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[SSQ:.*]] = reduce sum %[[SQ]] over ["i", "u"] : !sluice.tensor<[j=4, u=2, i=8], f32> -> !sluice.tensor<[j=4], f32>
// CHECK-NEXT: %[[RSTD:.*]] = map(%[[SSQ]]) : (!sluice.tensor<[j=4], f32>) -> !sluice.tensor<[j=4], f32> {
// CHECK-NEXT: ^bb0(%[[QV:.*]]: f32):
// CHECK-NEXT: %[[N2:.*]] = arith.constant 1.600000e+01 : f32
// CHECK-NEXT: %[[VAR:.*]] = arith.divf %[[QV]], %[[N2]] fastmath<arcp> : f32
// CHECK-NEXT: %[[EPS:.*]] = arith.constant 9.99999997E-7 : f32
// CHECK-NEXT: %[[VE:.*]] = arith.addf %[[VAR]], %[[EPS]] : f32
// CHECK-NEXT: %[[R:.*]] = math.rsqrt %[[VE]] : f32
// CHECK-NEXT: yield %[[R]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: %[[Y:.*]] = map(%[[X]], %[[MEAN]], %[[RSTD]], %[[G]], %[[B]]) {sluice.name = "ln1"}
// CHECK-SAME: -> !sluice.tensor<[j=4, u=2, i=8], f16> {
// CHECK-NEXT: ^bb0(%[[XV2:.*]]: f32, %[[MV2:.*]]: f32, %[[RV:.*]]: f32, %[[GV:.*]]: f32, %[[BV:.*]]: f32):
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[XV2]], %[[MV2]] : f32
// CHECK-NEXT: %[[DR:.*]] = arith.mulf %[[D]], %[[RV]] : f32
// CHECK-NEXT: %[[DG:.*]] = arith.mulf %[[DR]], %[[GV]] : f32
// CHECK-NEXT: %[[OUT:.*]] = arith.addf %[[DG]], %[[BV]] : f32
// CHECK-NEXT: yield %[[OUT]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: return %[[Y]], %[[MEAN]], %[[RSTD]]
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

// CHECK-LABEL: sluice.graph @relu
// CHECK-NEXT: %[[Y:.*]] = map(%{{.*}}) : (!sluice.tensor<[i=8], bf16>) -> !sluice.tensor<[i=8], bf16> {
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32):
// CHECK-NEXT: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[R:.*]] = arith.maximumf %[[V]], %[[Z]] : f32
// CHECK-NEXT: yield %[[R]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: return %[[Y]]
sluice.graph @relu(%x: !sluice.tensor<[i=8], bf16> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], bf16> {sluice.name = "y"}) {
  %y = sluice.relu %x : !sluice.tensor<[i=8], bf16>
  sluice.return %y : !sluice.tensor<[i=8], bf16>
}

// gelu = 0.5 x (1 + erf(x / sqrt 2)); 1 / sqrt 2 = 0.70710678...
// CHECK-LABEL: sluice.graph @gelu
// CHECK-NEXT: %[[Y:.*]] = map(%{{.*}}) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32):
// CHECK-NEXT: %[[C:.*]] = arith.constant 0.707106769 : f32
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[V]], %[[C]] : f32
// CHECK-NEXT: %[[E:.*]] = math.erf %[[S]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = arith.addf %[[E]], %[[ONE]] : f32
// CHECK-NEXT: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[H:.*]] = arith.mulf %[[V]], %[[HALF]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[H]], %[[P]] : f32
// CHECK-NEXT: yield %[[R]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: return %[[Y]]
sluice.graph @gelu(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  %y = sluice.gelu %x : !sluice.tensor<[i=8], f32>
  sluice.return %y : !sluice.tensor<[i=8], f32>
}

// gelu_tanh = 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)));
// sqrt(2 / pi) = 0.79788456...
// CHECK-LABEL: sluice.graph @gelu_tanh
// CHECK-NEXT: %[[Y:.*]] = map(%{{.*}}) : (!sluice.tensor<[i=8], f32>) -> !sluice.tensor<[i=8], f32> {
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32):
// CHECK-NEXT: %[[X2:.*]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK-NEXT: %[[X3:.*]] = arith.mulf %[[X2]], %[[V]] : f32
// CHECK-NEXT: %[[K:.*]] = arith.constant 4.471500e-02 : f32
// CHECK-NEXT: %[[CUBIC:.*]] = arith.mulf %[[X3]], %[[K]] : f32
// CHECK-NEXT: %[[IN:.*]] = arith.addf %[[V]], %[[CUBIC]] : f32
// CHECK-NEXT: %[[C:.*]] = arith.constant 0.797884583 : f32
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[IN]], %[[C]] : f32
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[S]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[P:.*]] = arith.addf %[[T]], %[[ONE]] : f32
// CHECK-NEXT: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NEXT: %[[H:.*]] = arith.mulf %[[V]], %[[HALF]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[H]], %[[P]] : f32
// CHECK-NEXT: yield %[[R]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: return %[[Y]]
sluice.graph @gelu_tanh(%x: !sluice.tensor<[i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "y"}) {
  %y = sluice.gelu_tanh %x : !sluice.tensor<[i=8], f32>
  sluice.return %y : !sluice.tensor<[i=8], f32>
}

// dropout: the mask is a random_mask with the same probability and stream,
// and the kept elements are divided by 1 - p = 0.75.
// CHECK-LABEL: sluice.graph @dropout
// CHECK-SAME: (%[[X:.*]]: !sluice.tensor<[j=2, i=8], f16> {sluice.name = "x"})
// CHECK-NEXT: %[[MASK:.*]] = random_mask {probability = 2.500000e-01 : f64, stream = 5 : i64} : !sluice.tensor<[i=8, j=2], f16>
// CHECK-NEXT: %[[Y:.*]] = map(%[[X]], %[[MASK]]) {sluice.name = "drop1"} : (!sluice.tensor<[j=2, i=8], f16>, !sluice.tensor<[i=8, j=2], f16>) -> !sluice.tensor<[j=2, i=8], f16> {
// CHECK-NEXT: ^bb0(%[[XV:.*]]: f32, %[[MV:.*]]: f32):
// CHECK-NEXT: %[[K:.*]] = arith.mulf %[[XV]], %[[MV]] : f32
// CHECK-NEXT: %[[KEEP:.*]] = arith.constant 7.500000e-01 : f32
// CHECK-NEXT: %[[R:.*]] = arith.divf %[[K]], %[[KEEP]] fastmath<arcp> : f32
// CHECK-NEXT: yield %[[R]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: return %[[Y]], %[[MASK]]
sluice.graph @dropout(%x: !sluice.tensor<[j=2, i=8], f16> {sluice.name = "x"})
    -> (!sluice.tensor<[j=2, i=8], f16> {sluice.name = "y"},
        !sluice.tensor<[i=8, j=2], f16> {sluice.name = "mask"}) {
  %y:2 = sluice.dropout %x {probability = 0.25 : f64, stream = 5 : i64, sluice.name = "drop1"}
      : !sluice.tensor<[j=2, i=8], f16> -> !sluice.tensor<[j=2, i=8], f16>, !sluice.tensor<[i=8, j=2], f16>
  sluice.return %y#0, %y#1 : !sluice.tensor<[j=2, i=8], f16>, !sluice.tensor<[i=8, j=2], f16>
}

// causal_mask: the body takes the query and key positions as index
// arguments, in that order, whatever the layout.
// CHECK-LABEL: sluice.graph @causal_mask
// CHECK-SAME: (%[[X:.*]]: !sluice.tensor<[b=2, k=4, j=4], f32> {sluice.name = "x"})
// CHECK-NEXT: %[[Y:.*]] = map(%[[X]]) {index_dims = ["j", "k"]} : (!sluice.tensor<[b=2, k=4, j=4], f32>) -> !sluice.tensor<[b=2, k=4, j=4], f32> {
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32, %[[Q:.*]]: index, %[[K:.*]]: index):
// CHECK-NEXT: %[[FUT:.*]] = arith.cmpi ugt, %[[K]], %[[Q]] : index
// CHECK-NEXT: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[R:.*]] = arith.select %[[FUT]], %[[NINF]], %[[V]] : f32
// CHECK-NEXT: yield %[[R]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: return %[[Y]]
sluice.graph @causal_mask(%x: !sluice.tensor<[b=2, k=4, j=4], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[b=2, k=4, j=4], f32> {sluice.name = "y"}) {
  %y = sluice.causal_mask %x query "j" key "k" : !sluice.tensor<[b=2, k=4, j=4], f32>
  sluice.return %y : !sluice.tensor<[b=2, k=4, j=4], f32>
}

// Primitives are left alone.
// CHECK-LABEL: sluice.graph @primitives
// CHECK-NEXT: %[[T:.*]] = relayout
// CHECK-NEXT: %[[R:.*]] = reduce max %[[T]] over ["i"]
// CHECK-NEXT: return %[[R]]
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
