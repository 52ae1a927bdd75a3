// RUN: sluice-opt %s -split-input-file --sluice-decompose --sluice-fuse | FileCheck %s
// RUN: sluice-opt %s -split-input-file --sluice-decompose --sluice-fuse=fold-epilogues=false | FileCheck %s --check-prefix=NOFOLD

// A training forward saves the pre-activation: the biased product is read
// by the tanh gelu and returned. cuBLASLt's GELU_AUX_BIAS writes both, so
// the gelu folds and the kernel yields the pre-activation as its aux result.
// CHECK-LABEL: sluice.graph @ffn_gelu_tanh_saved
// CHECK: %[[K:.*]]:2 = kernel(%x, %w, %b) {epilogue = #sluice<epilogue bias_gelu_aux>, kind = #sluice<kernel_kind gemm>, members = ["fc", "fc_bias", "act"], sluice.name = "k0"}
// CHECK: %[[P:.*]] = sluice.contract %arg0, %arg1
// CHECK: %[[H:.*]] = sluice.map(%[[P]], %arg2)
// CHECK: %[[G:.*]] = sluice.map(%[[H]])
// CHECK: kernel_yield %[[H]], %[[G]]
// CHECK-NOT: kernel(
// CHECK: return %[[K]]#1, %[[K]]#0
// NOFOLD-LABEL: sluice.graph @ffn_gelu_tanh_saved
// NOFOLD: kernel(%x, %w) {kind = #sluice<kernel_kind gemm>, members = ["fc"], sluice.name = "k0"}
// NOFOLD-NOT: epilogue
sluice.graph @ffn_gelu_tanh_saved(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                  %w: !sluice.tensor<[u=16, i=8], f32> {sluice.name = "w"},
                  %b: !sluice.tensor<[u=16], f32> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, u=16], f32> {sluice.name = "y"},
        !sluice.tensor<[j=4, u=16], f32> {sluice.name = "pre"}) {
  %h = sluice.contract %x, %w {sluice.name = "fc"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=16, i=8], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %hb = sluice.bias_add %h, %b {sluice.name = "fc_bias"} : (!sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[u=16], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %a = sluice.gelu_tanh %hb {sluice.name = "act"} : !sluice.tensor<[j=4, u=16], f32>
  sluice.return %a, %hb : !sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[j=4, u=16], f32>
}

// -----

// BERT's erf gelu is not cuBLASLt's GELU: with the pre-activation saved it
// stays a kernel of its own, as it does in inference.
// CHECK-LABEL: sluice.graph @ffn_gelu_erf_saved
// CHECK: %[[G:.*]] = kernel(%x, %w, %b) {epilogue = #sluice<epilogue bias>, kind = #sluice<kernel_kind gemm>, members = ["fc", "fc_bias"], sluice.name = "k0"}
// CHECK: %[[A:.*]] = kernel(%[[G]]) {members = ["act"], sluice.name = "k1"}
// CHECK: return %[[A]], %[[G]]
sluice.graph @ffn_gelu_erf_saved(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                  %w: !sluice.tensor<[u=16, i=8], f32> {sluice.name = "w"},
                  %b: !sluice.tensor<[u=16], f32> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, u=16], f32> {sluice.name = "y"},
        !sluice.tensor<[j=4, u=16], f32> {sluice.name = "pre"}) {
  %h = sluice.contract %x, %w {sluice.name = "fc"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=16, i=8], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %hb = sluice.bias_add %h, %b {sluice.name = "fc_bias"} : (!sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[u=16], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %a = sluice.gelu %hb {sluice.name = "act"} : !sluice.tensor<[j=4, u=16], f32>
  sluice.return %a, %hb : !sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[j=4, u=16], f32>
}

// -----

// With an activation dropout the gelu shares a kernel with the dropout
// (reading the pre-activation once, writing only the dropped activation):
// folding it would write the gelu as well, so it stays.
// CHECK-LABEL: sluice.graph @ffn_gelu_tanh_dropout_saved
// CHECK: %[[G:.*]] = kernel(%x, %w, %b) {epilogue = #sluice<epilogue bias>, kind = #sluice<kernel_kind gemm>, members = ["fc", "fc_bias"], sluice.name = "k0"}
// CHECK: kernel(%[[G]]) {members = ["drop.random_mask", "act", "drop"], sluice.name = "k1"}
// CHECK-NOT: bias_gelu_aux
sluice.graph @ffn_gelu_tanh_dropout_saved(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                  %w: !sluice.tensor<[u=16, i=8], f32> {sluice.name = "w"},
                  %b: !sluice.tensor<[u=16], f32> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, u=16], f32> {sluice.name = "y"},
        !sluice.tensor<[j=4, u=16], f32> {sluice.name = "pre"}) {
  %h = sluice.contract %x, %w {sluice.name = "fc"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=16, i=8], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %hb = sluice.bias_add %h, %b {sluice.name = "fc_bias"} : (!sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[u=16], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %a = sluice.gelu_tanh %hb {sluice.name = "act"} : !sluice.tensor<[j=4, u=16], f32>
  %d, %m = sluice.dropout %a {probability = 0.1 : f64, stream = 1 : i64, sluice.name = "drop"} : !sluice.tensor<[j=4, u=16], f32> -> !sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[j=4, u=16], f32>
  sluice.return %d, %hb : !sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[j=4, u=16], f32>
}

// -----

// Only the aux variant may write the product twice: a saved product without
// a bias (relu, or the gelu alone) keeps its activation in a kernel.
// CHECK-LABEL: sluice.graph @relu_saved
// CHECK: %[[G:.*]] = kernel(%x, %w, %b) {epilogue = #sluice<epilogue bias>, kind = #sluice<kernel_kind gemm>, members = ["fc", "fc_bias"], sluice.name = "k0"}
// CHECK: kernel(%[[G]]) {members = ["act"], sluice.name = "k1"}
sluice.graph @relu_saved(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                  %w: !sluice.tensor<[u=16, i=8], f32> {sluice.name = "w"},
                  %b: !sluice.tensor<[u=16], f32> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, u=16], f32> {sluice.name = "y"},
        !sluice.tensor<[j=4, u=16], f32> {sluice.name = "pre"}) {
  %h = sluice.contract %x, %w {sluice.name = "fc"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=16, i=8], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %hb = sluice.bias_add %h, %b {sluice.name = "fc_bias"} : (!sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[u=16], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %a = sluice.relu %hb {sluice.name = "act"} : !sluice.tensor<[j=4, u=16], f32>
  sluice.return %a, %hb : !sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[j=4, u=16], f32>
}
