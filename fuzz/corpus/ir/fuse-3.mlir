// cuBLASLt's GELU epilogue is the tanh form: the erf gelu runs in a kernel.
sluice.graph @ffn_gelu_erf(%x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"},
                  %w: !sluice.tensor<[u=16, i=8], f32> {sluice.name = "w"},
                  %b: !sluice.tensor<[u=16], f32> {sluice.name = "b"})
    -> (!sluice.tensor<[j=4, u=16], f32> {sluice.name = "y"}) {
  %h = sluice.contract %x, %w {sluice.name = "fc"} : (!sluice.tensor<[j=4, i=8], f32>, !sluice.tensor<[u=16, i=8], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %hb = sluice.bias_add %h, %b {sluice.name = "fc_bias"} : (!sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[u=16], f32>) -> !sluice.tensor<[j=4, u=16], f32>
  %a = sluice.gelu %hb {sluice.name = "act"} : !sluice.tensor<[j=4, u=16], f32>
  sluice.return %a : !sluice.tensor<[j=4, u=16], f32>
}
