"""Times PyTorch eager on the layer a Sluice spec describes (CPU).

  torch_layer_timer.py SPEC [--iterations N] [--warmup W] [--threads T]
                       [--split] [--split-iterations S]

Builds torch.nn.TransformerEncoderLayer with the spec's semantics (the same
ones python/sluice maps to a spec: batch_first, nn.Linear [out, in]
weights, post-LN or pre-LN (norm_first), relu / gelu / gelu_tanh, dropout on
the attention probabilities, after the attention output (residual), after
the activation and after the second FFN matmul (residual), a causal mask
when the spec is causal) in training mode, and runs forward then backward
(with a random dy, gradients of x and every parameter) N times. Prints one
JSON object in module_timer's shape: per phase the median / min / max
milliseconds and every sample, plus the per-iteration totals.

With --split, S more iterations (default 3) run after the timed ones under
torch.profiler, and each phase gains a "split" object: the time in BLAS ops
(projections and FFN: "gemm"; the attention's batched products:
"attention_gemm"), in the other ops on the attention scores
("attention_other") and the rest, under the profiler and scaled to the
timed median (torch_profile_split.py says how and what that costs). The
timed iterations are over before the profiler starts.
"""

import argparse
import json
import math
import contextlib
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def activation_of(name):
    if name == "relu":
        return F.relu
    if name == "gelu":
        return F.gelu
    if name == "gelu_tanh":
        return lambda x: F.gelu(x, approximate="tanh")
    sys.exit("torch_layer_timer: error: activation '%s' is not one of relu, "
             "gelu, gelu_tanh" % name)


def build(spec):
    d = spec["dims"]
    dropout = spec.get("dropout", {})
    if not spec.get("training", False):
        sys.exit("torch_layer_timer: error: the spec is not a training layer")
    if spec.get("dtype", "f32") != "f32":
        sys.exit("torch_layer_timer: error: only f32 specs are timed on the "
                 "CPU (got %s)" % spec.get("dtype"))
    embed = d["embed"]
    layer = nn.TransformerEncoderLayer(
        embed, d["heads"], dim_feedforward=d.get("ffn", 4 * embed),
        dropout=0.0, activation=activation_of(spec.get("activation", "gelu")),
        layer_norm_eps=spec.get("layernorm_eps", 1e-5), batch_first=True,
        norm_first=spec.get("norm", "post") == "pre")
    # The three dropout sites of a Sluice encoder (docs/SpecFormat.md).
    layer.self_attn.dropout = float(dropout.get("attention", 0.0))
    layer.dropout1.p = float(dropout.get("residual", 0.0))
    layer.dropout2.p = float(dropout.get("residual", 0.0))
    layer.dropout.p = float(dropout.get("activation", 0.0))
    layer.train()
    mask = None
    if spec.get("causal", False):
        seq = d["seq"]
        mask = torch.triu(torch.full((seq, seq), -math.inf), diagonal=1)
    x = torch.randn(d["batch"], d["seq"], embed).mul_(0.5).requires_grad_()
    dy = torch.randn(d["batch"], d["seq"], embed).mul_(0.5)
    return layer, x, dy, mask


class Stopwatch:
    """A context that appends its duration in milliseconds to a list."""

    def __init__(self, samples):
        self.samples = samples

    def __enter__(self):
        self.start = time.perf_counter()

    def __exit__(self, *exc):
        self.samples.append((time.perf_counter() - self.start) * 1e3)


def step(layer, x, dy, mask, forward_scope, backward_scope):
    """One training iteration: forward in `forward_scope`, backward (dy into
    x and every parameter) in `backward_scope`."""
    layer.zero_grad(set_to_none=True)
    x.grad = None
    with forward_scope:
        y = layer(x, src_mask=mask)
    with backward_scope:
        y.backward(dy)


def summary(name, samples):
    return {"phase": name, "median_ms": statistics.median(samples),
            "min_ms": min(samples), "max_ms": max(samples),
            "samples_ms": samples, "kernels": []}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("spec")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0,
                        help="torch.set_num_threads (0: leave it)")
    parser.add_argument("--split", action="store_true",
                        help="after the timed iterations, profile more and "
                        "split each phase into BLAS, attention and the rest")
    parser.add_argument("--split-iterations", type=int, default=3)
    args = parser.parse_args()
    if args.iterations < 1 or args.split_iterations < 1:
        sys.exit("torch_layer_timer: error: --iterations and "
                 "--split-iterations must be at least 1")
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    with open(args.spec) as f:
        spec = json.load(f)
    torch.manual_seed(1)
    layer, x, dy, mask = build(spec)
    for _ in range(args.warmup):
        step(layer, x, dy, mask, contextlib.nullcontext(),
             contextlib.nullcontext())
    forward, backward = [], []
    for _ in range(args.iterations):
        step(layer, x, dy, mask, Stopwatch(forward), Stopwatch(backward))
    totals = [f + b for f, b in zip(forward, backward)]
    phases = [summary("forward", forward), summary("backward", backward)]
    if args.split:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from torch_profile_split import split
        d = spec["dims"]
        splits = split(lambda f, b: step(layer, x, dy, mask, f, b),
                       args.split_iterations,
                       [d["batch"] * d["heads"], d["seq"], d["seq"]],
                       {p["phase"]: p["median_ms"] for p in phases})
        for p in phases:
            p["split"] = splits[p["phase"]]
    print(json.dumps({
        "module": "torch %s eager" % torch.__version__,
        "device": "host CPU, %d threads" % torch.get_num_threads(),
        "iterations": args.iterations,
        "phases": phases,
        "total_median_ms": statistics.median(totals),
        "total_samples_ms": totals}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
