// Every sluice op and type, printed, parsed back and printed again; and the
// generic form parsed back into the same custom form.

sluice.graph @types(%s: !sluice.tensor<[], f32> {sluice.name = "s"},
                    %h: !sluice.tensor<[i=8], f16> {sluice.name = "h"},
                    %b: !sluice.tensor<[b=2, j=3, i=8], bf16> {sluice.name = "b"},
                    %q: !sluice.tensor<["d.0"=2, "1st"=3], f32> {sluice.name = "weird names"})
    -> (!sluice.tensor<[], f32> {sluice.name = "s_out"},
        !sluice.tensor<[b=2, j=3, i=8], bf16> {sluice.name = "b_out", sluice.shape = [6, 8]}) {
  sluice.return %s, %b : !sluice.tensor<[], f32>, !sluice.tensor<[b=2, j=3, i=8], bf16>
}

// A graph without results, in the backward phase.
// GENERIC-LABEL: "sluice.graph"() <{function_type = () -> (), phase = #sluice<phase backward>, sym_name = "backward"}>
sluice.graph @backward() attributes {phase = #sluice<phase backward>} {
  sluice.return
}

// An explicit forward phase is the default and is not printed.
// GENERIC-LABEL: "sluice.graph"() <{function_type = () -> (), phase = #sluice<phase forward>, sym_name = "forward"}>
sluice.graph @forward() attributes {phase = #sluice<phase forward>} {
  sluice.return
}

sluice.graph @primitives(%q: !sluice.tensor<[b=2, j=4, h=2, p=8], f32> {sluice.name = "q"},
                         %k: !sluice.tensor<[b=2, k=4, h=2, p=8], f32> {sluice.name = "k"},
                         %bias: !sluice.tensor<[k=4], f32> {sluice.name = "bias"})
    -> (!sluice.tensor<[b=2, h=2, j=4], f32> {sluice.name = "y"}) {
  %s = sluice.contract %q, %k {scale = 0.125 : f64}
      : (!sluice.tensor<[b=2, j=4, h=2, p=8], f32>, !sluice.tensor<[b=2, k=4, h=2, p=8], f32>)
      -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
  // The default scale (1.0) is not printed.
  %s1 = sluice.contract %q, %k {scale = 1.0 : f64}
      : (!sluice.tensor<[b=2, j=4, h=2, p=8], f32>, !sluice.tensor<[b=2, k=4, h=2, p=8], f32>)
      -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
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
  %iota = sluice.map () {index_dims = ["j"]} : () -> !sluice.tensor<[j=4], f32> {
  ^bb0(%jj: index):
    %i = arith.index_cast %jj : index to i64
    %f = arith.sitofp %i : i64 to f32
    sluice.yield %f : f32
  }
  %max = sluice.reduce max %m over ["k"]
      : !sluice.tensor<[b=2, h=2, j=4, k=4], f16> -> !sluice.tensor<[b=2, h=2, j=4], f32>
  // The result may take any layout of the remaining dimensions.
  %sum = sluice.reduce sum %s over ["k", "b"]
      : !sluice.tensor<[b=2, h=2, j=4, k=4], f32> -> !sluice.tensor<[j=4, h=2], f32>
  %all = sluice.reduce sum %sum over ["j", "h"]
      : !sluice.tensor<[j=4, h=2], f32> -> !sluice.tensor<[], f32>
  %mask = sluice.random_mask {probability = 0.1 : f64, stream = 7 : i64}
      : !sluice.tensor<[b=2, h=2, j=4], bf16>
  %t = sluice.relayout %max
      : !sluice.tensor<[b=2, h=2, j=4], f32> -> !sluice.tensor<[j=4, b=2, h=2], f32>
  %r = sluice.rename %t
      : !sluice.tensor<[j=4, b=2, h=2], f32> -> !sluice.tensor<[k=4, b=2, h=2], f32>
  // Discardable attributes survive.
  %y = sluice.relayout %max {sluice.name = "out"}
      : !sluice.tensor<[b=2, h=2, j=4], f32> -> !sluice.tensor<[b=2, h=2, j=4], f32>
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

sluice.graph @composites(%x: !sluice.tensor<[b=2, j=4, i=8], f32> {sluice.name = "x"},
                         %bi: !sluice.tensor<[i=8], f32> {sluice.name = "bi"},
                         %gamma: !sluice.tensor<[i=8], f32> {sluice.name = "gamma"},
                         %scores: !sluice.tensor<[b=2, j=4, k=4], f16> {sluice.name = "scores"})
    -> (!sluice.tensor<[b=2, j=4, i=8], f32> {sluice.name = "y"},
        !sluice.tensor<[b=2, j=4, k=4], f16> {sluice.name = "p"}) {
  %ba = sluice.bias_add %x, %bi
      : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> !sluice.tensor<[b=2, j=4, i=8], f32>
  %ra = sluice.residual_add %ba, %x
      : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[b=2, j=4, i=8], f32>) -> !sluice.tensor<[b=2, j=4, i=8], f32>
  %ln:3 = sluice.layernorm %ra, %gamma, %bi over ["i"] {eps = 1.0e-6 : f64}
      : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[b=2, j=4], f32>, !sluice.tensor<[j=4, b=2], f32>)
  // The default eps (1e-5) is not printed.
  %ln2:3 = sluice.layernorm %ra, %gamma, %bi over ["i"]
      : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[i=8], f32>, !sluice.tensor<[i=8], f32>)
      -> (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[b=2, j=4], f32>, !sluice.tensor<[b=2, j=4], f32>)
  %relu = sluice.relu %ln#0 : !sluice.tensor<[b=2, j=4, i=8], f32>
  %gelu = sluice.gelu %relu : !sluice.tensor<[b=2, j=4, i=8], f32>
  %gt = sluice.gelu_tanh %gelu : !sluice.tensor<[b=2, j=4, i=8], f32>
  %drop:2 = sluice.dropout %gt {probability = 0.1 : f64, stream = 3 : i64}
      : !sluice.tensor<[b=2, j=4, i=8], f32> -> !sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[i=8, b=2, j=4], f32>
  %cm = sluice.causal_mask %scores query "j" key "k" : !sluice.tensor<[b=2, j=4, k=4], f16>
  %sm = sluice.softmax %cm over "k" : !sluice.tensor<[b=2, j=4, k=4], f16>
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
