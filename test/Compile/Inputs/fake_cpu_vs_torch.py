"""Writes the files cpu_vs_torch.py's bandwidth table reads, for a layer
'fake' with one round: fused kernels k1 (act: 1e7 bytes in 2 ms) and k2
(other: 3e7 bytes in 2 ms) beside a GEMM kernel k0 whose epilogue is the
op 'bias'; unfused kernels bias (1 ms), act (3 ms), other (4 ms) beside the
GEMM. Copy rate 10 GB/s. Expected: bytes-weighted mean 125% of the copy,
all bytes / all time 100%, fused vs --fuse=off 2.00x, like for like (without
the unfused 'bias', which the fused build runs inside k0) 1.75x.

For the split table: the fused profile build's forward also runs a streaming
attention kernel k3 (2 ms; phase 12 ms: GEMM 5/12, attention 2/12, rest
5/12), its backward a GEMM k0 (8 ms) and a streaming kernel k1 (4 ms) in a
16 ms phase (rest 4/16); the un-profiled Sluice medians are 24 and 32 ms.
torch (torch_layer_timer.py --split at one thread, none at two): forward
30 ms with profiled shares GEMM 0.5, attention GEMM 0.1, other attention
0.1, rest 0.3; backward 48 ms with 0.5, 0.1, 0.05, 0.35. Expected at one
thread: forward Sluice 10 / 4 / 10 (total 24), torch 15 / 6 (3) / 9 (30),
torch/Sluice 1.50x, 1.50x, 0.90x, 1.25x; backward Sluice 16 / 8 / 8 (32),
torch 24 / 7.2 (4.8) / 16.8 (48): 1.50x, 0.90x, 2.10x, 1.50x; both phases
Sluice 26 / 12 / 18 (56), torch 39 / 13.2 (7.8) / 25.8 (78): 1.50x, 1.10x,
1.43x, 1.39x."""

import json
import os
import sys

work = sys.argv[1]


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f)


def kernel(name, cls, nbytes, phase="forward"):
    return {"kind": "kernel", "phase": phase, "name": name,
            "class": cls, "bytes_read": nbytes // 2,
            "bytes_written": nbytes - nbytes // 2, "flop": 0}


fused = {"ops": [kernel("k0", "contraction", 10**6),
                 kernel("k1", "element-wise", 10**7),
                 kernel("k2", "normalization", 3 * 10**7),
                 kernel("k3", "contraction", 10**6),
                 kernel("k0", "contraction", 10**6, "backward"),
                 kernel("k1", "contraction", 10**6, "backward")]}
unfused = {"ops": [kernel("k0", "contraction", 10**6),
                   kernel("k1", "element-wise", 10**6),
                   kernel("k2", "element-wise", 2 * 10**7),
                   kernel("k3", "element-wise", 4 * 10**7)]}


def phase(name, median_ms, kernels):
    return {"phase": name, "median_ms": median_ms,
            "samples_ms": [median_ms],
            "kernels": [{"name": n, "median_ms": ms} for n, ms in kernels]}


def timer(kernels, backward=()):
    return {"clock": "cpu", "copy_gbs": 10.0, "copy_bytes": 16 << 20,
            "copy_threads": 1,
            "phases": [phase("forward", 12.0, kernels),
                       phase("backward", 16.0, backward)]}


def torch_phase(name, median_ms, shares):
    """A torch_layer_timer.py --split phase: two profiled iterations of
    20 * median_ms / 30 ms (profiled / timed 0.67x) whose summed categories
    have the given shares."""
    out = phase(name, median_ms, [])
    if shares:
        total = 2 * 20.0 * median_ms / 30
        split = {"iterations": 2, "profiled_ms": [total / 2] * 2,
                 "profiler_overhead": 20.0 / 30}
        for cat, share in zip(("gemm", "attention_gemm", "attention_other",
                               "rest"), shares):
            # Unequal iterations: the table sums them.
            split[cat + "_ms"] = [share * total * 0.25, share * total * 0.75]
        out["split"] = split
    return out


write(os.path.join(work, "fake-prof-cpu", "report.json"), fused)
write(os.path.join(work, "fake-off-cpu", "report.json"), unfused)
for threads in (1, 2):
    write(os.path.join(work, "fake-prof-t%d-r1.json" % threads), timer([
        ("kernel 'k0' (gemm: mm, bias)", 5.0),
        ("kernel 'k3' (streaming: qk, av)", 2.0),
        ("kernel 'k1' (fused: act)", 2.0),
        ("kernel 'k2' (fused: other)", 2.0)], [
        ("kernel 'k0' (gemm: mm.grad)", 8.0),
        ("kernel 'k1' (streaming: qk.grad, av.grad)", 4.0)]))
    write(os.path.join(work, "fake-sluice-t%d-r1.json" % threads),
          {"phases": [phase("forward", 24.0, []),
                      phase("backward", 32.0, [])]})
    split = threads == 1
    write(os.path.join(work, "fake-torch-t%d-r1.json" % threads),
          {"phases": [torch_phase("forward", 30.0,
                                  split and (0.5, 0.1, 0.1, 0.3)),
                      torch_phase("backward", 48.0,
                                  split and (0.5, 0.1, 0.05, 0.35))]})
    write(os.path.join(work, "fake-off-t%d-r1.json" % threads), timer([
        ("kernel 'k0' (gemm: mm)", 5.0),
        ("kernel 'k1' (fused: bias)", 1.0),
        ("kernel 'k2' (fused: act)", 3.0),
        ("kernel 'k3' (fused: other)", 4.0)]))
