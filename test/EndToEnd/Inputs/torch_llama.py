"""An independent PyTorch float64 reference for LLaMA-style layers
(RMSNorm, SwiGLU/SiLU, rotary embeddings, grouped-query attention, with or
without linear biases), written from HF LLaMA's `LlamaDecoderLayer` without
caches; it shares no code with the compiler or with reference_layer.py.
Specs here have no dropout (all probabilities 0 or inference); the spec's
dtype is ignored (the reference is always float64; the test's tolerance says
how far the dtype's rounding may take sluice).

  torch_llama.py make  --spec SPEC --dir DIR [--data-seed N]
      Writes DIR/<name>.npy (float64) for every boundary input, and dy for a
      training spec.
  torch_llama.py check --spec SPEC --inputs DIR --outputs DIR [--tol T]
                       [--outputs DIR [--tol T]]...
      Recomputes y (and, for training, every d_<name> by autograd) and
      compares: max|got - ref| / max(max|ref|, 1e-2) <= T (default 1e-4);
      each outputs directory must hold exactly the expected files. Several
      outputs directories of the same spec and inputs (one --tol for all,
      or one per --outputs, in order) share one reference and one import of
      PyTorch (most of a run's time); each gets a header line, its lines and
      its verdict, and the exit status is 1 if any of them fails.
"""

import argparse
import json
import math
import os
import sys

import numpy as np

torch = None  # imported by `check` only: `make` needs NumPy alone


class Spec:
    def __init__(self, path):
        with open(path) as f:
            s = json.load(f)
        d = s["dims"]
        self.B, self.S, self.H, self.E = d["batch"], d["seq"], d["heads"], d["embed"]
        self.P = d.get("head_dim", self.E // self.H)
        self.U = d.get("ffn", 4 * self.E)
        self.G = d.get("kv_heads", self.H)
        self.pre = s.get("norm", "post") == "pre"
        self.rms = s.get("norm_type", "layernorm") == "rmsnorm"
        self.act = s.get("activation", "gelu")
        self.bias = s.get("bias", True)
        self.theta = s["rope"].get("theta", 10000.0) if "rope" in s else None
        self.causal = s.get("causal", False)
        self.eps = s.get("layernorm_eps", 1e-5)
        self.training = s.get("training", False)
        drop = s.get("dropout", {})
        if self.training and any(drop.get(k, 0.1) for k in
                                 ("attention", "residual", "activation")):
            sys.exit("error: torch_llama.py handles specs without dropout")

    def shapes(self):
        B, S, E, P, U, G = self.B, self.S, self.E, self.P, self.U, self.G
        kv = G * P
        shapes = {"x": (B, S, E), "wq": (E, E), "bq": (E,), "wk": (kv, E),
                  "bk": (kv,), "wv": (kv, E), "bv": (kv,), "wo": (E, E),
                  "bo": (E,), "ln1_scale": (E,), "ln1_bias": (E,),
                  "w1": (U, E), "b1": (U,), "w3": (U, E), "b3": (U,),
                  "w2": (E, U), "b2": (E,), "ln2_scale": (E,), "ln2_bias": (E,)}
        drop = set()
        if not self.bias:
            drop |= {"bq", "bk", "bv", "bo", "b1", "b2", "b3"}
        if self.act != "swiglu":
            drop |= {"w3", "b3"}
        if self.rms:
            drop |= {"ln1_bias", "ln2_bias"}
        out = {n: s for n, s in shapes.items() if n not in drop}
        if self.training:
            out["dy"] = (B, S, E)
        return out


def linear(t, w, b):
    return torch.nn.functional.linear(t, w, b)


def rotate_half(t):
    half = t.shape[-1] // 2
    return torch.cat((-t[..., half:], t[..., :half]), dim=-1)


def layer(spec, a):
    B, S, H, P, G = spec.B, spec.S, spec.H, spec.P, spec.G
    get = a.get

    def norm(t, n):
        if spec.rms:
            var = t.pow(2).mean(-1, keepdim=True)
            return t * torch.rsqrt(var + spec.eps) * a[n + "_scale"]
        return torch.nn.functional.layer_norm(
            t, (spec.E,), a[n + "_scale"], a[n + "_bias"], spec.eps)

    def attn(t):
        q = linear(t, a["wq"], get("bq")).view(B, S, H, P).transpose(1, 2)
        k = linear(t, a["wk"], get("bk")).view(B, S, G, P).transpose(1, 2)
        v = linear(t, a["wv"], get("bv")).view(B, S, G, P).transpose(1, 2)
        if spec.theta is not None:
            inv = 1.0 / (spec.theta ** (torch.arange(0, P, 2, dtype=torch.float64) / P))
            freqs = torch.outer(torch.arange(S, dtype=torch.float64), inv)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos(), emb.sin()
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(H // G, dim=1)
        v = v.repeat_interleave(H // G, dim=1)
        s = q @ k.transpose(-1, -2) / math.sqrt(P)
        if spec.causal:
            mask = torch.triu(torch.ones(S, S, dtype=torch.bool), 1)
            s = s.masked_fill(mask, float("-inf"))
        c = torch.softmax(s, dim=-1) @ v
        c = c.transpose(1, 2).reshape(B, S, H * P)
        return linear(c, a["wo"], get("bo"))

    def ffn(t):
        h = linear(t, a["w1"], get("b1"))
        if spec.act == "swiglu":
            h = torch.nn.functional.silu(h) * linear(t, a["w3"], get("b3"))
        elif spec.act == "silu":
            h = torch.nn.functional.silu(h)
        elif spec.act == "relu":
            h = torch.relu(h)
        else:
            h = torch.nn.functional.gelu(
                h, approximate="tanh" if spec.act == "gelu_tanh" else "none")
        return linear(h, a["w2"], get("b2"))

    x = a["x"]
    if spec.pre:
        r = x + attn(norm(x, "ln1"))
        return r + ffn(norm(r, "ln2"))
    x1 = norm(x + attn(x), "ln1")
    return norm(x1 + ffn(x1), "ln2")


def reference(spec, inputs):
    a = {n: torch.tensor(v, dtype=torch.float64, requires_grad=spec.training)
         for n, v in inputs.items() if n != "dy"}
    y = layer(spec, a)
    out = {"y": y.detach().numpy()}
    if spec.training:
        y.backward(torch.tensor(inputs["dy"], dtype=torch.float64))
        for n, t in a.items():
            out["d_" + n] = t.grad.numpy()
    return out


def cmd_make(args):
    spec = Spec(args.spec)
    rng = np.random.default_rng(args.data_seed)
    os.makedirs(args.dir, exist_ok=True)
    for name, shape in spec.shapes().items():
        if name in ("x", "dy"):
            values = rng.normal(0.0, 1.0, shape)
        elif name.endswith("_scale"):
            values = 1.0 + rng.normal(0.0, 0.3, shape)
        else:
            values = rng.normal(0.0, 0.3, shape)
        values = values.astype(np.float32).astype(np.float64)
        np.save(os.path.join(args.dir, name + ".npy"), values)
    return 0


def check_outputs(expected, outputs, tol):
    """Compares the .npy files of `outputs` with `expected`; prints a line
    per tensor and a verdict; returns the number of failing tensors."""
    present = sorted(f[:-4] for f in os.listdir(outputs) if f.endswith(".npy"))
    failures = sorted(set(present) - set(expected))
    for name in failures:
        print("FAIL %s: unexpected output" % name)
    for name in sorted(expected, key=lambda n: (n != "y", n)):
        path = os.path.join(outputs, name + ".npy")
        if not os.path.exists(path):
            failures.append(name)
            print("FAIL %-10s missing" % name)
            continue
        got = np.load(path).astype(np.float64)
        want = expected[name]
        if got.shape != want.shape:
            failures.append(name)
            print("FAIL %-10s shape %s, expected %s" % (name, got.shape, want.shape))
            continue
        scale = max(np.abs(want).max(), 1e-2)
        err = np.abs(got - want).max() / scale if np.all(np.isfinite(got)) else np.inf
        ok = err <= tol
        print("%s %-10s rel err %.3e" % ("ok  " if ok else "FAIL", name, err))
        if not ok:
            failures.append(name)
    if failures:
        print("error: disagree with PyTorch: %s" % ", ".join(failures))
    else:
        print("all %d outputs agree with PyTorch" % len(expected))
    return len(failures)


def cmd_check(args):
    global torch
    import torch
    tols = args.tol or [1e-4]
    if len(tols) == 1:
        tols = tols * len(args.outputs)
    if len(tols) != len(args.outputs):
        print("error: give one --tol, or one after each --outputs", file=sys.stderr)
        return 2
    spec = Spec(args.spec)
    inputs = {n: np.load(os.path.join(args.inputs, n + ".npy"))
              for n in spec.shapes()}
    expected = reference(spec, inputs)
    failing = 0
    for outputs, tol in zip(args.outputs, tols):
        print("outputs %s, tol %g" % (outputs, tol))
        failing += check_outputs(expected, outputs, tol) > 0
    return 1 if failing else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("make")
    p.add_argument("--spec", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--data-seed", type=int, default=0)
    p = sub.add_parser("check")
    p.add_argument("--spec", required=True)
    p.add_argument("--inputs", required=True)
    p.add_argument("--outputs", required=True, action="append")
    p.add_argument("--tol", type=float, action="append")
    args = parser.parse_args()
    return {"make": cmd_make, "check": cmd_check}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
