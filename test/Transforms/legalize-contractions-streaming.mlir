// --sluice-legalize-contractions=streaming=true leaves alone the two
// contractions of a chain the streaming rule of --sluice-fuse takes (its
// kernel reads and writes through strides, in any layout), predicted here
// from the composites: contract, causal_mask, softmax over the dim only
// the second operand brings, dropout, contract over that dim
// (dialects/sluice/Analysis/StreamedContractions.h). The dims are not
// called anything attention-like: the chain is found by its algebra.
// RUN: sluice-opt %s --sluice-legalize-contractions=streaming=true | FileCheck %s --check-prefix=STREAM
// RUN: sluice-opt %s --sluice-legalize-contractions | FileCheck %s --check-prefix=GEMM

// Neither contraction maps to a GEMM as written (the batch (n, g) is split
// by r in q and o, by c in k and v). Streamed: untouched. Without the
// option: relayouts.
// STREAM-LABEL: sluice.graph @chain
// STREAM-NOT: relayout
// STREAM: return
// GEMM-LABEL: sluice.graph @chain
// GEMM: relayout %{{.*}} {sluice.name = "sc.relayout_lhs"
// GEMM: relayout %{{.*}} {sluice.name = "pv.relayout_result"
sluice.graph @chain(%q: !sluice.tensor<[n=2, r=4, g=2, e=8], f32> {sluice.name = "q"},
                    %k: !sluice.tensor<[n=2, c=4, g=2, e=8], f32> {sluice.name = "k"},
                    %v: !sluice.tensor<[n=2, c=4, g=2, f=8], f32> {sluice.name = "v"})
    -> (!sluice.tensor<[n=2, r=4, g=2, f=8], f32> {sluice.name = "o"}) {
  %s = sluice.contract %q, %k {sluice.name = "sc", scale = 0.5 : f64}
      : (!sluice.tensor<[n=2, r=4, g=2, e=8], f32>, !sluice.tensor<[n=2, c=4, g=2, e=8], f32>)
      -> !sluice.tensor<[n=2, g=2, r=4, c=4], f32>
  %m = sluice.causal_mask %s query "r" key "c" : !sluice.tensor<[n=2, g=2, r=4, c=4], f32>
  %p = sluice.softmax %m over "c" {sluice.name = "sm"} : !sluice.tensor<[n=2, g=2, r=4, c=4], f32>
  %d, %mask = sluice.dropout %p {sluice.name = "drop", probability = 0.1 : f64, stream = 0 : i64}
      : !sluice.tensor<[n=2, g=2, r=4, c=4], f32> -> !sluice.tensor<[n=2, g=2, r=4, c=4], f32>, !sluice.tensor<[n=2, g=2, r=4, c=4], f32>
  %o = sluice.contract %d, %v {sluice.name = "pv"}
      : (!sluice.tensor<[n=2, g=2, r=4, c=4], f32>, !sluice.tensor<[n=2, c=4, g=2, f=8], f32>)
      -> !sluice.tensor<[n=2, r=4, g=2, f=8], f32>
  sluice.return %o : !sluice.tensor<[n=2, r=4, g=2, f=8], f32>
}

// The runtime kernels take a contracted dim of at most 128 elements: with
// 256 the rule will not take the chain, so both contractions get GEMM
// layouts either way.
// STREAM-LABEL: sluice.graph @too_wide
// STREAM: relayout %{{.*}} {sluice.name = "sc.relayout_lhs"
// STREAM: relayout %{{.*}} {sluice.name = "pv.relayout_result"
sluice.graph @too_wide(%q: !sluice.tensor<[n=2, r=4, g=2, e=256], f32> {sluice.name = "q"},
                       %k: !sluice.tensor<[n=2, c=4, g=2, e=256], f32> {sluice.name = "k"},
                       %v: !sluice.tensor<[n=2, c=4, g=2, f=8], f32> {sluice.name = "v"})
    -> (!sluice.tensor<[n=2, r=4, g=2, f=8], f32> {sluice.name = "o"}) {
  %s = sluice.contract %q, %k {sluice.name = "sc"}
      : (!sluice.tensor<[n=2, r=4, g=2, e=256], f32>, !sluice.tensor<[n=2, c=4, g=2, e=256], f32>)
      -> !sluice.tensor<[n=2, g=2, r=4, c=4], f32>
  %p = sluice.softmax %s over "c" {sluice.name = "sm"} : !sluice.tensor<[n=2, g=2, r=4, c=4], f32>
  %o = sluice.contract %p, %v {sluice.name = "pv"}
      : (!sluice.tensor<[n=2, g=2, r=4, c=4], f32>, !sluice.tensor<[n=2, c=4, g=2, f=8], f32>)
      -> !sluice.tensor<[n=2, r=4, g=2, f=8], f32>
  sluice.return %o : !sluice.tensor<[n=2, r=4, g=2, f=8], f32>
}

// The softmax's result is also a graph result: the rule would have to
// write the scores, so it does not take the chain.
// STREAM-LABEL: sluice.graph @probabilities_used
// STREAM: relayout %{{.*}} {sluice.name = "sc.relayout_lhs"
sluice.graph @probabilities_used(%q: !sluice.tensor<[n=2, r=4, g=2, e=8], f32> {sluice.name = "q"},
                                 %k: !sluice.tensor<[n=2, c=4, g=2, e=8], f32> {sluice.name = "k"},
                                 %v: !sluice.tensor<[n=2, c=4, g=2, f=8], f32> {sluice.name = "v"})
    -> (!sluice.tensor<[n=2, r=4, g=2, f=8], f32> {sluice.name = "o"},
        !sluice.tensor<[n=2, g=2, r=4, c=4], f32> {sluice.name = "p"}) {
  %s = sluice.contract %q, %k {sluice.name = "sc"}
      : (!sluice.tensor<[n=2, r=4, g=2, e=8], f32>, !sluice.tensor<[n=2, c=4, g=2, e=8], f32>)
      -> !sluice.tensor<[n=2, g=2, r=4, c=4], f32>
  %p = sluice.softmax %s over "c" {sluice.name = "sm"} : !sluice.tensor<[n=2, g=2, r=4, c=4], f32>
  %o = sluice.contract %p, %v {sluice.name = "pv"}
      : (!sluice.tensor<[n=2, g=2, r=4, c=4], f32>, !sluice.tensor<[n=2, c=4, g=2, f=8], f32>)
      -> !sluice.tensor<[n=2, r=4, g=2, f=8], f32>
  sluice.return %o, %p : !sluice.tensor<[n=2, r=4, g=2, f=8], f32>, !sluice.tensor<[n=2, g=2, r=4, c=4], f32>
}
