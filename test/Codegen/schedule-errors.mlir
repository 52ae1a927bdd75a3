// --sluice-schedule rejects kernels that are not one iteration space, at the
// op that breaks it.
// RUN: sluice-opt %s --sluice-schedule -split-input-file -verify-diagnostics

sluice.graph @two_reduced_dims(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4], f32> {sluice.name = "a"}, !sluice.tensor<[i=8], f32> {sluice.name = "b"}) {
  %a, %b = sluice.kernel (%x) {kind = #sluice<kernel_kind fused>, members = ["a", "b"]}
      : (!sluice.tensor<[j=4, i=8], f32>) -> (!sluice.tensor<[j=4], f32>, !sluice.tensor<[i=8], f32>) {
  ^bb0(%xa: !sluice.tensor<[j=4, i=8], f32>):
    // expected-note @below {{first reduction here}}
    %ra = sluice.reduce sum %xa over ["i"] : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4], f32>
    // expected-error @below {{'sluice.reduce' op cannot run in one kernel with reductions over [i] and [j]: no reduction's result is read per point}}
    %rb = sluice.reduce sum %xa over ["j"] : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8], f32>
    sluice.kernel_yield %ra, %rb : !sluice.tensor<[j=4], f32>, !sluice.tensor<[i=8], f32>
  }
  sluice.return %a, %b : !sluice.tensor<[j=4], f32>, !sluice.tensor<[i=8], f32>
}

// -----

sluice.graph @third_domain(%x: !sluice.tensor<[b=2, j=4, i=8], f32> {sluice.name = "x"},
                           %v: !sluice.tensor<[j=4], f32> {sluice.name = "v"})
    -> (!sluice.tensor<[b=2, j=4], f32> {sluice.name = "s"}, !sluice.tensor<[j=4], f32> {sluice.name = "w"}) {
  %s, %w = sluice.kernel (%x, %v) {kind = #sluice<kernel_kind fused>, members = ["sum", "exp"]}
      : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[j=4], f32>) -> (!sluice.tensor<[b=2, j=4], f32>, !sluice.tensor<[j=4], f32>) {
  ^bb0(%xa: !sluice.tensor<[b=2, j=4, i=8], f32>, %va: !sluice.tensor<[j=4], f32>):
    %r = sluice.reduce sum %xa over ["i"] : !sluice.tensor<[b=2, j=4, i=8], f32> -> !sluice.tensor<[b=2, j=4], f32>
    // expected-error @below {{'sluice.map' op has domain [j], neither the kernel's iteration space [b, j, i] nor its outer dims [b, j]}}
    %e = sluice.map (%va) : (!sluice.tensor<[j=4], f32>) -> !sluice.tensor<[j=4], f32> {
    ^bb0(%a: f32):
      %x1 = math.exp %a : f32
      sluice.yield %x1 : f32
    }
    sluice.kernel_yield %r, %e : !sluice.tensor<[b=2, j=4], f32>, !sluice.tensor<[j=4], f32>
  }
  sluice.return %s, %w : !sluice.tensor<[b=2, j=4], f32>, !sluice.tensor<[j=4], f32>
}

// -----

// Row and column reductions whose sets do not split the kernel's dims.
sluice.graph @overlapping_sets(%x: !sluice.tensor<[b=2, j=4, i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[b=2, j=4], f32> {sluice.name = "a"}, !sluice.tensor<[b=2, i=8], f32> {sluice.name = "c"}) {
  %a, %c = sluice.kernel (%x) {kind = #sluice<kernel_kind fused>, members = ["a", "n", "c"]}
      : (!sluice.tensor<[b=2, j=4, i=8], f32>) -> (!sluice.tensor<[b=2, j=4], f32>, !sluice.tensor<[b=2, i=8], f32>) {
  ^bb0(%xa: !sluice.tensor<[b=2, j=4, i=8], f32>):
    // expected-note @below {{first reduction here}}
    %ra = sluice.reduce sum %xa over ["i"] : !sluice.tensor<[b=2, j=4, i=8], f32> -> !sluice.tensor<[b=2, j=4], f32>
    %n = sluice.map (%xa, %ra) : (!sluice.tensor<[b=2, j=4, i=8], f32>, !sluice.tensor<[b=2, j=4], f32>) -> !sluice.tensor<[b=2, j=4, i=8], f32> {
    ^bb0(%p: f32, %q: f32):
      %d = arith.subf %p, %q : f32
      sluice.yield %d : f32
    }
    // expected-error @below {{'sluice.reduce' op cannot run in one kernel with reductions over [i] and [j]: row and column reductions must split the kernel's dims between them}}
    %rc = sluice.reduce sum %n over ["j"] : !sluice.tensor<[b=2, j=4, i=8], f32> -> !sluice.tensor<[b=2, i=8], f32>
    sluice.kernel_yield %ra, %rc : !sluice.tensor<[b=2, j=4], f32>, !sluice.tensor<[b=2, i=8], f32>
  }
  sluice.return %a, %c : !sluice.tensor<[b=2, j=4], f32>, !sluice.tensor<[b=2, i=8], f32>
}

// -----

// A value per point computed from a column sum: the column sums are
// complete only after every row.
sluice.graph @point_reads_column(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[j=4, i=8], f32> {sluice.name = "m"}) {
  %m = sluice.kernel (%x) {kind = #sluice<kernel_kind fused>, members = ["r", "n", "c", "m"]}
      : (!sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
  ^bb0(%xa: !sluice.tensor<[j=4, i=8], f32>):
    // expected-note @below {{first reduction here}}
    %r = sluice.reduce sum %xa over ["i"] : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[j=4], f32>
    %n = sluice.map (%xa, %r) : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[j=4], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
    ^bb0(%p: f32, %q: f32):
      %d = arith.subf %p, %q : f32
      sluice.yield %d : f32
    }
    // expected-error @below {{'sluice.reduce' op cannot run in one kernel with reductions over [i] and [j]: both sets' results are read per point}}
    %c = sluice.reduce sum %n over ["j"] : !sluice.tensor<[j=4, i=8], f32> -> !sluice.tensor<[i=8], f32>
    %mm = sluice.map (%xa, %c) : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[i=8], f32>) -> !sluice.tensor<[j=4, i=8], f32> {
    ^bb0(%p: f32, %q: f32):
      %d = arith.mulf %p, %q : f32
      sluice.yield %d : f32
    }
    sluice.kernel_yield %mm : !sluice.tensor<[j=4, i=8], f32>
  }
  sluice.return %m : !sluice.tensor<[j=4, i=8], f32>
}
