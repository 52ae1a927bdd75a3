// --sluice-legalize-contractions: relayouts where a contraction has no
// strided-batched GEMM mapping (docs/Codegen.md), nothing elsewhere. The
// output must verify, and running the pass again must change nothing.
// RUN: sluice-opt %s --sluice-legalize-contractions | FileCheck %s
// RUN: sluice-opt %s --sluice-legalize-contractions | sluice-opt --sluice-legalize-contractions | FileCheck %s

// A projection maps as it is (m = h*p, n = b*j): untouched.
// CHECK-LABEL: sluice.graph @projection
// CHECK-SAME: (%[[X:.*]]: !sluice.tensor<[b=2, j=4, i=8], f32> {sluice.name = "x"}, %[[W:.*]]: !sluice.tensor<[h=2, p=4, i=8], f32> {sluice.name = "w"})
// CHECK-NEXT: %[[Q:.*]] = contract %[[X]], %[[W]] {sluice.name = "q_proj"}
// CHECK-SAME: : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[h=2, p=4, i=8], f32>) -> !sluice.tensor<[b=2, j=4, h=2, p=4], f32>
// CHECK-NEXT: return %[[Q]]
sluice.graph @projection(%x: !sluice.tensor<[b=2, j=4, i=8], f32> {sluice.name = "x"},
                         %w: !sluice.tensor<[h=2, p=4, i=8], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[b=2, j=4, h=2, p=4], f32> {sluice.name = "q"}) {
  %q = sluice.contract %x, %w {sluice.name = "q_proj"}
      : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[h=2, p=4, i=8], f32>)
      -> !sluice.tensor<[b=2, j=4, h=2, p=4], f32>
  sluice.return %q : !sluice.tensor<[b=2, j=4, h=2, p=4], f32>
}

// q.k^T: the batch (b, h) is split in both operands; both become
// [b, h, seq, p] (p, contracted and innermost, stays innermost). The result
// already maps. Attributes other than the operands are kept.
// CHECK-LABEL: sluice.graph @scores
// CHECK-SAME: (%[[Q:.*]]: !sluice.tensor<[b=2, j=4, h=2, p=8], f32> {sluice.name = "q"}, %[[K:.*]]: !sluice.tensor<[b=2, k=4, h=2, p=8], f32> {sluice.name = "k"})
// CHECK-NEXT: %[[QL:.*]] = relayout %[[Q]] {sluice.name = "qk.relayout_lhs", sluice.origin_kind = #sluice<origin_kind layout>} : !sluice.tensor<[b=2, j=4, h=2, p=8], f32> -> !sluice.tensor<[b=2, h=2, j=4, p=8], f32>
// CHECK-NEXT: %[[KL:.*]] = relayout %[[K]] {sluice.name = "qk.relayout_rhs", sluice.origin_kind = #sluice<origin_kind layout>} : !sluice.tensor<[b=2, k=4, h=2, p=8], f32> -> !sluice.tensor<[b=2, h=2, k=4, p=8], f32>
// CHECK-NEXT: %[[S:.*]] = contract %[[QL]], %[[KL]] {scale = 1.250000e-01 : f64, sluice.name = "qk"}
// CHECK-SAME: : (!sluice.tensor<[b=2, h=2, j=4, p=8], f32>, !sluice.tensor<[b=2, h=2, k=4, p=8], f32>) -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
// CHECK-NEXT: return %[[S]]
sluice.graph @scores(%q: !sluice.tensor<[b=2, j=4, h=2, p=8], f32> {sluice.name = "q"},
                     %k: !sluice.tensor<[b=2, k=4, h=2, p=8], f32> {sluice.name = "k"})
    -> (!sluice.tensor<[b=2, h=2, j=4, k=4], f32> {sluice.name = "s"}) {
  %s = sluice.contract %q, %k {scale = 0.125 : f64, sluice.name = "qk"}
      : (!sluice.tensor<[b=2, j=4, h=2, p=8], f32>, !sluice.tensor<[b=2, k=4, h=2, p=8], f32>)
      -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
  sluice.return %s : !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
}

// attention x values: the lhs maps; the rhs and the result have the batch
// split by k / j. The rhs becomes [b, h, k, p] (p, free and innermost, stays
// innermost); the contraction computes [b, h, j, p] and a relayout gives the
// original result type to every user.
// CHECK-LABEL: sluice.graph @values
// CHECK-SAME: (%[[A:.*]]: !sluice.tensor<[b=2, h=2, j=4, k=4], f32> {sluice.name = "a"}, %[[V:.*]]: !sluice.tensor<[b=2, k=4, h=2, p=8], f32> {sluice.name = "v"})
// CHECK-NEXT: %[[VL:.*]] = relayout %[[V]] {sluice.name = "av.relayout_rhs", sluice.origin_kind = #sluice<origin_kind layout>} : !sluice.tensor<[b=2, k=4, h=2, p=8], f32> -> !sluice.tensor<[b=2, h=2, k=4, p=8], f32>
// CHECK-NEXT: %[[O:.*]] = contract %[[A]], %[[VL]] {sluice.name = "av"}
// CHECK-SAME: : (!sluice.tensor<[b=2, h=2, j=4, k=4], f32>, !sluice.tensor<[b=2, h=2, k=4, p=8], f32>) -> !sluice.tensor<[b=2, h=2, j=4, p=8], f32>
// CHECK-NEXT: %[[OL:.*]] = relayout %[[O]] {sluice.name = "av.relayout_result", sluice.origin_kind = #sluice<origin_kind layout>} : !sluice.tensor<[b=2, h=2, j=4, p=8], f32> -> !sluice.tensor<[b=2, j=4, h=2, p=8], f32>
// CHECK-NEXT: %[[R:.*]] = relu %[[OL]]
// CHECK-NEXT: return %[[OL]], %[[R]]
sluice.graph @values(%a: !sluice.tensor<[b=2, h=2, j=4, k=4], f32> {sluice.name = "a"},
                     %v: !sluice.tensor<[b=2, k=4, h=2, p=8], f32> {sluice.name = "v"})
    -> (!sluice.tensor<[b=2, j=4, h=2, p=8], f32> {sluice.name = "o"},
        !sluice.tensor<[b=2, j=4, h=2, p=8], f32> {sluice.name = "r"}) {
  %o = sluice.contract %a, %v {sluice.name = "av"}
      : (!sluice.tensor<[b=2, h=2, j=4, k=4], f32>, !sluice.tensor<[b=2, k=4, h=2, p=8], f32>)
      -> !sluice.tensor<[b=2, j=4, h=2, p=8], f32>
  %r = sluice.relu %o : !sluice.tensor<[b=2, j=4, h=2, p=8], f32>
  sluice.return %o, %r : !sluice.tensor<[b=2, j=4, h=2, p=8], f32>, !sluice.tensor<[b=2, j=4, h=2, p=8], f32>
}

// The batch innermost in the result only: just the result is relayouted.
// CHECK-LABEL: sluice.graph @batch_innermost
// CHECK-SAME: (%[[L:.*]]: {{.*}}, %[[R:.*]]: {{.*}})
// CHECK-NEXT: %[[C:.*]] = contract %[[L]], %[[R]] {sluice.name = "bmm"}
// CHECK-SAME: -> !sluice.tensor<[b=3, j=4, k=5], f32>
// CHECK-NEXT: %[[CL:.*]] = relayout %[[C]] {sluice.name = "bmm.relayout_result", sluice.origin_kind = #sluice<origin_kind layout>} : !sluice.tensor<[b=3, j=4, k=5], f32> -> !sluice.tensor<[j=4, k=5, b=3], f32>
// CHECK-NEXT: return %[[CL]]
sluice.graph @batch_innermost(%l: !sluice.tensor<[b=3, j=4, p=8], f32> {sluice.name = "l"},
                              %r: !sluice.tensor<[b=3, k=5, p=8], f32> {sluice.name = "r"})
    -> (!sluice.tensor<[j=4, k=5, b=3], f32> {sluice.name = "c"}) {
  %c = sluice.contract %l, %r {sluice.name = "bmm"}
      : (!sluice.tensor<[b=3, j=4, p=8], f32>, !sluice.tensor<[b=3, k=5, p=8], f32>)
      -> !sluice.tensor<[j=4, k=5, b=3], f32>
  sluice.return %c : !sluice.tensor<[j=4, k=5, b=3], f32>
}

// The contracted group (h, p) in two orders: relayouting either operand
// fixes it, and the smaller one is relayouted, into the other's order.
// CHECK-LABEL: sluice.graph @smaller_rhs
// CHECK-SAME: (%[[X:.*]]: {{.*}}, %[[W:.*]]: {{.*}})
// CHECK-NEXT: %[[WL:.*]] = relayout %[[W]] {sluice.name = "c.relayout_rhs", sluice.origin_kind = #sluice<origin_kind layout>} : !sluice.tensor<[u=2, p=4, h=2], f32> -> !sluice.tensor<[u=2, h=2, p=4], f32>
// CHECK-NEXT: contract %[[X]], %[[WL]]
sluice.graph @smaller_rhs(%x: !sluice.tensor<[j=32, h=2, p=4], f32> {sluice.name = "x"},
                          %w: !sluice.tensor<[u=2, p=4, h=2], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[j=32, u=2], f32> {sluice.name = "y"}) {
  %y = sluice.contract %x, %w {sluice.name = "c"}
      : (!sluice.tensor<[j=32, h=2, p=4], f32>, !sluice.tensor<[u=2, p=4, h=2], f32>)
      -> !sluice.tensor<[j=32, u=2], f32>
  sluice.return %y : !sluice.tensor<[j=32, u=2], f32>
}

// CHECK-LABEL: sluice.graph @smaller_lhs
// CHECK-SAME: (%[[X:.*]]: {{.*}}, %[[W:.*]]: {{.*}})
// CHECK-NEXT: %[[XL:.*]] = relayout %[[X]] {sluice.name = "c.relayout_lhs", sluice.origin_kind = #sluice<origin_kind layout>} : !sluice.tensor<[j=2, h=2, p=4], f32> -> !sluice.tensor<[j=2, p=4, h=2], f32>
// CHECK-NEXT: contract %[[XL]], %[[W]]
sluice.graph @smaller_lhs(%x: !sluice.tensor<[j=2, h=2, p=4], f32> {sluice.name = "x"},
                          %w: !sluice.tensor<[u=32, p=4, h=2], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[j=2, u=32], f32> {sluice.name = "y"}) {
  %y = sluice.contract %x, %w {sluice.name = "c"}
      : (!sluice.tensor<[j=2, h=2, p=4], f32>, !sluice.tensor<[u=32, p=4, h=2], f32>)
      -> !sluice.tensor<[j=2, u=32], f32>
  sluice.return %y : !sluice.tensor<[j=2, u=32], f32>
}

// Unnamed contractions: the relayouts take the name reports give the
// contraction (contract_<n>, counting the unnamed ones of the graph).
// CHECK-LABEL: sluice.graph @unnamed
// CHECK-NEXT: %{{.*}} = contract %{{.*}}, %{{.*}} : (
// CHECK-NEXT: relayout {{.*}} {sluice.name = "contract_1.relayout_rhs", sluice.origin_kind = #sluice<origin_kind layout>}
// CHECK-NEXT: contract
sluice.graph @unnamed(%x: !sluice.tensor<[j=4, h=2, p=4], f32> {sluice.name = "x"},
                      %w: !sluice.tensor<[u=2, p=4, h=2], f32> {sluice.name = "w"},
                      %v: !sluice.tensor<[u=2, h=2, p=4], f32> {sluice.name = "v"})
    -> (!sluice.tensor<[j=4, u=2], f32> {sluice.name = "y"},
        !sluice.tensor<[j=4, u=2], f32> {sluice.name = "z"}) {
  %y = sluice.contract %x, %v
      : (!sluice.tensor<[j=4, h=2, p=4], f32>, !sluice.tensor<[u=2, h=2, p=4], f32>)
      -> !sluice.tensor<[j=4, u=2], f32>
  %z = sluice.contract %x, %w
      : (!sluice.tensor<[j=4, h=2, p=4], f32>, !sluice.tensor<[u=2, p=4, h=2], f32>)
      -> !sluice.tensor<[j=4, u=2], f32>
  sluice.return %y, %z : !sluice.tensor<[j=4, u=2], f32>, !sluice.tensor<[j=4, u=2], f32>
}

// One tensor read in the same wrong layout by two contractions: one
// relayout, named after the first, serves both.
// CHECK-LABEL: sluice.graph @shared_relayout
// CHECK-SAME: (%[[Q:.*]]: {{.*}}, %[[K:.*]]: {{.*}}, %[[K2:.*]]: {{.*}})
// CHECK-NEXT: %[[QL:.*]] = relayout %[[Q]] {sluice.name = "s1.relayout_lhs", sluice.origin_kind = #sluice<origin_kind layout>}
// CHECK-NEXT: %[[KL:.*]] = relayout %[[K]] {sluice.name = "s1.relayout_rhs", sluice.origin_kind = #sluice<origin_kind layout>}
// CHECK-NEXT: contract %[[QL]], %[[KL]]
// CHECK-NEXT: %[[K2L:.*]] = relayout %[[K2]] {sluice.name = "s2.relayout_rhs", sluice.origin_kind = #sluice<origin_kind layout>}
// CHECK-NEXT: contract %[[QL]], %[[K2L]]
// CHECK-NOT: relayout
sluice.graph @shared_relayout(%q: !sluice.tensor<[b=2, j=4, h=2, p=8], f32> {sluice.name = "q"},
                              %k: !sluice.tensor<[b=2, k=4, h=2, p=8], f32> {sluice.name = "k"},
                              %k2: !sluice.tensor<[b=2, k=4, h=2, p=8], f32> {sluice.name = "k2"})
    -> (!sluice.tensor<[b=2, h=2, j=4, k=4], f32> {sluice.name = "s1"},
        !sluice.tensor<[b=2, h=2, j=4, k=4], f32> {sluice.name = "s2"}) {
  %s1 = sluice.contract %q, %k {sluice.name = "s1"}
      : (!sluice.tensor<[b=2, j=4, h=2, p=8], f32>, !sluice.tensor<[b=2, k=4, h=2, p=8], f32>)
      -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
  %s2 = sluice.contract %q, %k2 {sluice.name = "s2"}
      : (!sluice.tensor<[b=2, j=4, h=2, p=8], f32>, !sluice.tensor<[b=2, k=4, h=2, p=8], f32>)
      -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
  sluice.return %s1, %s2 : !sluice.tensor<[b=2, h=2, j=4, k=4], f32>, !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
}

// An existing relayout costs nothing: the second contraction could relayout
// its smaller rhs, but reuses the lhs relayout made for the first instead.
// CHECK-LABEL: sluice.graph @reuse_is_free
// CHECK-SAME: (%[[X:.*]]: {{.*}}, %[[W1:.*]]: {{.*}}, %[[W2:.*]]: {{.*}})
// CHECK-NEXT: %[[XL:.*]] = relayout %[[X]] {sluice.name = "c1.relayout_lhs", sluice.origin_kind = #sluice<origin_kind layout>} : !sluice.tensor<[j=4, h=2, p=4], f32> -> !sluice.tensor<[j=4, p=4, h=2], f32>
// CHECK-NEXT: contract %[[XL]], %[[W1]]
// CHECK-NEXT: contract %[[XL]], %[[W2]]
// CHECK-NEXT: return
sluice.graph @reuse_is_free(%x: !sluice.tensor<[j=4, h=2, p=4], f32> {sluice.name = "x"},
                            %w1: !sluice.tensor<[u=8, p=4, h=2], f32> {sluice.name = "w1"},
                            %w2: !sluice.tensor<[u=2, p=4, h=2], f32> {sluice.name = "w2"})
    -> (!sluice.tensor<[j=4, u=8], f32> {sluice.name = "y1"},
        !sluice.tensor<[j=4, u=2], f32> {sluice.name = "y2"}) {
  %y1 = sluice.contract %x, %w1 {sluice.name = "c1"}
      : (!sluice.tensor<[j=4, h=2, p=4], f32>, !sluice.tensor<[u=8, p=4, h=2], f32>)
      -> !sluice.tensor<[j=4, u=8], f32>
  %y2 = sluice.contract %x, %w2 {sluice.name = "c2"}
      : (!sluice.tensor<[j=4, h=2, p=4], f32>, !sluice.tensor<[u=2, p=4, h=2], f32>)
      -> !sluice.tensor<[j=4, u=2], f32>
  sluice.return %y1, %y2 : !sluice.tensor<[j=4, u=8], f32>, !sluice.tensor<[j=4, u=2], f32>
}

// Only the top level of a graph is legalized: a contraction inside a kernel
// is the fusion pass's (which runs later) and is left alone.
// CHECK-LABEL: sluice.graph @in_kernel
// CHECK-NOT: relayout
// CHECK: return
sluice.graph @in_kernel(%q: !sluice.tensor<[b=2, j=4, h=2, p=8], f32> {sluice.name = "q"},
                        %k: !sluice.tensor<[b=2, k=4, h=2, p=8], f32> {sluice.name = "k"})
    -> (!sluice.tensor<[b=2, h=2, j=4, k=4], f32> {sluice.name = "s"}) {
  %s = sluice.kernel (%q, %k) {kind = #sluice<kernel_kind gemm>, members = ["qk"]}
      : (!sluice.tensor<[b=2, j=4, h=2, p=8], f32>, !sluice.tensor<[b=2, k=4, h=2, p=8], f32>)
      -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32> {
  ^bb0(%qa: !sluice.tensor<[b=2, j=4, h=2, p=8], f32>, %ka: !sluice.tensor<[b=2, k=4, h=2, p=8], f32>):
    %c = sluice.contract %qa, %ka {sluice.name = "qk"}
        : (!sluice.tensor<[b=2, j=4, h=2, p=8], f32>, !sluice.tensor<[b=2, k=4, h=2, p=8], f32>)
        -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
    sluice.kernel_yield %c : !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
  }
  sluice.return %s : !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
}
