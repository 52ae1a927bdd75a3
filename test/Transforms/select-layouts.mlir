// --sluice-select-layouts on the attention core: the projections write q and
// k as [b, h, p, j] / [b, h, p, k] (a GEMM per b with the weight shared), so
// qk reads them without relayouts; --sluice-legalize-contractions then has
// nothing to insert. check-exhaustive enumerates all 24^3 assignments of the
// three layout classes (q, k, and the scores with the softmax) and fails
// unless the solver's minimum equals theirs.
// RUN: sluice-opt %s --mlir-print-op-on-diagnostic=false --pass-pipeline='builtin.module(sluice.graph(sluice-select-layouts{check-exhaustive=1 remark=1}),sluice.graph(sluice-legalize-contractions))' 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.err
// Off: the builder's layouts, and legalization relayouts q and k.
// RUN: sluice-opt %s --pass-pipeline='builtin.module(sluice.graph(sluice-legalize-contractions))' | FileCheck %s --check-prefix=FIXED

// REMARK: remark: layout selection on a100: 3 classes, 5 terms, 2 tensors changed

// CHECK-LABEL: sluice.graph @attn
// CHECK-NOT: relayout
// CHECK: contract %{{.*}}, %{{.*}} {sluice.name = "q_proj"} : {{.*}} -> !sluice.tensor<[b=2, h=2, p=8, j=8], f16>
// CHECK: contract %{{.*}}, %{{.*}} {sluice.name = "k_proj"} : {{.*}} -> !sluice.tensor<[b=2, h=2, p=8, k=8], f16>
// CHECK: contract {{.*}}sluice.name = "qk"{{.*}} -> !sluice.tensor<[b=2, h=2, j=8, k=8], f16>
// CHECK: softmax {{.*}} : !sluice.tensor<[b=2, h=2, j=8, k=8], f16>
// CHECK-NOT: relayout

// FIXED-LABEL: sluice.graph @attn
// FIXED: relayout {{.*}}"qk.relayout_lhs"
// FIXED: relayout {{.*}}"qk.relayout_rhs"

module attributes {sluice.target = "sm_80"} {
  sluice.graph @attn(%x: !sluice.tensor<[b=2, j=8, i=16], f16> {sluice.name = "x"}, %wq: !sluice.tensor<[h=2, p=8, i=16], f16> {sluice.name = "wq"}, %wk: !sluice.tensor<[h=2, p=8, i=16], f16> {sluice.name = "wk"}, %v: !sluice.tensor<[b=2, h=2, k=8, p=8], f16> {sluice.name = "v"}) -> (!sluice.tensor<[b=2, h=2, j=8, p=8], f16> {sluice.name = "o"}) {
    %q = contract %x, %wq {sluice.name = "q_proj"} : (!sluice.tensor<[b=2, j=8, i=16], f16>, !sluice.tensor<[h=2, p=8, i=16], f16>) -> !sluice.tensor<[b=2, j=8, h=2, p=8], f16>
    %xk = rename %x {sluice.name = "x_keys"} : !sluice.tensor<[b=2, j=8, i=16], f16> -> !sluice.tensor<[b=2, k=8, i=16], f16>
    %k = contract %xk, %wk {sluice.name = "k_proj"} : (!sluice.tensor<[b=2, k=8, i=16], f16>, !sluice.tensor<[h=2, p=8, i=16], f16>) -> !sluice.tensor<[b=2, k=8, h=2, p=8], f16>
    %s = contract %q, %k {scale = 0.125 : f64, sluice.name = "qk"} : (!sluice.tensor<[b=2, j=8, h=2, p=8], f16>, !sluice.tensor<[b=2, k=8, h=2, p=8], f16>) -> !sluice.tensor<[b=2, h=2, j=8, k=8], f16>
    %a = softmax %s over "k" {sluice.name = "softmax"} : !sluice.tensor<[b=2, h=2, j=8, k=8], f16>
    %o = contract %a, %v {sluice.name = "av"} : (!sluice.tensor<[b=2, h=2, j=8, k=8], f16>, !sluice.tensor<[b=2, h=2, k=8, p=8], f16>) -> !sluice.tensor<[b=2, h=2, j=8, p=8], f16>
    return %o : !sluice.tensor<[b=2, h=2, j=8, p=8], f16>
  }
}
