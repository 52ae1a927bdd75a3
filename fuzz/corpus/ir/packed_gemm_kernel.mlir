// A gemm kernel whose result is marked bit-packed: the emitter refuses it
// (only dropout masks of fused kernels are packed), so --compile must fail
// cleanly.
sluice.graph @packed_gemm(%a: !sluice.tensor<[m=4, k=8], f32> {sluice.name = "a"},
                          %b: !sluice.tensor<[n=4, k=8], f32> {sluice.name = "b"})
    -> (!sluice.tensor<[m=4, n=4], f32> {sluice.name = "c"}) {
  %c = sluice.kernel (%a, %b) {kind = #sluice<kernel_kind gemm>, members = ["mm"], packed = array<i64: 0>, sluice.name = "mm"}
      : (!sluice.tensor<[m=4, k=8], f32>, !sluice.tensor<[n=4, k=8], f32>) -> !sluice.tensor<[m=4, n=4], f32> {
  ^bb0(%aa: !sluice.tensor<[m=4, k=8], f32>, %ba: !sluice.tensor<[n=4, k=8], f32>):
    %r = sluice.contract %aa, %ba {sluice.name = "mm"} : (!sluice.tensor<[m=4, k=8], f32>, !sluice.tensor<[n=4, k=8], f32>) -> !sluice.tensor<[m=4, n=4], f32>
    sluice.kernel_yield %r : !sluice.tensor<[m=4, n=4], f32>
  }
  sluice.return %c : !sluice.tensor<[m=4, n=4], f32>
}
