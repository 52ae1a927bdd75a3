#!/usr/bin/env python3
"""Times a layer spec's layer in PyTorch, eager and torch.compile (docs/GPU.md).

  torch_layers.py SPEC.json [SPEC.json ...] --out FILE.jsonl
                  [--iterations N] [--warmup W] [--deadline UNIX_TIME]
                  [--modes eager,compile] [--device cuda|cpu]

The layer is torch.nn.TransformerEncoderLayer (batch_first, norm_first for
pre-LN), the module that docs/SpecFormat.md says a spec is (checked with
dropout 0 by scripts/crosscheck_torch.py): in_proj_weight is cat(wq, wk, wv)
in the [out, in] convention of nn.Linear, the spec's dtype for parameters
and activations, its dropout probabilities at the same sites (attention
probabilities, the attention and FFN outputs before the residual, the FFN
activation), relu / gelu / gelu_tanh, layernorm eps, and the causal mask.
Training: x requires a gradient, so the backward computes d_x and every
parameter's gradient, like the Sluice module.

Per spec and mode, each iteration runs forward then backward of y with a
fixed dy (gradients reset to None in between), with CUDA events around each
(wall clock on the CPU); after W warm-up iterations the median of N is
written as one JSON line: {"shape", "mode", "forward": {"median_ms", ...},
"backward": {...}, "compile_s"}. Before a torch.compile run a "started"
line is written, so a run killed by its time limit is reported as such.
All eager runs come first, then the compiled ones; a run that would start
after --deadline is skipped (written as an error line), and after its first
iteration (torch.compile's compile) each run gets an equal share of the
time left for the runs not done yet: it stops starting iterations at its
share once one was timed ("time_limited").
"""

import argparse
import inspect
import json
import os
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as error:  # the GPU machine has torch; say so elsewhere
    print("torch_layers: error: %s" % error, file=sys.stderr)
    sys.exit(2)

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}


def gelu_tanh(t):
    return F.gelu(t, approximate="tanh")


def build_layer(spec, device):
    dims = spec["dims"]
    dropout = spec.get("dropout", {})
    p_attention = dropout.get("attention", 0.1)
    p_residual = dropout.get("residual", 0.1)
    p_activation = dropout.get("activation", 0.1)
    activation = {"relu": F.relu, "gelu": F.gelu,
                  "gelu_tanh": gelu_tanh}[spec.get("activation", "gelu")]
    embed, heads = dims["embed"], dims["heads"]
    if dims.get("head_dim", embed // heads) * heads != embed:
        raise ValueError("nn.TransformerEncoderLayer needs heads * head_dim "
                         "= embed")
    layer = nn.TransformerEncoderLayer(
        embed, heads, dim_feedforward=dims["ffn"], dropout=p_residual,
        activation=activation, layer_norm_eps=spec.get("layernorm_eps", 1e-5),
        batch_first=True, norm_first=spec.get("norm", "post") == "pre",
        device=device, dtype=DTYPES[spec.get("dtype", "f32")])
    layer.self_attn.dropout = p_attention
    layer.dropout.p = p_activation
    layer.dropout1.p = p_residual
    layer.dropout2.p = p_residual
    layer.train(spec.get("training", True))
    return layer


class Clock:
    """CUDA events on the current stream, or the wall clock on the CPU."""

    def __init__(self, device):
        self.cuda = device == "cuda"

    def mark(self):
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def elapsed_ms(self, a, b):
        if self.cuda:
            torch.cuda.synchronize()
            return a.elapsed_time(b)
        return (b - a) * 1e3


def summary(values):
    ordered = sorted(values)
    n = len(ordered)
    median = ordered[n // 2] if n % 2 else 0.5 * (ordered[n // 2 - 1] +
                                                  ordered[n // 2])
    return {"median_ms": median, "min_ms": ordered[0], "max_ms": ordered[-1]}


def time_layer(spec, mode, args, runs_left):
    device = args.device
    torch.manual_seed(0)
    layer = build_layer(spec, device)
    dims, dtype = spec["dims"], DTYPES[spec.get("dtype", "f32")]
    shape = (dims["batch"], dims["seq"], dims["embed"])
    x = torch.randn(shape, device=device, dtype=dtype).requires_grad_(
        spec.get("training", True))
    dy = torch.randn(shape, device=device, dtype=dtype)
    call = {}
    if spec.get("causal", False):
        seq = dims["seq"]
        call["src_mask"] = torch.ones(seq, seq, dtype=torch.bool,
                                      device=device).triu(1)
        if "is_causal" in inspect.signature(layer.forward).parameters:
            call["is_causal"] = True
    model = torch.compile(layer) if mode == "compile" else layer
    clock = Clock(device)
    forward, backward = [], []
    compile_s = None
    stop, time_limited = float("inf"), False
    for iteration in range(args.warmup + args.iterations):
        if iteration > args.warmup and time.perf_counter() > stop:
            time_limited = True
            break
        layer.zero_grad(set_to_none=True)
        x.grad = None
        begin = time.perf_counter()
        a = clock.mark()
        y = model(x, **call)
        b = clock.mark()
        if spec.get("training", True):
            y.backward(dy)
        c = clock.mark()
        forward_ms = clock.elapsed_ms(a, b)
        backward_ms = clock.elapsed_ms(b, c)
        if iteration == 0:
            if mode == "compile":
                compile_s = time.perf_counter() - begin
            stop = time.perf_counter() + max(
                3.0, (args.deadline - time.time()) / runs_left)
        if iteration >= args.warmup:
            forward.append(forward_ms)
            backward.append(backward_ms)
    if not torch.isfinite(y).all():
        raise ValueError("the output holds NaN or Inf")
    record = {"forward": summary(forward), "iterations": len(forward),
              "time_limited": time_limited, "torch": torch.__version__}
    if spec.get("training", True):
        record["backward"] = summary(backward)
    if compile_s is not None:
        record["compile_s"] = compile_s
    return record


def emit(out, record):
    with open(out, "a") as f:
        f.write(json.dumps(record) + "\n")
    print(json.dumps(record), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("specs", nargs="+")
    parser.add_argument("--out", required=True)
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--deadline", type=float, default=float("inf"))
    parser.add_argument("--modes", default="eager,compile")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    args = parser.parse_args()
    if args.device == "cuda" and not torch.cuda.is_available():
        print("torch_layers: error: torch %s sees no CUDA device" %
              torch.__version__, file=sys.stderr)
        return 1
    specs = []
    for path in args.specs:
        with open(path) as f:
            spec = json.load(f)
        specs.append((spec.get("name", os.path.basename(path)), spec))
    failures = 0
    runs = [(mode, shape, spec) for mode in args.modes.split(",")
            for shape, spec in specs]
    for index, (mode, shape, spec) in enumerate(runs):
        base = {"shape": shape, "mode": mode}
        if time.time() > args.deadline:
            emit(args.out, dict(base, error="not started: the step's "
                                "time limit was reached"))
            continue
        if mode == "compile" and not hasattr(torch, "compile"):
            emit(args.out, dict(base, error="torch %s has no "
                                "torch.compile" % torch.__version__))
            continue
        emit(args.out, dict(base, status="started"))
        try:
            record = time_layer(spec, mode, args, len(runs) - index)
        except Exception as error:  # one failure must not stop the rest
            failures += 1
            emit(args.out, dict(base, error="%s: %s" % (
                type(error).__name__, str(error)[:1500])))
            continue
        emit(args.out, dict(base, **record))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
