// kernel 'k0' (fused: scale): element-wise, 256 threads, vector 4
// 16-byte: in0 out0
template <bool Aligned>
__global__ void __launch_bounds__(256) sluice_kernel_0(const float *__restrict__ in0, float *__restrict__ out0, uint64_t seed) {
}

// kernel 'k3' (fused: ln.grad): row blocks, 256 threads, vector 4
__global__ void __launch_bounds__(256) sluice_kernel_3(const float *in0, float *out0, uint64_t seed) {
}
