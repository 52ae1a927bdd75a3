// --sluice-stack-contractions: contractions of one operand (renames looked
// through) against graph arguments of one type become one contraction over
// the weights stacked along a new dim, each former result its slice;
// docs/Layout.md, "Stacked Q/K/V contractions".
// RUN: sluice-opt %s -split-input-file --sluice-stack-contractions | FileCheck %s
// RUN: sluice-opt %s -split-input-file --sluice-stack-contractions | sluice-opt -split-input-file -verify-each | FileCheck %s --check-prefix=VALID

// Q, K, V with their biases: one contraction over [s=3, h, p, i] with one
// stacked bias (its epilogue), s just before the weights' free dims; K and
// V read x as keys (k), so their slices are cut from the stacked result
// renamed to k (a rename each, so a streaming kernel reads them as two
// inputs); the renames of x go with their contractions.
// CHECK-LABEL: sluice.graph @qkv
// CHECK: %[[W:.*]] = map(%wq, %wk, %wv) {index_dims = ["s"], sluice.name = "q_proj&k_proj&v_proj.weights"} : ({{.*}}) -> !sluice.tensor<[s=3, h=2, p=4, i=8], f32>
// CHECK: arith.cmpi eq, %{{.*}}, %c1 : index
// CHECK: arith.cmpi eq, %{{.*}}, %c0 : index
// CHECK: %[[P:.*]] = contract %x, %[[W]] {sluice.name = "q_proj&k_proj&v_proj"} : ({{.*}}) -> !sluice.tensor<[b=2, j=4, s=3, h=2, p=4], f32>
// CHECK: %[[B:.*]] = map(%bq, %bk, %bv) {index_dims = ["s"], sluice.name = "q_bias&k_bias&v_bias.biases"} : ({{.*}}) -> !sluice.tensor<[s=3, h=2, p=4], f32>
// CHECK: %[[PB:.*]] = bias_add %[[P]], %[[B]] {sluice.name = "q_bias&k_bias&v_bias"}
// CHECK: %[[MQ:.*]] = map(%[[PB]]) {index_dims = ["s"], sluice.name = "q_proj.mask"}
// CHECK: arith.cmpi eq, %{{.*}}, %c0 : index
// CHECK: %[[Q:.*]] = reduce sum %[[MQ]] over ["s"] {sluice.name = "q_proj"} : !sluice.tensor<[b=2, j=4, s=3, h=2, p=4], f32> -> !sluice.tensor<[b=2, j=4, h=2, p=4], f32>
// CHECK: %[[PK:.*]] = rename %[[PB]] {sluice.name = "k_proj.stacked"} : !sluice.tensor<[b=2, j=4, s=3, h=2, p=4], f32> -> !sluice.tensor<[b=2, k=4, s=3, h=2, p=4], f32>
// CHECK: %[[MK:.*]] = map(%[[PK]]) {index_dims = ["s"], sluice.name = "k_proj.mask"}
// CHECK: arith.cmpi eq, %{{.*}}, %c1 : index
// CHECK: %[[K:.*]] = reduce sum %[[MK]] over ["s"] {sluice.name = "k_proj"} : {{.*}} -> !sluice.tensor<[b=2, k=4, h=2, p=4], f32>
// CHECK: %[[PV:.*]] = rename %[[PB]] {sluice.name = "v_proj.stacked"} : !sluice.tensor<[b=2, j=4, s=3, h=2, p=4], f32> -> !sluice.tensor<[b=2, k=4, s=3, h=2, p=4], f32>
// CHECK: %[[MV:.*]] = map(%[[PV]]) {index_dims = ["s"], sluice.name = "v_proj.mask"}
// CHECK: arith.cmpi eq, %{{.*}}, %c2 : index
// CHECK: %[[V:.*]] = reduce sum %[[MV]] over ["s"] {sluice.name = "v_proj"}
// CHECK-NOT: contract %{{.*}}, %w{{[qkv]}}
// CHECK-NOT: rename %x
// CHECK: contract %[[Q]], %[[K]] {{.*}}sluice.name = "qk"
// CHECK: contract %{{.*}}, %[[V]] {sluice.name = "av"}
// VALID-LABEL: sluice.graph @qkv
sluice.graph @qkv(%x: !sluice.tensor<[b=2, j=4, i=8], f32> {sluice.name = "x"},
    %wq: !sluice.tensor<[h=2, p=4, i=8], f32> {sluice.name = "wq"}, %bq: !sluice.tensor<[h=2, p=4], f32> {sluice.name = "bq"},
    %wk: !sluice.tensor<[h=2, p=4, i=8], f32> {sluice.name = "wk"}, %bk: !sluice.tensor<[h=2, p=4], f32> {sluice.name = "bk"},
    %wv: !sluice.tensor<[h=2, p=4, i=8], f32> {sluice.name = "wv"}, %bv: !sluice.tensor<[h=2, p=4], f32> {sluice.name = "bv"})
    -> (!sluice.tensor<[b=2, j=4, h=2, p=4], f32> {sluice.name = "o"}) {
  %0 = sluice.contract %x, %wq {sluice.name = "q_proj"} : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[h=2, p=4, i=8], f32>) -> !sluice.tensor<[b=2, j=4, h=2, p=4], f32>
  %1 = sluice.bias_add %0, %bq {sluice.name = "q_bias"} : (!sluice.tensor<[b=2, j=4, h=2, p=4], f32>, !sluice.tensor<[h=2, p=4], f32>) -> !sluice.tensor<[b=2, j=4, h=2, p=4], f32>
  %2 = sluice.rename %x {sluice.name = "x_keys"} : !sluice.tensor<[b=2, j=4, i=8], f32> -> !sluice.tensor<[b=2, k=4, i=8], f32>
  %3 = sluice.contract %2, %wk {sluice.name = "k_proj"} : (!sluice.tensor<[b=2, k=4, i=8], f32>, !sluice.tensor<[h=2, p=4, i=8], f32>) -> !sluice.tensor<[b=2, k=4, h=2, p=4], f32>
  %4 = sluice.bias_add %3, %bk {sluice.name = "k_bias"} : (!sluice.tensor<[b=2, k=4, h=2, p=4], f32>, !sluice.tensor<[h=2, p=4], f32>) -> !sluice.tensor<[b=2, k=4, h=2, p=4], f32>
  %5 = sluice.contract %2, %wv {sluice.name = "v_proj"} : (!sluice.tensor<[b=2, k=4, i=8], f32>, !sluice.tensor<[h=2, p=4, i=8], f32>) -> !sluice.tensor<[b=2, k=4, h=2, p=4], f32>
  %6 = sluice.bias_add %5, %bv {sluice.name = "v_bias"} : (!sluice.tensor<[b=2, k=4, h=2, p=4], f32>, !sluice.tensor<[h=2, p=4], f32>) -> !sluice.tensor<[b=2, k=4, h=2, p=4], f32>
  %7 = sluice.contract %1, %4 {scale = 5.000000e-01 : f64, sluice.name = "qk"} : (!sluice.tensor<[b=2, j=4, h=2, p=4], f32>, !sluice.tensor<[b=2, k=4, h=2, p=4], f32>) -> !sluice.tensor<[b=2, h=2, j=4, k=4], f32>
  %8 = sluice.contract %7, %6 {sluice.name = "av"} : (!sluice.tensor<[b=2, h=2, j=4, k=4], f32>, !sluice.tensor<[b=2, k=4, h=2, p=4], f32>) -> !sluice.tensor<[b=2, j=4, h=2, p=4], f32>
  sluice.return %8 : !sluice.tensor<[b=2, j=4, h=2, p=4], f32>
}

// -----

// Only the weights of one type stack (wv is [h, e]: V stays alone); a bias
// that only one member has stays a bias add of its slice; x already has a
// dim named s, so the new dim is s1.
// CHECK-LABEL: sluice.graph @partial
// CHECK: map(%wq, %wk) {index_dims = ["s1"], {{.*}}} : ({{.*}}) -> !sluice.tensor<[s1=2, h=2, p=4, s=3], f32>
// CHECK: %[[P:.*]] = contract %x, %{{.*}} {sluice.name = "q_proj&k_proj"} : ({{.*}}) -> !sluice.tensor<[t=5, s1=2, h=2, p=4], f32>
// CHECK-NOT: biases
// CHECK: %[[Q:.*]] = reduce sum %{{.*}} over ["s1"] {sluice.name = "q_proj"}
// CHECK: %[[K:.*]] = reduce sum %{{.*}} over ["s1"] {sluice.name = "k_proj"}
// CHECK: bias_add %[[Q]], %bq {sluice.name = "q_bias"}
// CHECK: contract %x, %wv {sluice.name = "v_proj"}
sluice.graph @partial(%x: !sluice.tensor<[t=5, s=3], f32> {sluice.name = "x"},
    %wq: !sluice.tensor<[h=2, p=4, s=3], f32> {sluice.name = "wq"}, %bq: !sluice.tensor<[h=2, p=4], f32> {sluice.name = "bq"},
    %wk: !sluice.tensor<[h=2, p=4, s=3], f32> {sluice.name = "wk"},
    %wv: !sluice.tensor<[h=2, e=4, s=3], f32> {sluice.name = "wv"})
    -> (!sluice.tensor<[t=5, h=2, p=4], f32> {sluice.name = "q"}, !sluice.tensor<[t=5, h=2, p=4], f32> {sluice.name = "k"}, !sluice.tensor<[t=5, h=2, e=4], f32> {sluice.name = "v"}) {
  %0 = sluice.contract %x, %wq {sluice.name = "q_proj"} : (!sluice.tensor<[t=5, s=3], f32>, !sluice.tensor<[h=2, p=4, s=3], f32>) -> !sluice.tensor<[t=5, h=2, p=4], f32>
  %1 = sluice.bias_add %0, %bq {sluice.name = "q_bias"} : (!sluice.tensor<[t=5, h=2, p=4], f32>, !sluice.tensor<[h=2, p=4], f32>) -> !sluice.tensor<[t=5, h=2, p=4], f32>
  %2 = sluice.contract %x, %wk {sluice.name = "k_proj"} : (!sluice.tensor<[t=5, s=3], f32>, !sluice.tensor<[h=2, p=4, s=3], f32>) -> !sluice.tensor<[t=5, h=2, p=4], f32>
  %3 = sluice.contract %x, %wv {sluice.name = "v_proj"} : (!sluice.tensor<[t=5, s=3], f32>, !sluice.tensor<[h=2, e=4, s=3], f32>) -> !sluice.tensor<[t=5, h=2, e=4], f32>
  sluice.return %1, %2, %3 : !sluice.tensor<[t=5, h=2, p=4], f32>, !sluice.tensor<[t=5, h=2, p=4], f32>, !sluice.tensor<[t=5, h=2, e=4], f32>
}

// -----

// a and d stack (w and u); b reads w again (each weight once: it stays
// apart), c's weight is computed (not a graph argument), e's result has
// another layout.
// CHECK-LABEL: sluice.graph @apart
// CHECK: map(%w, %u) {index_dims = ["s"], sluice.name = "a&d.weights"}
// CHECK: contract %x, %{{.*}} {sluice.name = "a&d"} : ({{.*}}) -> !sluice.tensor<[t=5, s=2, f=4], f32>
// CHECK: reduce sum %{{.*}} over ["s"] {sluice.name = "a"}
// CHECK: reduce sum %{{.*}} over ["s"] {sluice.name = "d"}
// CHECK: contract %x, %w {sluice.name = "b"}
// CHECK: contract %x, %{{.*}} {sluice.name = "c"}
// CHECK: contract %x, %v {sluice.name = "e"}
// CHECK-NOT: index_dims
sluice.graph @apart(%x: !sluice.tensor<[t=5, i=3], f32> {sluice.name = "x"},
    %w: !sluice.tensor<[f=4, i=3], f32> {sluice.name = "w"},
    %u: !sluice.tensor<[f=4, i=3], f32> {sluice.name = "u"},
    %v: !sluice.tensor<[f=4, i=3], f32> {sluice.name = "v"})
    -> (!sluice.tensor<[t=5, f=4], f32> {sluice.name = "a"}, !sluice.tensor<[t=5, f=4], f32> {sluice.name = "b"}, !sluice.tensor<[t=5, f=4], f32> {sluice.name = "c"},
        !sluice.tensor<[t=5, f=4], f32> {sluice.name = "d"}, !sluice.tensor<[f=4, t=5], f32> {sluice.name = "e"}) {
  %0 = sluice.contract %x, %w {sluice.name = "a"} : (!sluice.tensor<[t=5, i=3], f32>, !sluice.tensor<[f=4, i=3], f32>) -> !sluice.tensor<[t=5, f=4], f32>
  %1 = sluice.contract %x, %w {sluice.name = "b"} : (!sluice.tensor<[t=5, i=3], f32>, !sluice.tensor<[f=4, i=3], f32>) -> !sluice.tensor<[t=5, f=4], f32>
  %2 = sluice.relu %u {sluice.name = "computed"} : !sluice.tensor<[f=4, i=3], f32>
  %3 = sluice.contract %x, %2 {sluice.name = "c"} : (!sluice.tensor<[t=5, i=3], f32>, !sluice.tensor<[f=4, i=3], f32>) -> !sluice.tensor<[t=5, f=4], f32>
  %4 = sluice.contract %x, %u {sluice.name = "d"} : (!sluice.tensor<[t=5, i=3], f32>, !sluice.tensor<[f=4, i=3], f32>) -> !sluice.tensor<[t=5, f=4], f32>
  %5 = sluice.contract %x, %v {sluice.name = "e"} : (!sluice.tensor<[t=5, i=3], f32>, !sluice.tensor<[f=4, i=3], f32>) -> !sluice.tensor<[f=4, t=5], f32>
  sluice.return %0, %1, %3, %4, %5 : !sluice.tensor<[t=5, f=4], f32>, !sluice.tensor<[t=5, f=4], f32>, !sluice.tensor<[t=5, f=4], f32>, !sluice.tensor<[t=5, f=4], f32>, !sluice.tensor<[f=4, t=5], f32>
}

// -----

// K reads x with its sequence named s: the stack dim avoids every member's
// names too (s1), and K's slice is cut from the stacked result renamed to s.
// CHECK-LABEL: sluice.graph @keys_named_s
// CHECK: contract %x, %{{.*}} {sluice.name = "q_proj&k_proj"} : ({{.*}}) -> !sluice.tensor<[j=4, s1=2, f=4], f32>
// CHECK: rename %{{.*}} {sluice.name = "k_proj.stacked"} : !sluice.tensor<[j=4, s1=2, f=4], f32> -> !sluice.tensor<[s=4, s1=2, f=4], f32>
// CHECK: reduce sum %{{.*}} over ["s1"] {sluice.name = "k_proj"} : !sluice.tensor<[s=4, s1=2, f=4], f32> -> !sluice.tensor<[s=4, f=4], f32>
sluice.graph @keys_named_s(%x: !sluice.tensor<[j=4, i=3], f32> {sluice.name = "x"},
    %wq: !sluice.tensor<[f=4, i=3], f32> {sluice.name = "wq"}, %wk: !sluice.tensor<[f=4, i=3], f32> {sluice.name = "wk"})
    -> (!sluice.tensor<[j=4, f=4], f32> {sluice.name = "q"}, !sluice.tensor<[s=4, f=4], f32> {sluice.name = "k"}) {
  %0 = sluice.contract %x, %wq {sluice.name = "q_proj"} : (!sluice.tensor<[j=4, i=3], f32>, !sluice.tensor<[f=4, i=3], f32>) -> !sluice.tensor<[j=4, f=4], f32>
  %1 = sluice.rename %x {sluice.name = "x_keys"} : !sluice.tensor<[j=4, i=3], f32> -> !sluice.tensor<[s=4, i=3], f32>
  %2 = sluice.contract %1, %wk {sluice.name = "k_proj"} : (!sluice.tensor<[s=4, i=3], f32>, !sluice.tensor<[f=4, i=3], f32>) -> !sluice.tensor<[s=4, f=4], f32>
  sluice.return %0, %2 : !sluice.tensor<[j=4, f=4], f32>, !sluice.tensor<[s=4, f=4], f32>
}
