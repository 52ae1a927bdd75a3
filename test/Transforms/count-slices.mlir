// The accounting of a kernel that only slices a stacked tensor (the
// streaming kernels reading Q, K and V of one stacked projection,
// docs/Layout.md "Stacked Q/K/V contractions"): it reads the slices it
// takes, each once, through any renames of the stacked tensor; read any
// other way, the whole tensor.
// RUN: sluice-opt %s --sluice-count --split-input-file | FileCheck %s

// Two of three slices (indices 1 and 2, K and V through one rename each):
// 2/3 of the 3 x 4 x 8 x 4 bytes = 256 bytes read, 256 written.
// CHECK-LABEL: sluice.graph @two_of_three
// CHECK: kernel
// CHECK-SAME: sluice.bytes_read = 256 : ui64, sluice.bytes_written = 256 : ui64
sluice.graph @two_of_three(%qkv: !sluice.tensor<[j=4, s=3, p=8], f32> {sluice.name = "qkv"})
    -> (!sluice.tensor<[k=4, p=8], f32> {sluice.name = "k"}, !sluice.tensor<[k=4, p=8], f32> {sluice.name = "v"}) {
  %0 = sluice.rename %qkv : !sluice.tensor<[j=4, s=3, p=8], f32> -> !sluice.tensor<[k=4, s=3, p=8], f32>
  %1 = sluice.rename %qkv : !sluice.tensor<[j=4, s=3, p=8], f32> -> !sluice.tensor<[k=4, s=3, p=8], f32>
  %2:2 = sluice.kernel(%0, %1) : (!sluice.tensor<[k=4, s=3, p=8], f32>, !sluice.tensor<[k=4, s=3, p=8], f32>) -> (!sluice.tensor<[k=4, p=8], f32>, !sluice.tensor<[k=4, p=8], f32>) {
  ^bb0(%a: !sluice.tensor<[k=4, s=3, p=8], f32>, %b: !sluice.tensor<[k=4, s=3, p=8], f32>):
    %m1 = sluice.map(%a) {index_dims = ["s"]} : (!sluice.tensor<[k=4, s=3, p=8], f32>) -> !sluice.tensor<[k=4, s=3, p=8], f32> {
    ^bb0(%x: f32, %i: index):
      %c1 = arith.constant 1 : index
      %e = arith.cmpi eq, %i, %c1 : index
      %z = arith.constant 0.0 : f32
      %r = arith.select %e, %x, %z : f32
      sluice.yield %r : f32
    }
    %k = sluice.reduce sum %m1 over ["s"] : !sluice.tensor<[k=4, s=3, p=8], f32> -> !sluice.tensor<[k=4, p=8], f32>
    %m2 = sluice.map(%b) {index_dims = ["s"]} : (!sluice.tensor<[k=4, s=3, p=8], f32>) -> !sluice.tensor<[k=4, s=3, p=8], f32> {
    ^bb0(%x: f32, %i: index):
      %c2 = arith.constant 2 : index
      %e = arith.cmpi eq, %i, %c2 : index
      %z = arith.constant 0.0 : f32
      %r = arith.select %e, %x, %z : f32
      sluice.yield %r : f32
    }
    %v = sluice.reduce sum %m2 over ["s"] : !sluice.tensor<[k=4, s=3, p=8], f32> -> !sluice.tensor<[k=4, p=8], f32>
    sluice.kernel_yield %k, %v : !sluice.tensor<[k=4, p=8], f32>, !sluice.tensor<[k=4, p=8], f32>
  }
  sluice.return %2#0, %2#1 : !sluice.tensor<[k=4, p=8], f32>, !sluice.tensor<[k=4, p=8], f32>
}

// -----

// The same tensor also read whole (a map adding one to it): all 384 bytes.
// CHECK-LABEL: sluice.graph @also_whole
// CHECK: kernel
// CHECK-SAME: sluice.bytes_read = 384 : ui64
sluice.graph @also_whole(%qkv: !sluice.tensor<[j=4, s=3, p=8], f32> {sluice.name = "qkv"})
    -> (!sluice.tensor<[j=4, p=8], f32> {sluice.name = "q"}, !sluice.tensor<[j=4, s=3, p=8], f32> {sluice.name = "w"}) {
  %2:2 = sluice.kernel(%qkv) : (!sluice.tensor<[j=4, s=3, p=8], f32>) -> (!sluice.tensor<[j=4, p=8], f32>, !sluice.tensor<[j=4, s=3, p=8], f32>) {
  ^bb0(%a: !sluice.tensor<[j=4, s=3, p=8], f32>):
    %m = sluice.map(%a) {index_dims = ["s"]} : (!sluice.tensor<[j=4, s=3, p=8], f32>) -> !sluice.tensor<[j=4, s=3, p=8], f32> {
    ^bb0(%x: f32, %i: index):
      %c0 = arith.constant 0 : index
      %e = arith.cmpi eq, %i, %c0 : index
      %z = arith.constant 0.0 : f32
      %r = arith.select %e, %x, %z : f32
      sluice.yield %r : f32
    }
    %q = sluice.reduce sum %m over ["s"] : !sluice.tensor<[j=4, s=3, p=8], f32> -> !sluice.tensor<[j=4, p=8], f32>
    %w = sluice.map(%a) : (!sluice.tensor<[j=4, s=3, p=8], f32>) -> !sluice.tensor<[j=4, s=3, p=8], f32> {
    ^bb0(%x: f32):
      %o = arith.constant 1.0 : f32
      %r = arith.addf %x, %o : f32
      sluice.yield %r : f32
    }
    sluice.kernel_yield %q, %w : !sluice.tensor<[j=4, p=8], f32>, !sluice.tensor<[j=4, s=3, p=8], f32>
  }
  sluice.return %2#0, %2#1 : !sluice.tensor<[j=4, p=8], f32>, !sluice.tensor<[j=4, s=3, p=8], f32>
}
