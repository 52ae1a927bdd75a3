// The dropout mask itself as an output, so the kit can compare the CUDA
// module's Philox draws bit for bit with the CPU module's (gpu-kit/run.sh,
// docs/GPU.md): y = dropout(x) and the mask of attention probabilities
// [b, h, j, k], stream 0, p = 0.1, 19,200 elements.
sluice.graph @dropout_masks(%x: !sluice.tensor<[b=2, h=3, j=40, k=80], f32> {sluice.name = "x"})
    -> (!sluice.tensor<[b=2, h=3, j=40, k=80], f32> {sluice.name = "y"},
        !sluice.tensor<[b=2, h=3, j=40, k=80], f32> {sluice.name = "mask"}) {
  %y, %m = sluice.dropout %x {sluice.name = "drop", probability = 0.1 : f64, stream = 0 : i64}
      : !sluice.tensor<[b=2, h=3, j=40, k=80], f32> -> !sluice.tensor<[b=2, h=3, j=40, k=80], f32>, !sluice.tensor<[b=2, h=3, j=40, k=80], f32>
  sluice.return %y, %m : !sluice.tensor<[b=2, h=3, j=40, k=80], f32>, !sluice.tensor<[b=2, h=3, j=40, k=80], f32>
}
