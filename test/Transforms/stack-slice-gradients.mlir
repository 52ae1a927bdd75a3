// --sluice-stack-slice-gradients: a sum of slice gradients of one stacked
// dim (autodiff's gradient of --sluice-stack-contractions' slices: a
// broadcast along s, masked to the slice's index, summed one `a + b` at a
// time, through renames) becomes one map stacking their inputs;
// docs/Layout.md, "Stacked Q/K/V contractions".
// RUN: sluice-opt %s -split-input-file --sluice-stack-slice-gradients | FileCheck %s
// RUN: sluice-opt %s -split-input-file --sluice-stack-slice-gradients -verify-each | sluice-opt -split-input-file | FileCheck %s --check-prefix=VALID

// Q, K and V: K's and V's terms come through a rename (k -> j); one stack
// of dq and the renamed dk and dv, named and placed like the sum.
// CHECK-LABEL: sluice.graph @qkv
// CHECK-DAG: %[[K:.*]] = rename %dk {sluice.name = "k.mask.grad.rename"} : !sluice.tensor<[b=2, k=4, h=2, p=3], f32> -> !sluice.tensor<[b=2, j=4, h=2, p=3], f32>
// CHECK-DAG: %[[V:.*]] = rename %dv {sluice.name = "v.mask.grad.rename"} : !sluice.tensor<[b=2, k=4, h=2, p=3], f32> -> !sluice.tensor<[b=2, j=4, h=2, p=3], f32>
// CHECK: %[[S:.*]] = map(%dq, %[[K]], %[[V]]) {index_dims = ["s"], sluice.name = "sum2"} : ({{.*}}) -> !sluice.tensor<[b=2, j=4, s=3, h=2, p=3], f32> {
// CHECK-NEXT: ^bb0(%[[A0:.*]]: f32, %[[A1:.*]]: f32, %[[A2:.*]]: f32, %[[I:.*]]: index):
// CHECK: %[[C2:.*]] = arith.cmpi eq, %[[I]], %c2 : index
// CHECK: %[[X2:.*]] = arith.select %[[C2]], %[[A2]], %{{.*}} : f32
// CHECK: %[[C1:.*]] = arith.cmpi eq, %[[I]], %c1 : index
// CHECK: %[[X1:.*]] = arith.select %[[C1]], %[[A1]], %[[X2]] : f32
// CHECK: %[[C0:.*]] = arith.cmpi eq, %[[I]], %c0 : index
// CHECK: %[[X0:.*]] = arith.select %[[C0]], %[[A0]], %[[X1]] : f32
// CHECK: sluice.yield %[[X0]] : f32
// CHECK-NOT: map
// CHECK: return %[[S]]
// VALID-LABEL: sluice.graph @qkv
sluice.graph @qkv(%dq: !sluice.tensor<[b=2, j=4, h=2, p=3], f32> {sluice.name = "dq"},
    %dk: !sluice.tensor<[b=2, k=4, h=2, p=3], f32> {sluice.name = "dk"},
    %dv: !sluice.tensor<[b=2, k=4, h=2, p=3], f32> {sluice.name = "dv"})
    -> (!sluice.tensor<[b=2, j=4, s=3, h=2, p=3], f32> {sluice.name = "d"}) {
  %0 = sluice.map(%dv) {sluice.name = "v.grad"} : (!sluice.tensor<[b=2, k=4, h=2, p=3], f32>) -> !sluice.tensor<[b=2, k=4, s=3, h=2, p=3], f32> {
  ^bb0(%a: f32):
    sluice.yield %a : f32
  }
  %1 = sluice.map(%0) {index_dims = ["s"], sluice.name = "v.mask.grad"} : (!sluice.tensor<[b=2, k=4, s=3, h=2, p=3], f32>) -> !sluice.tensor<[b=2, k=4, s=3, h=2, p=3], f32> {
  ^bb0(%a: f32, %i: index):
    %c2 = arith.constant 2 : index
    %e = arith.cmpi eq, %i, %c2 : index
    %z = arith.constant 0.0 : f32
    %r = arith.select %e, %a, %z : f32
    sluice.yield %r : f32
  }
  %2 = sluice.rename %1 : !sluice.tensor<[b=2, k=4, s=3, h=2, p=3], f32> -> !sluice.tensor<[b=2, j=4, s=3, h=2, p=3], f32>
  // K's term masks the broadcast directly, and compares the other way round.
  %3 = sluice.map(%dk) {index_dims = ["s"], sluice.name = "k.mask.grad"} : (!sluice.tensor<[b=2, k=4, h=2, p=3], f32>) -> !sluice.tensor<[b=2, k=4, s=3, h=2, p=3], f32> {
  ^bb0(%a: f32, %i: index):
    %c1 = arith.constant 1 : index
    %e = arith.cmpi eq, %c1, %i : index
    %z = arith.constant 0.0 : f32
    %r = arith.select %e, %a, %z : f32
    sluice.yield %r : f32
  }
  %4 = sluice.rename %3 : !sluice.tensor<[b=2, k=4, s=3, h=2, p=3], f32> -> !sluice.tensor<[b=2, j=4, s=3, h=2, p=3], f32>
  %5 = sluice.map(%2, %4) {sluice.name = "sum1"} : (!sluice.tensor<[b=2, j=4, s=3, h=2, p=3], f32>, !sluice.tensor<[b=2, j=4, s=3, h=2, p=3], f32>) -> !sluice.tensor<[b=2, j=4, s=3, h=2, p=3], f32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    sluice.yield %s : f32
  }
  %6 = sluice.map(%dq) {index_dims = ["s"], sluice.name = "q.mask.grad"} : (!sluice.tensor<[b=2, j=4, h=2, p=3], f32>) -> !sluice.tensor<[b=2, j=4, s=3, h=2, p=3], f32> {
  ^bb0(%a: f32, %i: index):
    %c0 = arith.constant 0 : index
    %e = arith.cmpi eq, %i, %c0 : index
    %z = arith.constant 0.0 : f32
    %r = arith.select %e, %a, %z : f32
    sluice.yield %r : f32
  }
  %7 = sluice.map(%5, %6) {sluice.name = "sum2"} : (!sluice.tensor<[b=2, j=4, s=3, h=2, p=3], f32>, !sluice.tensor<[b=2, j=4, s=3, h=2, p=3], f32>) -> !sluice.tensor<[b=2, j=4, s=3, h=2, p=3], f32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %b, %a : f32
    sluice.yield %s : f32
  }
  sluice.return %7 : !sluice.tensor<[b=2, j=4, s=3, h=2, p=3], f32>
}

// -----

// Two of three indices (multi-query attention's K and V stacked with a
// third they do not have would be unusual, but an index without a term is
// zero): the stack yields 0 at s = 1.
// CHECK-LABEL: sluice.graph @gap
// CHECK: %[[S:.*]] = map(%d0, %d2) {index_dims = ["s"], sluice.name = "sum"}
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.cmpi eq, %{{.*}}, %c2 : index
// CHECK: %[[X2:.*]] = arith.select %{{.*}}, %{{.*}}, %[[Z]] : f32
// CHECK: arith.cmpi eq, %{{.*}}, %c0 : index
// CHECK: return %[[S]]
// VALID-LABEL: sluice.graph @gap
sluice.graph @gap(%d0: !sluice.tensor<[j=4, p=3], f32> {sluice.name = "d0"},
    %d2: !sluice.tensor<[j=4, p=3], f32> {sluice.name = "d2"})
    -> (!sluice.tensor<[j=4, s=3, p=3], f32> {sluice.name = "d"}) {
  %0 = sluice.map(%d0) {index_dims = ["s"], sluice.name = "m0"} : (!sluice.tensor<[j=4, p=3], f32>) -> !sluice.tensor<[j=4, s=3, p=3], f32> {
  ^bb0(%a: f32, %i: index):
    %c0 = arith.constant 0 : index
    %e = arith.cmpi eq, %i, %c0 : index
    %z = arith.constant 0.0 : f32
    %r = arith.select %e, %a, %z : f32
    sluice.yield %r : f32
  }
  %1 = sluice.map(%d2) {index_dims = ["s"], sluice.name = "m2"} : (!sluice.tensor<[j=4, p=3], f32>) -> !sluice.tensor<[j=4, s=3, p=3], f32> {
  ^bb0(%a: f32, %i: index):
    %c2 = arith.constant 2 : index
    %e = arith.cmpi eq, %i, %c2 : index
    %z = arith.constant 0.0 : f32
    %r = arith.select %e, %a, %z : f32
    sluice.yield %r : f32
  }
  %2 = sluice.map(%0, %1) {sluice.name = "sum"} : (!sluice.tensor<[j=4, s=3, p=3], f32>, !sluice.tensor<[j=4, s=3, p=3], f32>) -> !sluice.tensor<[j=4, s=3, p=3], f32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    sluice.yield %s : f32
  }
  sluice.return %2 : !sluice.tensor<[j=4, s=3, p=3], f32>
}

// -----

// Left alone: one index twice (the sum is not a stack), a term read
// elsewhere too, a term that masks with a non-zero else-value, and a sum
// with a term that is no slice gradient.
// CHECK-LABEL: sluice.graph @kept
// CHECK-NOT: rename
// CHECK-DAG: map(%d0) {index_dims = ["s"], sluice.name = "m0"}
// CHECK-DAG: map(%d1) {index_dims = ["s"], sluice.name = "m0b"}
// CHECK-DAG: map(%d1) {index_dims = ["s"], sluice.name = "m1_one"}
// CHECK-DAG: sluice.name = "sum_twice"
// CHECK-DAG: sluice.name = "sum_one"
// CHECK-DAG: sluice.name = "sum_other"
// CHECK-DAG: sluice.name = "sum_shared"
// CHECK-NOT: index_dims = ["s"], sluice.name = "sum
// VALID-LABEL: sluice.graph @kept
sluice.graph @kept(%d0: !sluice.tensor<[j=4, p=3], f32> {sluice.name = "d0"},
    %d1: !sluice.tensor<[j=4, p=3], f32> {sluice.name = "d1"},
    %e: !sluice.tensor<[j=4, s=2, p=3], f32> {sluice.name = "e"})
    -> (!sluice.tensor<[j=4, s=2, p=3], f32> {sluice.name = "twice"}, !sluice.tensor<[j=4, s=2, p=3], f32> {sluice.name = "shared"}, !sluice.tensor<[j=4, s=2, p=3], f32> {sluice.name = "m0"}, !sluice.tensor<[j=4, s=2, p=3], f32> {sluice.name = "one"}, !sluice.tensor<[j=4, s=2, p=3], f32> {sluice.name = "other"}) {
  %0 = sluice.map(%d0) {index_dims = ["s"], sluice.name = "m0"} : (!sluice.tensor<[j=4, p=3], f32>) -> !sluice.tensor<[j=4, s=2, p=3], f32> {
  ^bb0(%a: f32, %i: index):
    %c0 = arith.constant 0 : index
    %c = arith.cmpi eq, %i, %c0 : index
    %z = arith.constant 0.0 : f32
    %r = arith.select %c, %a, %z : f32
    sluice.yield %r : f32
  }
  %1 = sluice.map(%d1) {index_dims = ["s"], sluice.name = "m0b"} : (!sluice.tensor<[j=4, p=3], f32>) -> !sluice.tensor<[j=4, s=2, p=3], f32> {
  ^bb0(%a: f32, %i: index):
    %c0 = arith.constant 0 : index
    %c = arith.cmpi eq, %i, %c0 : index
    %z = arith.constant 0.0 : f32
    %r = arith.select %c, %a, %z : f32
    sluice.yield %r : f32
  }
  %2 = sluice.map(%1, %0) {sluice.name = "sum_twice"} : (!sluice.tensor<[j=4, s=2, p=3], f32>, !sluice.tensor<[j=4, s=2, p=3], f32>) -> !sluice.tensor<[j=4, s=2, p=3], f32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    sluice.yield %s : f32
  }
  %3 = sluice.map(%d1) {index_dims = ["s"], sluice.name = "m1_one"} : (!sluice.tensor<[j=4, p=3], f32>) -> !sluice.tensor<[j=4, s=2, p=3], f32> {
  ^bb0(%a: f32, %i: index):
    %c1 = arith.constant 1 : index
    %c = arith.cmpi eq, %i, %c1 : index
    %o = arith.constant 1.0 : f32
    %r = arith.select %c, %a, %o : f32
    sluice.yield %r : f32
  }
  %4 = sluice.map(%3, %e) {sluice.name = "sum_one"} : (!sluice.tensor<[j=4, s=2, p=3], f32>, !sluice.tensor<[j=4, s=2, p=3], f32>) -> !sluice.tensor<[j=4, s=2, p=3], f32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    sluice.yield %s : f32
  }
  %5 = sluice.map(%0, %e) {sluice.name = "sum_other"} : (!sluice.tensor<[j=4, s=2, p=3], f32>, !sluice.tensor<[j=4, s=2, p=3], f32>) -> !sluice.tensor<[j=4, s=2, p=3], f32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    sluice.yield %s : f32
  }
  %6 = sluice.map(%0, %3) {sluice.name = "sum_shared"} : (!sluice.tensor<[j=4, s=2, p=3], f32>, !sluice.tensor<[j=4, s=2, p=3], f32>) -> !sluice.tensor<[j=4, s=2, p=3], f32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    sluice.yield %s : f32
  }
  sluice.return %2, %6, %0, %4, %5 : !sluice.tensor<[j=4, s=2, p=3], f32>, !sluice.tensor<[j=4, s=2, p=3], f32>, !sluice.tensor<[j=4, s=2, p=3], f32>, !sluice.tensor<[j=4, s=2, p=3], f32>, !sluice.tensor<[j=4, s=2, p=3], f32>
}
