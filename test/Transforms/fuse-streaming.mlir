// RUN: sluice-opt %s -split-input-file --sluice-decompose --sluice-fuse=streaming=true | FileCheck %s
// RUN: sluice-opt %s -split-input-file --sluice-decompose --sluice-fuse | FileCheck %s --check-prefix=OFF

// The streaming rule on a chain with no attention names: a contraction over
// d, a softmax over s, a contraction over s. One streaming kernel reads the
// three operands and writes the output; the [n, r, s] scores never leave it.
// CHECK-LABEL: sluice.graph @mixer
// CHECK: %[[K:.*]] = kernel(%a, %m, %w) {kind = #sluice<kernel_kind streaming>, members = ["score", "weights.reduce", "weights.map", "weights.reduce", "weights", "mix"], sluice.name = "k0", streaming = #sluice.streaming<direction = forward, rows = "r", cols = "s", scale = 5.000000e-01 : f64, causal = false, dropout = 0.000000e+00 : f64, stream = 0>}
// CHECK-SAME: -> !sluice.tensor<[n=2, r=3, e=6], f32>
// CHECK-NOT: kernel(
// CHECK: return %[[K]]
// Without the rule: two library calls and the softmax kernel between them.
// OFF-LABEL: sluice.graph @mixer
// OFF-COUNT-3: kernel(
// OFF-NOT: streaming
// OFF: return
sluice.graph @mixer(%a: !sluice.tensor<[n=2, r=3, d=4], f32> {sluice.name = "a"},
                    %m: !sluice.tensor<[n=2, s=5, d=4], f32> {sluice.name = "m"},
                    %w: !sluice.tensor<[n=2, s=5, e=6], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[n=2, r=3, e=6], f32> {sluice.name = "out"}) {
  %sc = sluice.contract %a, %m {scale = 0.5 : f64, sluice.name = "score"}
      : (!sluice.tensor<[n=2, r=3, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>)
      -> !sluice.tensor<[n=2, r=3, s=5], f32>
  %pr = sluice.softmax %sc over "s" {sluice.name = "weights"} : !sluice.tensor<[n=2, r=3, s=5], f32>
  %o = sluice.contract %pr, %w {sluice.name = "mix"}
      : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, s=5, e=6], f32>)
      -> !sluice.tensor<[n=2, r=3, e=6], f32>
  sluice.return %o : !sluice.tensor<[n=2, r=3, e=6], f32>
}

// -----

// A causal mask between the contraction and the softmax, and dropout after
// it, stay inside: the mask is regenerated in the kernel from its stream.
// CHECK-LABEL: sluice.graph @masked_mixer
// CHECK: kernel(%a, %m, %w) {kind = #sluice<kernel_kind streaming>, members = ["drop.random_mask", "score", "causal", "weights.reduce", "weights.map", "weights.reduce", "weights", "drop", "mix"], sluice.name = "k0", streaming = #sluice.streaming<direction = forward, rows = "r", cols = "s", scale = 1.000000e+00 : f64, causal = true, dropout = 2.500000e-01 : f64, stream = 7>}
// CHECK-NOT: kernel(
sluice.graph @masked_mixer(%a: !sluice.tensor<[n=2, r=5, d=4], f32> {sluice.name = "a"},
                           %m: !sluice.tensor<[n=2, s=5, d=4], f32> {sluice.name = "m"},
                           %w: !sluice.tensor<[n=2, s=5, e=6], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[n=2, r=5, e=6], f32> {sluice.name = "out"}) {
  %sc = sluice.contract %a, %m {sluice.name = "score"}
      : (!sluice.tensor<[n=2, r=5, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>)
      -> !sluice.tensor<[n=2, r=5, s=5], f32>
  %cm = sluice.causal_mask %sc query "r" key "s" {sluice.name = "causal"} : !sluice.tensor<[n=2, r=5, s=5], f32>
  %pr = sluice.softmax %cm over "s" {sluice.name = "weights"} : !sluice.tensor<[n=2, r=5, s=5], f32>
  %pd, %mask = sluice.dropout %pr {probability = 0.25 : f64, stream = 7 : i64, sluice.name = "drop"}
      : !sluice.tensor<[n=2, r=5, s=5], f32> -> !sluice.tensor<[n=2, r=5, s=5], f32>, !sluice.tensor<[n=2, r=5, s=5], f32>
  %o = sluice.contract %pd, %w {sluice.name = "mix"}
      : (!sluice.tensor<[n=2, r=5, s=5], f32>, !sluice.tensor<[n=2, s=5, e=6], f32>)
      -> !sluice.tensor<[n=2, r=5, e=6], f32>
  sluice.return %o : !sluice.tensor<[n=2, r=5, e=6], f32>
}

// -----

// Negative: the probabilities are also a result, so they must be stored;
// the rule does not apply.
// CHECK-LABEL: sluice.graph @probabilities_returned
// CHECK-NOT: streaming
// CHECK: return
sluice.graph @probabilities_returned(%a: !sluice.tensor<[n=2, r=3, d=4], f32> {sluice.name = "a"},
                                     %m: !sluice.tensor<[n=2, s=5, d=4], f32> {sluice.name = "m"},
                                     %w: !sluice.tensor<[n=2, s=5, e=6], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[n=2, r=3, e=6], f32> {sluice.name = "out"},
        !sluice.tensor<[n=2, r=3, s=5], f32> {sluice.name = "p"}) {
  %sc = sluice.contract %a, %m {sluice.name = "score"}
      : (!sluice.tensor<[n=2, r=3, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>)
      -> !sluice.tensor<[n=2, r=3, s=5], f32>
  %pr = sluice.softmax %sc over "s" {sluice.name = "weights"} : !sluice.tensor<[n=2, r=3, s=5], f32>
  %o = sluice.contract %pr, %w {sluice.name = "mix"}
      : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, s=5, e=6], f32>)
      -> !sluice.tensor<[n=2, r=3, e=6], f32>
  sluice.return %o, %pr : !sluice.tensor<[n=2, r=3, e=6], f32>, !sluice.tensor<[n=2, r=3, s=5], f32>
}

// -----

// Negative: another op reads the scores (a use of the [n, r, s] tensor
// outside the chain).
// CHECK-LABEL: sluice.graph @scores_read_twice
// CHECK-NOT: streaming
// CHECK: return
sluice.graph @scores_read_twice(%a: !sluice.tensor<[n=2, r=3, d=4], f32> {sluice.name = "a"},
                                %m: !sluice.tensor<[n=2, s=5, d=4], f32> {sluice.name = "m"},
                                %w: !sluice.tensor<[n=2, s=5, e=6], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[n=2, r=3, e=6], f32> {sluice.name = "out"},
        !sluice.tensor<[n=2, r=3], f32> {sluice.name = "top"}) {
  %sc = sluice.contract %a, %m {sluice.name = "score"}
      : (!sluice.tensor<[n=2, r=3, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>)
      -> !sluice.tensor<[n=2, r=3, s=5], f32>
  %top = sluice.reduce sum %sc over ["s"] {sluice.name = "total"}
      : !sluice.tensor<[n=2, r=3, s=5], f32> -> !sluice.tensor<[n=2, r=3], f32>
  %pr = sluice.softmax %sc over "s" {sluice.name = "weights"} : !sluice.tensor<[n=2, r=3, s=5], f32>
  %o = sluice.contract %pr, %w {sluice.name = "mix"}
      : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, s=5, e=6], f32>)
      -> !sluice.tensor<[n=2, r=3, e=6], f32>
  sluice.return %o, %top : !sluice.tensor<[n=2, r=3, e=6], f32>, !sluice.tensor<[n=2, r=3], f32>
}

// -----

// Negative: the second contraction contracts r, not the dimension the
// softmax normalized (no running statistic can stream over s).
// CHECK-LABEL: sluice.graph @wrong_dimension
// CHECK-NOT: streaming
// CHECK: return
sluice.graph @wrong_dimension(%a: !sluice.tensor<[n=2, r=3, d=4], f32> {sluice.name = "a"},
                              %m: !sluice.tensor<[n=2, s=5, d=4], f32> {sluice.name = "m"},
                              %w: !sluice.tensor<[n=2, r=3, e=6], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[n=2, s=5, e=6], f32> {sluice.name = "out"}) {
  %sc = sluice.contract %a, %m {sluice.name = "score"}
      : (!sluice.tensor<[n=2, r=3, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>)
      -> !sluice.tensor<[n=2, r=3, s=5], f32>
  %pr = sluice.softmax %sc over "s" {sluice.name = "weights"} : !sluice.tensor<[n=2, r=3, s=5], f32>
  %o = sluice.contract %pr, %w {sluice.name = "mix"}
      : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, r=3, e=6], f32>)
      -> !sluice.tensor<[n=2, s=5, e=6], f32>
  sluice.return %o : !sluice.tensor<[n=2, s=5, e=6], f32>
}

// -----

// Negative: a score map other than the causal mask (here a gelu of the
// scores): the runtime kernels apply only the scale and the causal mask.
// CHECK-LABEL: sluice.graph @other_score_map
// CHECK-NOT: streaming
// CHECK: return
sluice.graph @other_score_map(%a: !sluice.tensor<[n=2, r=3, d=4], f32> {sluice.name = "a"},
                              %m: !sluice.tensor<[n=2, s=5, d=4], f32> {sluice.name = "m"},
                              %w: !sluice.tensor<[n=2, s=5, e=6], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[n=2, r=3, e=6], f32> {sluice.name = "out"}) {
  %sc = sluice.contract %a, %m {sluice.name = "score"}
      : (!sluice.tensor<[n=2, r=3, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>)
      -> !sluice.tensor<[n=2, r=3, s=5], f32>
  %g = sluice.gelu %sc {sluice.name = "shape"} : !sluice.tensor<[n=2, r=3, s=5], f32>
  %pr = sluice.softmax %g over "s" {sluice.name = "weights"} : !sluice.tensor<[n=2, r=3, s=5], f32>
  %o = sluice.contract %pr, %w {sluice.name = "mix"}
      : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, s=5, e=6], f32>)
      -> !sluice.tensor<[n=2, r=3, e=6], f32>
  sluice.return %o : !sluice.tensor<[n=2, r=3, e=6], f32>
}

// -----

// Negative: masked probabilities not rescaled by 1 / (1 - p) (the runtime
// kernels apply dropout as keep / (1 - p)).
// CHECK-LABEL: sluice.graph @mask_without_rescale
// CHECK-NOT: streaming
// CHECK: return
sluice.graph @mask_without_rescale(%a: !sluice.tensor<[n=2, r=3, d=4], f32> {sluice.name = "a"},
                                   %m: !sluice.tensor<[n=2, s=5, d=4], f32> {sluice.name = "m"},
                                   %w: !sluice.tensor<[n=2, s=5, e=6], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[n=2, r=3, e=6], f32> {sluice.name = "out"}) {
  %sc = sluice.contract %a, %m {sluice.name = "score"}
      : (!sluice.tensor<[n=2, r=3, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4], f32>)
      -> !sluice.tensor<[n=2, r=3, s=5], f32>
  %pr = sluice.softmax %sc over "s" {sluice.name = "weights"} : !sluice.tensor<[n=2, r=3, s=5], f32>
  %mask = sluice.random_mask {probability = 2.500000e-01 : f64, stream = 3 : i64, sluice.name = "keep"} : !sluice.tensor<[n=2, r=3, s=5], f32>
  %pd = sluice.map(%pr, %mask) {sluice.name = "kept"} : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, r=3, s=5], f32>) -> !sluice.tensor<[n=2, r=3, s=5], f32> {
  ^bb0(%x: f32, %k: f32):
    %y = arith.mulf %x, %k : f32
    sluice.yield %y : f32
  }
  %o = sluice.contract %pd, %w {sluice.name = "mix"}
      : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, s=5, e=6], f32>)
      -> !sluice.tensor<[n=2, r=3, e=6], f32>
  sluice.return %o : !sluice.tensor<[n=2, r=3, e=6], f32>
}

// -----

// Negative: a head of 160 (the contracted dim d) is longer than the runtime
// kernels hold (SLUICE_STREAM_MAX_HEAD_DIM = 128).
// CHECK-LABEL: sluice.graph @long_head
// CHECK-NOT: streaming
// CHECK: return
sluice.graph @long_head(%a: !sluice.tensor<[n=2, r=3, d=160], f32> {sluice.name = "a"},
                        %m: !sluice.tensor<[n=2, s=5, d=160], f32> {sluice.name = "m"},
                        %w: !sluice.tensor<[n=2, s=5, e=6], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[n=2, r=3, e=6], f32> {sluice.name = "out"}) {
  %sc = sluice.contract %a, %m {sluice.name = "score"}
      : (!sluice.tensor<[n=2, r=3, d=160], f32>, !sluice.tensor<[n=2, s=5, d=160], f32>)
      -> !sluice.tensor<[n=2, r=3, s=5], f32>
  %pr = sluice.softmax %sc over "s" {sluice.name = "weights"} : !sluice.tensor<[n=2, r=3, s=5], f32>
  %o = sluice.contract %pr, %w {sluice.name = "mix"}
      : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, s=5, e=6], f32>)
      -> !sluice.tensor<[n=2, r=3, e=6], f32>
  sluice.return %o : !sluice.tensor<[n=2, r=3, e=6], f32>
}

// -----

// A head split in two contracted dims (a rotary embedding's [r, f]) streams:
// the emitter lays them out as one dim of 2 x 64 = 128.
// CHECK-LABEL: sluice.graph @split_head
// CHECK: kind = #sluice<kernel_kind streaming>
sluice.graph @split_head(%a: !sluice.tensor<[n=2, r=3, x=2, d=64], f32> {sluice.name = "a"},
                         %m: !sluice.tensor<[n=2, s=5, x=2, d=64], f32> {sluice.name = "m"},
                         %w: !sluice.tensor<[n=2, s=5, e=6], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[n=2, r=3, e=6], f32> {sluice.name = "out"}) {
  %sc = sluice.contract %a, %m {sluice.name = "score"}
      : (!sluice.tensor<[n=2, r=3, x=2, d=64], f32>, !sluice.tensor<[n=2, s=5, x=2, d=64], f32>)
      -> !sluice.tensor<[n=2, r=3, s=5], f32>
  %pr = sluice.softmax %sc over "s" {sluice.name = "weights"} : !sluice.tensor<[n=2, r=3, s=5], f32>
  %o = sluice.contract %pr, %w {sluice.name = "mix"}
      : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, s=5, e=6], f32>)
      -> !sluice.tensor<[n=2, r=3, e=6], f32>
  sluice.return %o : !sluice.tensor<[n=2, r=3, e=6], f32>
}
