// Every sluice op and type, printed, parsed back and printed again; and the
// generic form parsed back into the same custom form.
// RUN: sluice-opt %s | sluice-opt | FileCheck %s
// RUN: sluice-opt %s --mlir-print-op-generic | sluice-opt | FileCheck %s
// RUN: sluice-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: sluice.graph @types
// CHECK-SAME: (%[[S:.*]]: !sluice.tensor<[], f32> {sluice.name = "s"},
// CHECK-SAME: %[[H:.*]]: !sluice.tensor<[i=8], f16> {sluice.name = "h"},
// CHECK-SAME: %[[B:.*]]: !sluice.tensor<[b=2, j=3, i=8], bf16> {sluice.name = "b"},
// CHECK-SAME: %{{.*}}: !sluice.tensor<[d.0=2, "1st"=3], f32> {sluice.name = "weird names"})
// CHECK-SAME: -> (!sluice.tensor<[], f32> {sluice.name = "s_out"},
// CHECK-SAME: !sluice.tensor<[b=2, j=3, i=8], bf16> {sluice.name = "b_out", sluice.shape = [6, 8]})
// CHECK-NOT: attributes
// CHECK: return %[[S]], %[[B]] : !sluice.tensor<[], f32>, !sluice.tensor<[b=2, j=3, i=8], bf16>
sluice.graph @types(%s: !sluice.tensor<[], f32> {sluice.name = "s"},
                    %h: !sluice.tensor<[i=8], f16> {sluice.name = "h"},
                    %b: !sluice.tensor<[b=2, j=3, i=8], bf16> {sluice.name = "b"},
                    %q: !sluice.tensor<["d.0"=2, "1st"=3], f32> {sluice.name = "weird names"})
    -> (!sluice.tensor<[], f32> {sluice.name = "s_out"},
        !sluice.tensor<[b=2, j=3, i=8], bf16> {sluice.name = "b_out", sluice.shape = [6, 8]}) {
  sluice.return %s, %b : !sluice.tensor<[], f32>, !sluice.tensor<[b=2, j=3, i=8], bf16>
}

// A graph without results, in the backward phase.
// CHECK-LABEL: sluice.graph @backward()
// CHECK-SAME: attributes {phase = #sluice<phase backward>}
// CHECK-NEXT: return{{$}}
// GENERIC-LABEL: "sluice.graph"() <{function_type = () -> (), phase = #sluice<phase backward>, sym_name = "backward"}>
sluice.graph @backward() attributes {phase = #sluice<phase backward>} {
  sluice.return
}

// An explicit forward phase is the default and is not printed.
// CHECK-LABEL: sluice.graph @forward()
// CHECK-NOT: phase
// CHECK: return
// GENERIC-LABEL: "sluice.graph"() <{function_type = () -> (), phase = #sluice<phase forward>, sym_name = "forward"}>
sluice.graph @forward() attributes {phase = #sluice<phase forward>} {
  sluice.return
}

// CHECK-LABEL: sluice.graph @primitives
// CHECK-SAME: (%[[Q:.*]]: !sluice.tensor<[b=2, j=4, h=2, p=8], f32> {sluice.name = "q"},
// CHECK-SAME: %[[K:.*]]: !sluice.tensor<[b=2, k=4, h=2, p=8], f32> {sluice.name = "k"},
// CHECK-SAME: %[[BIAS:.*]]: !sluice.tensor<[k=4], f32> {sluice.name = "bias"})
sluice.graph @primitives(%q: !sluice.tensor<[b=2, j=4, h=2, p=8], f32> {sluice.name = "q"},
                         %k: !sluice.tensor<[b=2, k=4, h=2, p=8], f32> {sluice.name = "k"},
                         %bias: !sluice.tensor<[k=4], f32> {sluice.name = "bias"})
    -> (!sluice.tensor<[b=2, h=2, j=4], f32> {sluice.name = "y"}) {
  // CHECK: %[[S:.*]] = contract %[[Q]], %[[K]] {scale = 1.250000e-01 : f64}
  // CHECK-SAME: : (!sluice.tensor<[b=2, j=4, h=2, p=8], f32>, !sluice.tensor<[b=2, k=4, h=2, p=8], f32>)
  // CHECK-SAME: -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
  %s = sluice.contract %q, %k {scale = 0.125 : f64}
      : (!sluice.tensor<[b=2, j=4, h=2, p=8], f32>, !sluice.tensor<[b=2, k=4, h=2, p=8], f32>)
      -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
  // The default scale (1.0) is not printed.
  // CHECK: %[[S1:.*]] = contract %[[Q]], %[[K]] :
  %s1 = sluice.contract %q, %k {scale = 1.0 : f64}
      : (!sluice.tensor<[b=2, j=4, h=2, p=8], f32>, !sluice.tensor<[b=2, k=4, h=2, p=8], f32>)
      -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
  // CHECK: %[[M:.*]] = map(%[[S]], %[[BIAS]]) {index_dims = ["j", "k"]}
  // CHECK-SAME: : (!sluice.tensor<[b=2, h=2, j=4, k=4], f32>, !sluice.tensor<[k=4], f32>)
  // CHECK-SAME: -> !sluice.tensor<[b=2, h=2, j=4, k=4], f16> {
  // CHECK-NEXT: ^bb0(%[[SV:.*]]: f32, %[[BV:.*]]: f32, %[[J:.*]]: index, %[[KK:.*]]: index):
  // CHECK-NEXT: %[[ADD:.*]] = arith.addf %[[SV]], %[[BV]] : f32
  // CHECK-NEXT: %[[GT:.*]] = arith.cmpi ugt, %[[KK]], %[[J]] : index
  // CHECK-NEXT: %[[E:.*]] = math.exp %[[ADD]] : f32
  // CHECK-NEXT: %[[SEL:.*]] = arith.select %[[GT]], %[[E]], %[[ADD]] : f32
  // CHECK-NEXT: yield %[[SEL]] : f32
  // CHECK-NEXT: }
  %m = sluice.map (%s, %bias) {index_dims = ["j", "k"]}
      : (!sluice.tensor<[b=2, h=2, j=4, k=4], f32>, !sluice.tensor<[k=4], f32>)
      -> !sluice.tensor<[b=2, h=2, j=4, k=4], f16> {
  ^bb0(%sv: f32, %bv: f32, %j: index, %kk: index):
    %add = arith.addf %sv, %bv : f32
    %gt = arith.cmpi ugt, %kk, %j : index
    %e = math.exp %add : f32
    %sel = arith.select %gt, %e, %add : f32
    sluice.yield %sel : f32
  }
  // A map without inputs: an iota along j.
  // CHECK: %[[IOTA:.*]] = map() {index_dims = ["j"]} : () -> !sluice.tensor<[j=4], f32> {
  // CHECK-NEXT: ^bb0(%[[JJ:.*]]: index):
  // CHECK-NEXT: arith.index_cast %[[JJ]] : index to i64
  %iota = sluice.map () {index_dims = ["j"]} : () -> !sluice.tensor<[j=4], f32> {
  ^bb0(%jj: index):
    %i = arith.index_cast %jj : index to i64
    %f = arith.sitofp %i : i64 to f32
    sluice.yield %f : f32
  }
  // CHECK: %[[MAX:.*]] = reduce max %[[M]] over ["k"]
  // CHECK-SAME: : !sluice.tensor<[b=2, h=2, j=4, k=4], f16> -> !sluice.tensor<[b=2, h=2, j=4], f32>
  %max = sluice.reduce max %m over ["k"]
      : !sluice.tensor<[b=2, h=2, j=4, k=4], f16> -> !sluice.tensor<[b=2, h=2, j=4], f32>
  // The result may take any layout of the remaining dimensions.
  // CHECK: %[[SUM:.*]] = reduce sum %[[S]] over ["k", "b"]
  // CHECK-SAME: : !sluice.tensor<[b=2, h=2, j=4, k=4], f32> -> !sluice.tensor<[j=4, h=2], f32>
  %sum = sluice.reduce sum %s over ["k", "b"]
      : !sluice.tensor<[b=2, h=2, j=4, k=4], f32> -> !sluice.tensor<[j=4, h=2], f32>
  // CHECK: %[[ALL:.*]] = reduce sum %[[SUM]] over ["j", "h"]
  // CHECK-SAME: -> !sluice.tensor<[], f32>
  %all = sluice.reduce sum %sum over ["j", "h"]
      : !sluice.tensor<[j=4, h=2], f32> -> !sluice.tensor<[], f32>
  // CHECK: %[[MASK:.*]] = random_mask {probability = 1.000000e-01 : f64, stream = 7 : i64}
  // CHECK-SAME: : !sluice.tensor<[b=2, h=2, j=4], bf16>
  %mask = sluice.random_mask {probability = 0.1 : f64, stream = 7 : i64}
      : !sluice.tensor<[b=2, h=2, j=4], bf16>
  // CHECK: %[[T:.*]] = relayout %[[MAX]]
  // CHECK-SAME: : !sluice.tensor<[b=2, h=2, j=4], f32> -> !sluice.tensor<[j=4, b=2, h=2], f32>
  %t = sluice.relayout %max
      : !sluice.tensor<[b=2, h=2, j=4], f32> -> !sluice.tensor<[j=4, b=2, h=2], f32>
  // CHECK: %[[R:.*]] = rename %[[T]]
  // CHECK-SAME: : !sluice.tensor<[j=4, b=2, h=2], f32> -> !sluice.tensor<[k=4, b=2, h=2], f32>
  %r = sluice.rename %t
      : !sluice.tensor<[j=4, b=2, h=2], f32> -> !sluice.tensor<[k=4, b=2, h=2], f32>
  // Discardable attributes survive.
  // CHECK: %[[Y:.*]] = relayout %[[MAX]] {sluice.name = "out"}
  %y = sluice.relayout %max {sluice.name = "out"}
      : !sluice.tensor<[b=2, h=2, j=4], f32> -> !sluice.tensor<[b=2, h=2, j=4], f32>
  // CHECK: return %[[Y]] : !sluice.tensor<[b=2, h=2, j=4], f32>
  sluice.return %y : !sluice.tensor<[b=2, h=2, j=4], f32>
}

// GENERIC-LABEL: sym_name = "primitives"
// GENERIC: "sluice.contract"(%{{.*}}, %{{.*}}) <{scale = 1.250000e-01 : f64}>
// GENERIC: "sluice.map"(%{{.*}}, %{{.*}}) <{index_dims = ["j", "k"]}> ({
// GENERIC: "sluice.yield"(%{{.*}}) : (f32) -> ()
// GENERIC: "sluice.reduce"(%{{.*}}) <{dims = ["k"], kind = #sluice<reduce_kind max>}>
// GENERIC: "sluice.reduce"(%{{.*}}) <{dims = ["k", "b"], kind = #sluice<reduce_kind sum>}>
// GENERIC: "sluice.random_mask"() <{probability = 1.000000e-01 : f64, stream = 7 : i64}>
// GENERIC: "sluice.relayout"
// GENERIC: "sluice.rename"

// CHECK-LABEL: sluice.graph @composites
// CHECK-SAME: (%[[X:.*]]: !sluice.tensor<[b=2, j=4, i=8], f32> {sluice.name = "x"},
// CHECK-SAME: %[[BI:.*]]: !sluice.tensor<[i=8], f32> {sluice.name = "bi"},
// CHECK-SAME: %[[G:.*]]: !sluice.tensor<[i=8], f32> {sluice.name = "gamma"},
// CHECK-SAME: %[[SC:.*]]: !sluice.tensor<[b=2, j=4, k=4], f16> {sluice.name = "scores"})
sluice.graph @composites(%x: !sluice.tensor<[b=2, j=4, i=8], f32> {sluice.name = "x"},
                         %bi: !sluice.tensor<[i=8], f32> {sluice.name = "bi"},
                         %gamma: !sluice.tensor<[i=8], f32> {sluice.name = "gamma"},
                         %scores: !sluice.tensor<[b=2, j=4, k=4], f16> {sluice.name = "scores"})
    -> (!sluice.tensor<[b=2, j=4, i=8], f32> {sluice.name = "y"},
        !sluice.tensor<[b=2, j=4, k=4], f16> {sluice.name = "p"}) {
  // CHECK: %[[BA:.*]] = bias_add %[[X]], %[[BI]]
  // CHECK-SAME: : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> !sluice.tensor<[b=2, j=4, i=8], f32>
  %ba = sluice.bias_add %x, %bi
      : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> !sluice.tensor<[b=2, j=4, i=8], f32>
  // CHECK: %[[RA:.*]] = residual_add %[[BA]], %[[X]]
  // CHECK-SAME: : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[b=2, j=4, i=8], f32>) -> !sluice.tensor<[b=2, j=4, i=8], f32>
  %ra = sluice.residual_add %ba, %x
      : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[b=2, j=4, i=8], f32>) -> !sluice.tensor<[b=2, j=4, i=8], f32>
  // CHECK: %[[LN:.*]], %[[MEAN:.*]], %[[RSTD:.*]] = layernorm %[[RA]], %[[G]], %[[BI]] over ["i"] {eps = 9.9999999999999995E-7 : f64}
  // CHECK-SAME: -> (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[b=2, j=4], f32>, !sluice.tensor<[j=4, b=2], f32>)
  %ln:3 = sluice.layernorm %ra, %gamma, %bi over ["i"] {eps = 1.0e-6 : f64}
      : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[b=2, j=4], f32>, !sluice.tensor<[j=4, b=2], f32>)
  // The default eps (1e-5) is not printed.
  // CHECK: layernorm %[[RA]], %[[G]], %[[BI]] over ["i"] :
  %ln2:3 = sluice.layernorm %ra, %gamma, %bi over ["i"]
      : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[b=2, j=4], f32>, !sluice.tensor<[b=2, j=4], f32>)
  // CHECK: %[[RELU:.*]] = relu %[[LN]] : !sluice.tensor<[b=2, j=4, i=8], f32>
  %relu = sluice.relu %ln#0 : !sluice.tensor<[b=2, j=4, i=8], f32>
  // CHECK: %[[GELU:.*]] = gelu %[[RELU]] : !sluice.tensor<[b=2, j=4, i=8], f32>
  %gelu = sluice.gelu %relu : !sluice.tensor<[b=2, j=4, i=8], f32>
  // CHECK: %[[GT:.*]] = gelu_tanh %[[GELU]] : !sluice.tensor<[b=2, j=4, i=8], f32>
  %gt = sluice.gelu_tanh %gelu : !sluice.tensor<[b=2, j=4, i=8], f32>
  // CHECK: %[[DROP:.*]], %[[DMASK:.*]] = dropout %[[GT]] {probability = 1.000000e-01 : f64, stream = 3 : i64}
  // CHECK-SAME: : !sluice.tensor<[b=2, j=4, i=8], f32> -> !sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[i=8, b=2, j=4], f32>
  %drop:2 = sluice.dropout %gt {probability = 0.1 : f64, stream = 3 : i64}
      : !sluice.tensor<[b=2, j=4, i=8], f32> -> !sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[i=8, b=2, j=4], f32>
  // CHECK: %[[CM:.*]] = causal_mask %[[SC]] query "j" key "k" : !sluice.tensor<[b=2, j=4, k=4], f16>
  %cm = sluice.causal_mask %scores query "j" key "k" : !sluice.tensor<[b=2, j=4, k=4], f16>
  // CHECK: %[[SM:.*]] = softmax %[[CM]] over "k" : !sluice.tensor<[b=2, j=4, k=4], f16>
  %sm = sluice.softmax %cm over "k" : !sluice.tensor<[b=2, j=4, k=4], f16>
  // CHECK: return %[[DROP]], %[[SM]]
  sluice.return %drop#0, %sm : !sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[b=2, j=4, k=4], f16>
}

// GENERIC-LABEL: sym_name = "composites"
// GENERIC: "sluice.bias_add"
// GENERIC: "sluice.residual_add"
// GENERIC: "sluice.layernorm"(%{{.*}}, %{{.*}}, %{{.*}}) <{dims = ["i"], eps = 9.9999999999999995E-7 : f64}>
// GENERIC: "sluice.relu"
// GENERIC: "sluice.gelu"
// GENERIC: "sluice.gelu_tanh"
// GENERIC: "sluice.dropout"(%{{.*}}) <{probability = 1.000000e-01 : f64, stream = 3 : i64}>
// GENERIC: "sluice.causal_mask"(%{{.*}}) <{key = "k", query = "j"}>
// GENERIC: "sluice.softmax"(%{{.*}}) <{dim = "k"}>
// GENERIC: "sluice.return"
