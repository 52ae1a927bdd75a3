// RUN: sluice-opt %s -split-input-file --sluice-decompose --sluice-fuse=streaming=true | FileCheck %s

// The streaming rule with a query-only dim (grouped-query attention, named
// here without attention names): the scores [n, g, e, r, s] get two dims
// from `a` alone, e (the query heads sharing one key/value head) and r.
// K (`m`) and V (`w`) lack e: they are broadcast over it, and the kernel
// takes e as a query-only batch dim (the backward sums dK and dV over it).
// Without a causal mask the rows are the longer of the two (r, 5 > 3).
// CHECK-LABEL: sluice.graph @grouped_mixer
// CHECK: %[[K:.*]] = kernel(%a, %m, %w) {kind = #sluice<kernel_kind streaming>, members = ["score", "weights.reduce", "weights.map", "weights.reduce", "weights", "mix"], sluice.name = "k0", streaming = #sluice.streaming<direction = forward, rows = "r", cols = "s", scale = 5.000000e-01 : f64, causal = false, dropout = 0.000000e+00 : f64, stream = 0>}
// CHECK-SAME: -> !sluice.tensor<[n=2, g=2, e=3, r=5, v=6], f32>
// CHECK-NOT: kernel(
// CHECK: return %[[K]]
sluice.graph @grouped_mixer(%a: !sluice.tensor<[n=2, g=2, e=3, r=5, d=4], f32> {sluice.name = "a"},
                            %m: !sluice.tensor<[n=2, g=2, s=5, d=4], f32> {sluice.name = "m"},
                            %w: !sluice.tensor<[n=2, g=2, s=5, v=6], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[n=2, g=2, e=3, r=5, v=6], f32> {sluice.name = "out"}) {
  %sc = sluice.contract %a, %m {scale = 0.5 : f64, sluice.name = "score"}
      : (!sluice.tensor<[n=2, g=2, e=3, r=5, d=4], f32>, !sluice.tensor<[n=2, g=2, s=5, d=4], f32>)
      -> !sluice.tensor<[n=2, g=2, e=3, r=5, s=5], f32>
  %pr = sluice.softmax %sc over "s" {sluice.name = "weights"} : !sluice.tensor<[n=2, g=2, e=3, r=5, s=5], f32>
  %o = sluice.contract %pr, %w {sluice.name = "mix"}
      : (!sluice.tensor<[n=2, g=2, e=3, r=5, s=5], f32>, !sluice.tensor<[n=2, g=2, s=5, v=6], f32>)
      -> !sluice.tensor<[n=2, g=2, e=3, r=5, v=6], f32>
  sluice.return %o : !sluice.tensor<[n=2, g=2, e=3, r=5, v=6], f32>
}

// -----

// Multi-query: K and V have no head dim at all (h, 8 query heads, is
// query-only). The causal mask names the rows (r), although h is longer;
// the dropout stays inside.
// CHECK-LABEL: sluice.graph @multi_query_mixer
// CHECK: kernel(%a, %m, %w) {kind = #sluice<kernel_kind streaming>, members = ["drop.random_mask", "score", "causal", "weights.reduce", "weights.map", "weights.reduce", "weights", "drop", "mix"], sluice.name = "k0", streaming = #sluice.streaming<direction = forward, rows = "r", cols = "s", scale = 1.000000e+00 : f64, causal = true, dropout = 2.500000e-01 : f64, stream = 7>}
// CHECK-SAME: -> !sluice.tensor<[n=2, h=8, r=5, v=6], f32>
// CHECK-NOT: kernel(
sluice.graph @multi_query_mixer(%a: !sluice.tensor<[n=2, h=8, r=5, d=4], f32> {sluice.name = "a"},
                                %m: !sluice.tensor<[n=2, s=5, d=4], f32> {sluice.name = "m"},
                                %w: !sluice.tensor<[n=2, s=5, v=6], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[n=2, h=8, r=5, v=6], f32> {sluice.name = "out"}) {
  %sc = sluice.contract %a, %m {sluice.name = "score"}
      : (!sluice.tensor<[n=2, h=8, r=5, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>)
      -> !sluice.tensor<[n=2, h=8, r=5, s=5], f32>
  %cm = sluice.causal_mask %sc query "r" key "s" {sluice.name = "causal"} : !sluice.tensor<[n=2, h=8, r=5, s=5], f32>
  %pr = sluice.softmax %cm over "s" {sluice.name = "weights"} : !sluice.tensor<[n=2, h=8, r=5, s=5], f32>
  %pd, %mask = sluice.dropout %pr {probability = 0.25 : f64, stream = 7 : i64, sluice.name = "drop"}
      : !sluice.tensor<[n=2, h=8, r=5, s=5], f32> -> !sluice.tensor<[n=2, h=8, r=5, s=5], f32>, !sluice.tensor<[n=2, h=8, r=5, s=5], f32>
  %o = sluice.contract %pd, %w {sluice.name = "mix"}
      : (!sluice.tensor<[n=2, h=8, r=5, s=5], f32>, !sluice.tensor<[n=2, s=5, v=6], f32>)
      -> !sluice.tensor<[n=2, h=8, r=5, v=6], f32>
  sluice.return %o : !sluice.tensor<[n=2, h=8, r=5, v=6], f32>
}

// -----

// Negative: V has the query-only dim e that K lacks, so dK would sum over
// e and dV would not; the runtime kernels share K and V over one group.
// CHECK-LABEL: sluice.graph @value_per_query_head
// CHECK-NOT: streaming
// CHECK: return
sluice.graph @value_per_query_head(%a: !sluice.tensor<[n=2, e=3, r=5, d=4], f32> {sluice.name = "a"},
                                   %m: !sluice.tensor<[n=2, s=5, d=4], f32> {sluice.name = "m"},
                                   %w: !sluice.tensor<[n=2, e=3, s=5, v=6], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[n=2, e=3, r=5, v=6], f32> {sluice.name = "out"}) {
  %sc = sluice.contract %a, %m {sluice.name = "score"}
      : (!sluice.tensor<[n=2, e=3, r=5, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>)
      -> !sluice.tensor<[n=2, e=3, r=5, s=5], f32>
  %pr = sluice.softmax %sc over "s" {sluice.name = "weights"} : !sluice.tensor<[n=2, e=3, r=5, s=5], f32>
  %o = sluice.contract %pr, %w {sluice.name = "mix"}
      : (!sluice.tensor<[n=2, e=3, r=5, s=5], f32>, !sluice.tensor<[n=2, e=3, s=5, v=6], f32>)
      -> !sluice.tensor<[n=2, e=3, r=5, v=6], f32>
  sluice.return %o : !sluice.tensor<[n=2, e=3, r=5, v=6], f32>
}
