// --sluice-schedule: the thread mapping of every fused kernel (docs/Codegen.md,
// "Schedules"), attached as sluice.schedule; gemm kernels get none.
// RUN: sluice-opt %s --sluice-schedule -split-input-file | FileCheck %s

// f16 element-wise: 8 halves (16 bytes) per thread and step along the
// contiguous i; 2*4*1024/8 = 1024 groups = 4 blocks of 256.
// CHECK-LABEL: sluice.graph @elementwise_f16
// CHECK: sluice.schedule = #sluice_exec.schedule<mode = elementwise, reduction = none, grid = 4, threads = 256, vector = 8, elements_per_thread = 8, outer = [], inner = ["b", "j", "i"]>
sluice.graph @elementwise_f16(%x: !sluice.tensor<[b=2, j=4, i=1024], f16> {sluice.name = "x"})
    -> (!sluice.tensor<[b=2, j=4, i=1024], f16> {sluice.name = "y"}) {
  %y = sluice.kernel (%x) {kind = #sluice<kernel_kind fused>, members = ["relu"]}
      : (!sluice.tensor<[b=2, j=4, i=1024], f16>) -> !sluice.tensor<[b=2, j=4, i=1024], f16> {
  ^bb0(%xa: !sluice.tensor<[b=2, j=4, i=1024], f16>):
    %r = sluice.map (%xa) : (!sluice.tensor<[b=2, j=4, i=1024], f16>) -> !sluice.tensor<[b=2, j=4, i=1024], f16> {
    ^bb0(%v: f32):
      %z = arith.constant 0.0 : f32
      %m = arith.maximumf %v, %z : f32
      sluice.yield %m : f32
    }
    sluice.kernel_yield %r : !sluice.tensor<[b=2, j=4, i=1024], f16>
  }
  sluice.return %y : !sluice.tensor<[b=2, j=4, i=1024], f16>
}

// -----

// A row sum over 1024 floats: 256 groups of 4 over 64 threads (4 groups,
// 16 floats each), combined through shared memory.
// CHECK-LABEL: sluice.graph @block_reduction
// CHECK: sluice.schedule = #sluice_exec.schedule<mode = row_block, reduction = block, grid = 8, threads = 64, vector = 4, elements_per_thread = 16, outer = ["b", "j"], inner = ["i"]>
sluice.graph @block_reduction(%x: !sluice.tensor<[b=2, j=4, i=1024], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[b=2, j=4], f32> {sluice.name = "s"}) {
  %s = sluice.kernel (%x) {kind = #sluice<kernel_kind fused>, members = ["sum"]}
      : (!sluice.tensor<[b=2, j=4, i=1024], f32>) -> !sluice.tensor<[b=2, j=4], f32> {
  ^bb0(%xa: !sluice.tensor<[b=2, j=4, i=1024], f32>):
    %r = sluice.reduce sum %xa over ["i"] : !sluice.tensor<[b=2, j=4, i=1024], f32> -> !sluice.tensor<[b=2, j=4], f32>
    sluice.kernel_yield %r : !sluice.tensor<[b=2, j=4], f32>
  }
  sluice.return %s : !sluice.tensor<[b=2, j=4], f32>
}

// -----

// A bias gradient: the reduced dims (b, j) are the outer ones of the layout,
// so the block walks them with no vector access.
// CHECK-LABEL: sluice.graph @bias_gradient
// CHECK: sluice.schedule = #sluice_exec.schedule<mode = row_block, reduction = warp, grid = 8, threads = 32, vector = 1, elements_per_thread = 1, outer = ["i"], inner = ["b", "j"]>
sluice.graph @bias_gradient(%dy: !sluice.tensor<[b=2, j=4, i=8], f32> {sluice.name = "dy"})
    -> (!sluice.tensor<[i=8], f32> {sluice.name = "db"}) {
  %db = sluice.kernel (%dy) {kind = #sluice<kernel_kind fused>, members = ["db"]}
      : (!sluice.tensor<[b=2, j=4, i=8], f32>) -> !sluice.tensor<[i=8], f32> {
  ^bb0(%d: !sluice.tensor<[b=2, j=4, i=8], f32>):
    %r = sluice.reduce sum %d over ["b", "j"] : !sluice.tensor<[b=2, j=4, i=8], f32> -> !sluice.tensor<[i=8], f32>
    sluice.kernel_yield %r : !sluice.tensor<[i=8], f32>
  }
  sluice.return %db : !sluice.tensor<[i=8], f32>
}

// -----

// No reduction, two domains: the outer dims are the ones every op shares,
// so a per-row value is computed once per block and broadcast.
// CHECK-LABEL: sluice.graph @broadcast_rows
// CHECK: sluice.schedule = #sluice_exec.schedule<mode = row_block, reduction = none, grid = 8, threads = 32, vector = 4, elements_per_thread = 4, outer = ["b", "j"], inner = ["i"]>
sluice.graph @broadcast_rows(%x: !sluice.tensor<[b=2, j=4, i=8], f32> {sluice.name = "x"},
                             %m: !sluice.tensor<[b=2, j=4], f32> {sluice.name = "m"})
    -> (!sluice.tensor<[b=2, j=4, i=8], f32> {sluice.name = "y"}) {
  %y = sluice.kernel (%x, %m) {kind = #sluice<kernel_kind fused>, members = ["scale", "apply"]}
      : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[b=2, j=4], f32>) -> !sluice.tensor<[b=2, j=4, i=8], f32> {
  ^bb0(%xa: !sluice.tensor<[b=2, j=4, i=8], f32>, %ma: !sluice.tensor<[b=2, j=4], f32>):
    %s = sluice.map (%ma) : (!sluice.tensor<[b=2, j=4], f32>) -> !sluice.tensor<[b=2, j=4], f32> {
    ^bb0(%v: f32):
      %e = math.exp %v : f32
      sluice.yield %e : f32
    }
    %r = sluice.map (%xa, %s) : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[b=2, j=4], f32>) -> !sluice.tensor<[b=2, j=4, i=8], f32> {
    ^bb0(%a: f32, %b: f32):
      %p = arith.mulf %a, %b : f32
      sluice.yield %p : f32
    }
    sluice.kernel_yield %r : !sluice.tensor<[b=2, j=4, i=8], f32>
  }
  sluice.return %y : !sluice.tensor<[b=2, j=4, i=8], f32>
}
