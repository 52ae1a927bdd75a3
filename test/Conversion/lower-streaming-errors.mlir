// The emitters' errors on streaming kernels the runtime kernels cannot run
// (lib/Codegen/Emit/StreamingKernel.cpp). The fusion pass's rule never
// builds these (docs/Fusion.md, "Legality"); a hand-written module can.
// RUN: sluice-opt %s -split-input-file --sluice-lower-to-exec -verify-diagnostics
// RUN: sluice-opt %s -split-input-file '--sluice-lower-to-exec=target=cpp' -verify-diagnostics

// q and k contract two dims (x, d) but k lays them out as (d, x): no single
// stride walks them in q's order.
sluice.graph @swapped_split_head(%a: !sluice.tensor<[n=2, r=3, x=2, d=4], f32> {sluice.name = "a"},
                                 %m: !sluice.tensor<[n=2, s=5, d=4, x=2], f32> {sluice.name = "m"},
                                 %w: !sluice.tensor<[n=2, s=5, e=6], f32> {sluice.name = "w"})
    -> (!sluice.tensor<[n=2, r=3, e=6], f32> {sluice.name = "out"}) {
  // expected-error @below {{'sluice.kernel' op is a streaming kernel whose operand #1 of type '!sluice.tensor<[n=2, s=5, d=4, x=2], f32>' does not lay out its dims (x, d) one after the other in this order; the runtime kernels take them as one dim}}
  %0 = sluice.kernel(%a, %m, %w) {kind = #sluice<kernel_kind streaming>, members = ["score", "weights.reduce", "weights.map", "weights.reduce", "weights", "mix"], sluice.name = "k0", streaming = #sluice.streaming<direction = forward, rows = "r", cols = "s", scale = 5.000000e-01 : f64, causal = false, dropout = 0.000000e+00 : f64, stream = 0>} : (!sluice.tensor<[n=2, r=3, x=2, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4, x=2], f32>, !sluice.tensor<[n=2, s=5, e=6], f32>) -> !sluice.tensor<[n=2, r=3, e=6], f32> {
  ^bb0(%arg0: !sluice.tensor<[n=2, r=3, x=2, d=4], f32>, %arg1: !sluice.tensor<[n=2, s=5, d=4, x=2], f32>, %arg2: !sluice.tensor<[n=2, s=5, e=6], f32>):
    %1 = sluice.contract %arg0, %arg1 {scale = 5.000000e-01 : f64, sluice.name = "score"} : (!sluice.tensor<[n=2, r=3, x=2, d=4], f32>, !sluice.tensor<[n=2, s=5, d=4, x=2], f32>) -> !sluice.tensor<[n=2, r=3, s=5], f32>
    %2 = sluice.reduce max %1 over ["s"] : !sluice.tensor<[n=2, r=3, s=5], f32> -> !sluice.tensor<[n=2, r=3], f32>
    %3 = sluice.map(%1, %2) : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, r=3], f32>) -> !sluice.tensor<[n=2, r=3, s=5], f32> {
    ^bb0(%arg3: f32, %arg4: f32):
      %7 = arith.subf %arg3, %arg4 : f32
      %8 = math.exp %7 : f32
      sluice.yield %8 : f32
    }
    %4 = sluice.reduce sum %3 over ["s"] : !sluice.tensor<[n=2, r=3, s=5], f32> -> !sluice.tensor<[n=2, r=3], f32>
    %5 = sluice.map(%3, %4) {sluice.name = "weights"} : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, r=3], f32>) -> !sluice.tensor<[n=2, r=3, s=5], f32> {
    ^bb0(%arg3: f32, %arg4: f32):
      %7 = arith.divf %arg3, %arg4 : f32
      sluice.yield %7 : f32
    }
    %6 = sluice.contract %5, %arg2 {sluice.name = "mix"} : (!sluice.tensor<[n=2, r=3, s=5], f32>, !sluice.tensor<[n=2, s=5, e=6], f32>) -> !sluice.tensor<[n=2, r=3, e=6], f32>
    sluice.kernel_yield %6 : !sluice.tensor<[n=2, r=3, e=6], f32>
  }
  sluice.return %0 : !sluice.tensor<[n=2, r=3, e=6], f32>
}
