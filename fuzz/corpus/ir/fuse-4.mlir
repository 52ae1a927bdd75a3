// A bias gradient, the sum of the weight gradient's operand over the
// contracted dimension, folds into the GEMM (CUBLASLT_EPILOGUE_BGRADB).
// NOFOLD-LABEL: sluice.graph @wgrad
// NOFOLD-COUNT-2: kernel(
sluice.graph @wgrad(%dy: !sluice.tensor<[j=4, u=16], f32> {sluice.name = "dy"},
                    %x: !sluice.tensor<[j=4, i=8], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[u=16, i=8], f32> {sluice.name = "d_w"}, !sluice.tensor<[u=16], f32> {sluice.name = "d_b"}) {
  %dw = sluice.contract %dy, %x {sluice.name = "fc.grad_rhs"} : (!sluice.tensor<[j=4, u=16], f32>, !sluice.tensor<[j=4, i=8], f32>) -> !sluice.tensor<[u=16, i=8], f32>
  %db = sluice.reduce sum %dy over ["j"] {sluice.name = "fc_bias.grad"} : !sluice.tensor<[j=4, u=16], f32> -> !sluice.tensor<[u=16], f32>
  sluice.return %dw, %db : !sluice.tensor<[u=16, i=8], f32>, !sluice.tensor<[u=16], f32>
}
