// A contraction stays a library call; cuBLASLt applies the bias and the
// tanh-gelu as its epilogue.
// NOFOLD-LABEL: sluice.graph @ffn_gelu_tanh
// NOFOLD: %[[G:.*]] = kernel(%x, %w) {kind = #sluice<kernel_kind gemm>, members = ["fc"], sluice.name = "k0"}
// NOFOLD: kernel(%[[G]], %b) {members = ["fc_bias", "act"], sluice.name = "k1"}
sluice.graph @ffn_gelu_tanh(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                  %w: !sluice.tensor<[u=16, i=8], f32> {sluice.name = "w"},
                  %b: !sluice.tensor<[u=16], f32> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, u=16], f32> {sluice.name = "y"}) {
  %h = sluice.contract %x, %w {sluice.name = "fc"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=16, i=8], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %hb = sluice.bias_add %h, %b {sluice.name = "fc_bias"} : (!sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[u=16], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %a = sluice.gelu_tanh %hb {sluice.name = "act"} : !sluice.tensor<[j=4, u=16], f32>
  sluice.return %a : !sluice.tensor<[j=4, u=16], f32>
}
