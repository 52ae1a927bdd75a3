"""Writes the files cpu_vs_torch.py's bandwidth table reads, for a layer
'fake' with one round: fused kernels k1 (act: 1e7 bytes in 2 ms) and k2
(other: 3e7 bytes in 2 ms) beside a GEMM kernel k0 whose epilogue is the
op 'bias'; unfused kernels bias (1 ms), act (3 ms), other (4 ms) beside the
GEMM. Copy rate 10 GB/s. Expected: bytes-weighted mean 125% of the copy,
all bytes / all time 100%, fused vs --fuse=off 2.00x, like for like (without
the unfused 'bias', which the fused build runs inside k0) 1.75x."""

import json
import os
import sys

work = sys.argv[1]


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f)


def kernel(name, cls, nbytes):
    return {"kind": "kernel", "phase": "forward", "name": name,
            "class": cls, "bytes_read": nbytes // 2,
            "bytes_written": nbytes - nbytes // 2, "flop": 0}


fused = {"ops": [kernel("k0", "contraction", 10**6),
                 kernel("k1", "element-wise", 10**7),
                 kernel("k2", "normalization", 3 * 10**7)]}
unfused = {"ops": [kernel("k0", "contraction", 10**6),
                   kernel("k1", "element-wise", 10**6),
                   kernel("k2", "element-wise", 2 * 10**7),
                   kernel("k3", "element-wise", 4 * 10**7)]}


def timer(kernels):
    return {"clock": "cpu", "copy_gbs": 10.0, "copy_bytes": 16 << 20,
            "copy_threads": 1,
            "phases": [{"phase": "forward", "samples_ms": [1.0],
                        "kernels": [{"name": n, "median_ms": ms}
                                    for n, ms in kernels]}]}


write(os.path.join(work, "fake-prof-cpu", "report.json"), fused)
write(os.path.join(work, "fake-off-cpu", "report.json"), unfused)
for threads in (1, 2):
    write(os.path.join(work, "fake-prof-t%d-r1.json" % threads), timer([
        ("kernel 'k0' (gemm: mm, bias)", 5.0),
        ("kernel 'k1' (fused: act)", 2.0),
        ("kernel 'k2' (fused: other)", 2.0)]))
    write(os.path.join(work, "fake-off-t%d-r1.json" % threads), timer([
        ("kernel 'k0' (gemm: mm)", 5.0),
        ("kernel 'k1' (fused: bias)", 1.0),
        ("kernel 'k2' (fused: act)", 3.0),
        ("kernel 'k3' (fused: other)", 4.0)]))
