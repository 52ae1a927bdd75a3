#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention on the shapes that
`stream_attention_check --time` timed, for the GPU kit's attention step
(docs/GPU.md).

  attention_torch.py [--device cuda|cpu] [--repeats N] < TIME_LINES

reads the "time TYPE b=B h=H l=L d=D causal=C dropout=P ..." lines on stdin
and prints one JSON object per shape: the shape, PyTorch's forward and
backward medians in ms (training forward: autograd records, as in a layer;
the backward is out.backward(dO) for q, k and v), the backend PyTorch
chose (as far as torch.backends tells), and, from the same line, Sluice's
times. Q, K, V and dO are [b, l, h, d] tensors read through a transpose, the
layout the Sluice kernels were timed in. FLOP counts follow FlashAttention's
convention: forward 4*b*h*l*l*d (halved when causal), backward 2.5 times
the forward, so TFLOP/s compare directly with published figures.
`--device cpu` runs the same code on the CPU (for tests; times meaningless).
"""

import argparse
import json
import re
import statistics
import sys
import time

LINE = re.compile(r"^time (\w+) b=(\d+) h=(\d+) l=(\d+) d=(\d+) causal=(\d) "
                  r"dropout=([0-9.e+-]+) fwd_ms=([0-9.e+-]+) "
                  r"bwd_ms=([0-9.e+-]+)")


def parse(lines):
    """The shapes and Sluice's times of every well-formed "time" line."""
    shapes = []
    for line in lines:
        match = LINE.match(line.strip())
        if not match:
            continue
        (dtype, b, h, l, d, causal, dropout, fwd, bwd) = match.groups()
        shapes.append({"dtype": dtype, "b": int(b), "h": int(h), "l": int(l),
                       "d": int(d), "causal": causal == "1",
                       "dropout": float(dropout),
                       "sluice_fwd_ms": float(fwd),
                       "sluice_bwd_ms": float(bwd)})
    return shapes


def flops(shape):
    """FlashAttention's counts: (forward, backward)."""
    forward = 4.0 * shape["b"] * shape["h"] * shape["l"] ** 2 * shape["d"]
    if shape["causal"]:
        forward /= 2
    return forward, 2.5 * forward


def with_rates(record):
    """`record` with <who>_<phase>_tflops beside every positive time."""
    forward_flops, backward_flops = flops(record)
    for who in ("sluice", "torch"):
        for phase, count in (("fwd", forward_flops), ("bwd", backward_flops)):
            ms = record.get("%s_%s_ms" % (who, phase))
            if isinstance(ms, float) and ms > 0:
                record["%s_%s_tflops" % (who, phase)] = count / ms / 1e9
    return record


class Clock:
    """CUDA events on a GPU, perf_counter on the CPU."""

    def __init__(self, torch, device):
        self.torch, self.cuda = torch, device == "cuda"

    def mark(self):
        if self.cuda:
            event = self.torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def ms(self, start, stop):
        if self.cuda:
            stop.synchronize()
            return start.elapsed_time(stop)
        return (stop - start) * 1e3


def time_torch(torch, shape, device, repeats):
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16,
             "f32": torch.float32}[shape["dtype"]]
    b, h, l, d = shape["b"], shape["h"], shape["l"], shape["d"]

    def tensor():
        # [b, l, h, d] in memory, (b, h, l, d) as SDPA takes it.
        return torch.randn(b, l, h, d, dtype=dtype, device=device) \
            .transpose(1, 2)

    q, k, v = (tensor().requires_grad_() for _ in range(3))
    grad = tensor()
    attention = sdpa(torch)
    clock = Clock(torch, device)
    forward, backward = [], []
    for i in range(repeats + 3):
        q.grad = k.grad = v.grad = None
        start = clock.mark()
        out = attention(q, k, v, dropout_p=shape["dropout"],
                        is_causal=shape["causal"], scale=d ** -0.5)
        middle = clock.mark()
        out.backward(grad)
        stop = clock.mark()
        if i >= 3:
            forward.append(clock.ms(start, middle))
            backward.append(clock.ms(middle, stop))
    return statistics.median(forward), statistics.median(backward)


def math_attention(torch):
    """scaled_dot_product_attention's math path, for a torch before 2.0
    (Debian's 1.13, which the tests use on the CPU)."""
    def attention(q, k, v, dropout_p, is_causal, scale):
        scores = torch.matmul(q, k.transpose(-2, -1)) * scale
        if is_causal:
            length = scores.shape[-1]
            mask = torch.ones(length, length, dtype=torch.bool,
                              device=q.device).triu(1)
            scores = scores.masked_fill(mask, float("-inf"))
        probabilities = torch.softmax(scores.float(), dim=-1).to(q.dtype)
        probabilities = torch.nn.functional.dropout(probabilities, dropout_p)
        return torch.matmul(probabilities, v)
    return attention


def sdpa(torch):
    return getattr(torch.nn.functional, "scaled_dot_product_attention",
                   None) or math_attention(torch)


def backend(torch, device):
    if not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        return "math (torch %s has no scaled_dot_product_attention)" % (
            torch.__version__)
    if device != "cuda":
        return "cpu"
    enabled = [name for name, on in (
        ("flash", torch.backends.cuda.flash_sdp_enabled()),
        ("cudnn", getattr(torch.backends.cuda, "cudnn_sdp_enabled",
                          lambda: False)()),
        ("memory-efficient", torch.backends.cuda.mem_efficient_sdp_enabled()),
        ("math", torch.backends.cuda.math_sdp_enabled())) if on]
    return "auto among " + ", ".join(enabled)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    shapes = parse(sys.stdin)
    if not shapes:
        print("attention_torch.py: error: no 'time ...' lines on stdin",
              file=sys.stderr)
        return 1
    import torch
    if args.device == "cuda" and not torch.cuda.is_available():
        print("attention_torch.py: error: torch sees no CUDA device",
              file=sys.stderr)
        return 1
    for shape in shapes:
        record = dict(shape, backend=backend(torch, args.device))
        try:
            fwd, bwd = time_torch(torch, shape, args.device, args.repeats)
            record.update(torch_fwd_ms=fwd, torch_bwd_ms=bwd)
        except RuntimeError as error:  # out of memory, unsupported shape
            record["error"] = str(error).splitlines()[0][:200]
        print(json.dumps(with_rates(record)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
