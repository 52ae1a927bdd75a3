// --sluice-fuse=accumulate-gemms=true: a kernel that only sums GEMM
// products becomes those GEMMs, each adding its product to the running sum
// in place (epilogue accumulate, beta = 1); docs/Fusion.md, "Accumulating
// GEMMs". The dims have no transformer names: t/s tokens (s a renamed t),
// g contracted, f features.
// RUN: sluice-opt %s -split-input-file --sluice-fuse=accumulate-gemms=true | FileCheck %s
// RUN: sluice-opt %s -split-input-file --sluice-fuse | FileCheck %s --check-prefix=OFF

// Three products summed. p1 accumulates into p0 (the earlier GEMM writes
// C as usual); p2 is read through a rename, so its sum is rebuilt in p2's
// names: the accumulator is renamed to [s, f] and the sum back to [t, f].
// CHECK-LABEL: sluice.graph @chain
// CHECK: %[[P0:.*]] = kernel(%d0, %w) {kind = #sluice<kernel_kind gemm>, members = ["p0"], sluice.name = "k0"}
// CHECK: %[[S1:.*]] = kernel(%d1, %w, %[[P0]]) {epilogue = #sluice<epilogue accumulate>, kind = #sluice<kernel_kind gemm>, members = ["p1", "s1"], sluice.name = "k1"}
// CHECK: %[[ACC:.*]] = rename %[[S1]] : !sluice.tensor<[t=6, f=8], f32> -> !sluice.tensor<[s=6, f=8], f32>
// CHECK: %[[S2:.*]] = kernel(%d2, %w, %[[ACC]]) {epilogue = #sluice<epilogue accumulate>, kind = #sluice<kernel_kind gemm>, members = ["p2", "s2"], sluice.name = "k2"}
// CHECK: sluice.contract
// CHECK-NEXT: sluice.map
// CHECK: arith.addf
// CHECK: sluice.kernel_yield {{.*}} : !sluice.tensor<[s=6, f=8], f32>
// CHECK: %[[SUM:.*]] = rename %[[S2]] : !sluice.tensor<[s=6, f=8], f32> -> !sluice.tensor<[t=6, f=8], f32>
// CHECK: return %[[SUM]]
// CHECK-NOT: kernel(
// OFF-LABEL: sluice.graph @chain
// OFF: kernel({{.*}}) {members = ["s1", "s2"], sluice.name = "k3"}
sluice.graph @chain(%d0: !sluice.tensor<[t=6, g=4], f32> {sluice.name = "d0"}, %d1: !sluice.tensor<[t=6, g=4], f32> {sluice.name = "d1"},
    %d2: !sluice.tensor<[s=6, g=4], f32> {sluice.name = "d2"}, %w: !sluice.tensor<[g=4, f=8], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[t=6, f=8], f32> {sluice.name = "sum"}) {
  %p0 = sluice.contract %d0, %w {sluice.name = "p0"} : (!sluice.tensor<[t=6, g=4], f32>, !sluice.tensor<[g=4, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32>
  %p1 = sluice.contract %d1, %w {sluice.name = "p1"} : (!sluice.tensor<[t=6, g=4], f32>, !sluice.tensor<[g=4, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32>
  %p2 = sluice.contract %d2, %w {sluice.name = "p2"} : (!sluice.tensor<[s=6, g=4], f32>, !sluice.tensor<[g=4, f=8], f32>) -> !sluice.tensor<[s=6, f=8], f32>
  %p2v = sluice.rename %p2 {sluice.name = "p2.view"} : !sluice.tensor<[s=6, f=8], f32> -> !sluice.tensor<[t=6, f=8], f32>
  %s1 = sluice.map (%p0, %p1) {sluice.name = "s1"} : (!sluice.tensor<[t=6, f=8], f32>, !sluice.tensor<[t=6, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32> {
  ^bb0(%l: f32, %r: f32):
    %v = arith.addf %l, %r : f32
    sluice.yield %v : f32
  }
  %s2 = sluice.map (%s1, %p2v) {sluice.name = "s2"} : (!sluice.tensor<[t=6, f=8], f32>, !sluice.tensor<[t=6, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32> {
  ^bb0(%l: f32, %r: f32):
    %v = arith.addf %l, %r : f32
    sluice.yield %v : f32
  }
  sluice.return %s2 : !sluice.tensor<[t=6, f=8], f32>
}

// -----

// p1 is also returned: its GEMM cannot take over the sum. The sum kernel
// stays.
// CHECK-LABEL: sluice.graph @product_read_twice
// CHECK-NOT: accumulate
// CHECK: members = ["s1", "s2"]
sluice.graph @product_read_twice(%d0: !sluice.tensor<[t=6, g=4], f32> {sluice.name = "d0"}, %d1: !sluice.tensor<[t=6, g=4], f32> {sluice.name = "d1"},
    %d2: !sluice.tensor<[s=6, g=4], f32> {sluice.name = "d2"}, %w: !sluice.tensor<[g=4, f=8], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[t=6, f=8], f32> {sluice.name = "sum"}, !sluice.tensor<[t=6, f=8], f32> {sluice.name = "p1"}) {
  %p0 = sluice.contract %d0, %w {sluice.name = "p0"} : (!sluice.tensor<[t=6, g=4], f32>, !sluice.tensor<[g=4, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32>
  %p1 = sluice.contract %d1, %w {sluice.name = "p1"} : (!sluice.tensor<[t=6, g=4], f32>, !sluice.tensor<[g=4, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32>
  %p2 = sluice.contract %d2, %w {sluice.name = "p2"} : (!sluice.tensor<[s=6, g=4], f32>, !sluice.tensor<[g=4, f=8], f32>) -> !sluice.tensor<[s=6, f=8], f32>
  %p2v = sluice.rename %p2 {sluice.name = "p2.view"} : !sluice.tensor<[s=6, f=8], f32> -> !sluice.tensor<[t=6, f=8], f32>
  %s1 = sluice.map (%p0, %p1) {sluice.name = "s1"} : (!sluice.tensor<[t=6, f=8], f32>, !sluice.tensor<[t=6, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32> {
  ^bb0(%l: f32, %r: f32):
    %v = arith.addf %l, %r : f32
    sluice.yield %v : f32
  }
  %s2 = sluice.map (%s1, %p2v) {sluice.name = "s2"} : (!sluice.tensor<[t=6, f=8], f32>, !sluice.tensor<[t=6, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32> {
  ^bb0(%l: f32, %r: f32):
    %v = arith.addf %l, %r : f32
    sluice.yield %v : f32
  }
  sluice.return %s2, %p1 : !sluice.tensor<[t=6, f=8], f32>, !sluice.tensor<[t=6, f=8], f32>
}

// -----

// p0, the first term, is returned too: the sum may not overwrite it.
// CHECK-LABEL: sluice.graph @first_term_read_later
// CHECK-NOT: accumulate
// CHECK: members = ["s1", "s2"]
sluice.graph @first_term_read_later(%d0: !sluice.tensor<[t=6, g=4], f32> {sluice.name = "d0"}, %d1: !sluice.tensor<[t=6, g=4], f32> {sluice.name = "d1"},
    %d2: !sluice.tensor<[s=6, g=4], f32> {sluice.name = "d2"}, %w: !sluice.tensor<[g=4, f=8], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[t=6, f=8], f32> {sluice.name = "sum"}, !sluice.tensor<[t=6, f=8], f32> {sluice.name = "p0"}) {
  %p0 = sluice.contract %d0, %w {sluice.name = "p0"} : (!sluice.tensor<[t=6, g=4], f32>, !sluice.tensor<[g=4, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32>
  %p1 = sluice.contract %d1, %w {sluice.name = "p1"} : (!sluice.tensor<[t=6, g=4], f32>, !sluice.tensor<[g=4, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32>
  %p2 = sluice.contract %d2, %w {sluice.name = "p2"} : (!sluice.tensor<[s=6, g=4], f32>, !sluice.tensor<[g=4, f=8], f32>) -> !sluice.tensor<[s=6, f=8], f32>
  %p2v = sluice.rename %p2 {sluice.name = "p2.view"} : !sluice.tensor<[s=6, f=8], f32> -> !sluice.tensor<[t=6, f=8], f32>
  %s1 = sluice.map (%p0, %p1) {sluice.name = "s1"} : (!sluice.tensor<[t=6, f=8], f32>, !sluice.tensor<[t=6, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32> {
  ^bb0(%l: f32, %r: f32):
    %v = arith.addf %l, %r : f32
    sluice.yield %v : f32
  }
  %s2 = sluice.map (%s1, %p2v) {sluice.name = "s2"} : (!sluice.tensor<[t=6, f=8], f32>, !sluice.tensor<[t=6, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32> {
  ^bb0(%l: f32, %r: f32):
    %v = arith.addf %l, %r : f32
    sluice.yield %v : f32
  }
  sluice.return %s2, %p0 : !sluice.tensor<[t=6, f=8], f32>, !sluice.tensor<[t=6, f=8], f32>
}

// -----

// The sum kernel also squares the sum: not only sums, so it stays.
// CHECK-LABEL: sluice.graph @not_only_sums
// CHECK-NOT: accumulate
// CHECK: members = ["s1", "s2", "sq"]
sluice.graph @not_only_sums(%d0: !sluice.tensor<[t=6, g=4], f32> {sluice.name = "d0"}, %d1: !sluice.tensor<[t=6, g=4], f32> {sluice.name = "d1"},
    %d2: !sluice.tensor<[s=6, g=4], f32> {sluice.name = "d2"}, %w: !sluice.tensor<[g=4, f=8], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[t=6, f=8], f32> {sluice.name = "sum"}) {
  %p0 = sluice.contract %d0, %w {sluice.name = "p0"} : (!sluice.tensor<[t=6, g=4], f32>, !sluice.tensor<[g=4, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32>
  %p1 = sluice.contract %d1, %w {sluice.name = "p1"} : (!sluice.tensor<[t=6, g=4], f32>, !sluice.tensor<[g=4, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32>
  %p2 = sluice.contract %d2, %w {sluice.name = "p2"} : (!sluice.tensor<[s=6, g=4], f32>, !sluice.tensor<[g=4, f=8], f32>) -> !sluice.tensor<[s=6, f=8], f32>
  %p2v = sluice.rename %p2 {sluice.name = "p2.view"} : !sluice.tensor<[s=6, f=8], f32> -> !sluice.tensor<[t=6, f=8], f32>
  %s1 = sluice.map (%p0, %p1) {sluice.name = "s1"} : (!sluice.tensor<[t=6, f=8], f32>, !sluice.tensor<[t=6, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32> {
  ^bb0(%l: f32, %r: f32):
    %v = arith.addf %l, %r : f32
    sluice.yield %v : f32
  }
  %s2 = sluice.map (%s1, %p2v) {sluice.name = "s2"} : (!sluice.tensor<[t=6, f=8], f32>, !sluice.tensor<[t=6, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32> {
  ^bb0(%l: f32, %r: f32):
    %v = arith.addf %l, %r : f32
    sluice.yield %v : f32
  }
  %sq = sluice.map (%s2) {sluice.name = "sq"} : (!sluice.tensor<[t=6, f=8], f32>) -> !sluice.tensor<[t=6, f=8], f32> {
  ^bb0(%a: f32):
    %v = arith.mulf %a, %a : f32
    sluice.yield %v : f32
  }
  sluice.return %sq : !sluice.tensor<[t=6, f=8], f32>
}

