// A kernel written by hand whose accumulator is a graph argument, which the
// module may not overwrite: it is copied into the result first, then the
// GEMM adds to it (beta = 1).
// RUN: sluice-opt %s --sluice-lower-to-exec | FileCheck %s
// CHECK-LABEL: sluice_exec.entry @sluice_from_argument_forward
// CHECK-DAG: %[[ACC:.*]] = sluice_exec.arg "acc"
// CHECK-DAG: %[[Y:.*]] = sluice_exec.arg "y"
// CHECK: sluice_exec.copy %[[ACC]] -> %[[Y]] bytes 32
// CHECK-NEXT: sluice_exec.gemm %{{.*}} * %{{.*}} -> %[[Y]] {{{.*}}beta = 1.000000e+00 : f64,
sluice.graph @from_argument(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"}, %w: !sluice.tensor<[u=2, i=8], f32> {sluice.name = "w"}, %acc: !sluice.tensor<[j=4, u=2], f32> {sluice.name = "acc"})
    -> (!sluice.tensor<[j=4, u=2], f32> {sluice.name = "y"}) {
  %k = sluice.kernel (%x, %w, %acc) {kind = #sluice<kernel_kind gemm>, epilogue = #sluice<epilogue accumulate>, sluice.name = "k0"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=2, i=8], f32>, !sluice.tensor<[j=4, u=2], f32>) -> !sluice.tensor<[j=4, u=2], f32> {
  ^bb0(%a: !sluice.tensor<[j=4, i=8], f32>, %b: !sluice.tensor<[u=2, i=8], f32>, %s: !sluice.tensor<[j=4, u=2], f32>):
    %c = sluice.contract %a, %b : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=2, i=8], f32>) -> !sluice.tensor<[j=4, u=2], f32>
    %m = sluice.map (%s, %c) : (!sluice.tensor<[j=4, u=2], f32>, !sluice.tensor<[j=4, u=2], f32>) -> !sluice.tensor<[j=4, u=2], f32> {
    ^bb0(%l: f32, %r: f32):
      %v = arith.addf %l, %r : f32
      sluice.yield %v : f32
    }
    sluice.kernel_yield %m : !sluice.tensor<[j=4, u=2], f32>
  }
  sluice.return %k : !sluice.tensor<[j=4, u=2], f32>
}
