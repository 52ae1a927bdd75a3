#!/usr/bin/env python3
"""Cross-check sluice against PyTorch itself (docs/Testing.md, "Cross-check
against PyTorch").

  crosscheck_torch.py SPEC.json [SPEC.json ...] [options]
  crosscheck_torch.py --suite [options]
  crosscheck_torch.py --write-suite DIR

For every layer spec: writes random inputs as <name>.npy (canonical names,
PyTorch shapes, values representable in the spec's dtype), runs the layer in
PyTorch (float64, nn.Linear / nn.LayerNorm / F.gelu / softmax, forward and,
for a training spec, backward of sum(y * dy)), runs `sluicec run` with the
reference interpreter in f64 and with the compiled CPU module, and compares
every output with PyTorch: max|sluice - torch| / max(max|torch|, 1e-3) per
tensor against a tolerance per backend and dtype. When the CPU module fails,
it is compared with `sluicec run --precision f32` to tell rounding (the f32
interpreter rounds the same way) from an error in the emitted code.

The same layer is also built as torch.nn.TransformerEncoderLayer (packed
in_proj, norm_first for pre-LN) and compared with the hand-written module, so
the claim in docs/SpecFormat.md that the spec matches it is checked as well.

Dropout is off: torch's RNG cannot draw sluice's Philox masks. A training spec
with a nonzero (or defaulted) dropout probability is copied with all three
probabilities set to 0 and the copy is run (a note says so).

Needs torch and numpy (a venv outside the repository, see docs/Testing.md);
the project's own tests never import this script. Exit status: 0 when every
comparison passes, 1 when one fails or sluicec fails, 2 on a usage error.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as err:  # pragma: no cover - depends on the environment
    sys.stderr.write(
        "crosscheck_torch.py: error: %s; run it with a Python that has torch "
        "and numpy, e.g.\n  python3 -m venv /tmp/torchvenv && "
        "/tmp/torchvenv/bin/pip install torch numpy\n  /tmp/torchvenv/bin/"
        "python scripts/crosscheck_torch.py --suite\n" % err)
    sys.exit(2)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Denominator floor of the relative error.
FLOOR = 1e-3

# d_bk is zero in exact arithmetic (a constant added to every key shifts each
# softmax row uniformly): it is a sum over (batch, key) of terms of the key
# gradient that cancel. Its error is measured against the size of those
# terms, max over features of sum_{b,k} |dL/dk|, the bound of a sum's
# rounding error; against max|d_bk| alone it would be pure noise.
CANCELLING = "d_bk"

# Tolerances per backend. The f64 interpreter must agree with torch's f64 to
# rounding; the CPU module computes in f32 and stores in the spec's dtype, and
# so does the interpreter in f32 (ref32, which rounds every stored tensor).
TOLERANCE = {
    "ref64": {"f32": 1e-9, "f16": 1e-9, "bf16": 1e-9},
    "ref32": {"f32": 1e-3, "f16": 3e-2, "bf16": 1e-1},
    "cpu": {"f32": 1e-3, "f16": 3e-2, "bf16": 1e-1},
}

# Where the CPU module and the f32 interpreter agree to this (relative to
# max|torch|), a disagreement with torch comes from f32 compute and storage
# rounding, not from the emitted code.
SAME_ROUNDING = 1e-5

# The hand-written module and nn.TransformerEncoderLayer differ only in the
# order of float64 operations.
TORCH_VS_TORCH_TOL = 1e-12

# --mutate: deliberate semantic differences on the torch side, each one a
# mistake a port between frameworks could make. A run with one must fail; it
# shows which backend's tolerance can see that difference.
MUTATIONS = {
    "scale-embed": "scores scaled by 1/sqrt(embed) instead of 1/sqrt(head_dim)",
    "eps-default": "nn.LayerNorm's default eps 1e-5 instead of the spec's",
    "gelu-other": "gelu erf <-> tanh form swapped (no effect on relu)",
    "wq-transposed": "the query weight used as [in, out] (x @ wq, not x @ wq.T)",
    "no-causal": "no causal mask (no effect on a non-causal layer)",
    "pre-ln-residual": "pre-LN residuals add the normalized input, not the "
                       "raw one (no effect on post-LN)",
}
MUTATION = None


def _dims(b, s, h, p, u):
    return {"batch": b, "seq": s, "heads": h, "head_dim": p, "embed": h * p,
            "ffn": u}


_NO_DROPOUT = {"attention": 0.0, "residual": 0.0, "activation": 0.0}

# Layers that are not in examples/: several sizes, post-LN (BERT) and pre-LN
# (GPT, causal), every activation, f32 / f16 / bf16, training and inference.
SUITE = [
    {"name": "tc_post_gelu_f32_train", "norm": "post", "causal": False,
     "dims": _dims(2, 7, 2, 4, 20), "activation": "gelu",
     "dropout": _NO_DROPOUT, "layernorm_eps": 1e-12, "dtype": "f32",
     "training": True},
    {"name": "tc_pre_gelu_tanh_causal_f32_train", "norm": "pre",
     "causal": True, "dims": _dims(3, 6, 3, 4, 24),
     "activation": "gelu_tanh", "dropout": _NO_DROPOUT,
     "layernorm_eps": 1e-5, "dtype": "f32", "training": True},
    {"name": "tc_post_relu_causal_distinct_f32_train", "norm": "post",
     "causal": True, "dims": _dims(3, 5, 2, 7, 9), "activation": "relu",
     "dropout": _NO_DROPOUT, "layernorm_eps": 1e-3, "dtype": "f32",
     "training": True},
    {"name": "tc_post_gelu_f16_train", "norm": "post", "causal": False,
     "dims": _dims(2, 8, 4, 8, 64), "activation": "gelu",
     "dropout": _NO_DROPOUT, "layernorm_eps": 1e-12, "dtype": "f16",
     "training": True},
    {"name": "tc_pre_relu_causal_f16_train", "norm": "pre", "causal": True,
     "dims": _dims(2, 16, 2, 16, 96), "activation": "relu",
     "dropout": _NO_DROPOUT, "layernorm_eps": 1e-5, "dtype": "f16",
     "training": True},
    {"name": "tc_pre_gelu_causal_bf16_train", "norm": "pre", "causal": True,
     "dims": _dims(1, 12, 3, 8, 40), "activation": "gelu",
     "dropout": _NO_DROPOUT, "layernorm_eps": 1e-5, "dtype": "bf16",
     "training": True},
    {"name": "tc_post_gelu_tanh_f32_infer", "norm": "post", "causal": False,
     "dims": _dims(2, 32, 4, 16, 256), "activation": "gelu_tanh",
     "layernorm_eps": 1e-12, "dtype": "f32", "training": False},
    {"name": "tc_pre_gelu_tanh_causal_f16_infer", "norm": "pre",
     "causal": True, "dims": _dims(1, 64, 8, 16, 512),
     "activation": "gelu_tanh", "layernorm_eps": 1e-5, "dtype": "f16",
     "training": False},
    {"name": "tc_gpt_medium_f32_train", "norm": "pre", "causal": True,
     "dims": _dims(2, 64, 4, 32, 512), "activation": "gelu_tanh",
     "dropout": _NO_DROPOUT, "layernorm_eps": 1e-5, "dtype": "f32",
     "training": True},
    # Dropout left at its default 0.1: the script runs a copy without it.
    {"name": "tc_bert_default_dropout_f32_train", "norm": "post",
     "dims": _dims(2, 16, 4, 8, 128), "activation": "gelu",
     "layernorm_eps": 1e-12, "dtype": "f32", "training": True},
]


# The numpy oracle's reading of a spec (defaults, boundary shapes) is the one
# this script uses too.
sys.path.insert(0, os.path.join(REPO, "test", "EndToEnd", "Inputs"))
import reference_layer  # noqa: E402


class Spec(reference_layer.Spec):
    """reference_layer.Spec (the fields of a layer spec that change the
    numbers, with the defaults of docs/SpecFormat.md), plus the spec's name,
    its JSON and the dropout probabilities per site. Validation is left to
    sluicec."""

    def __init__(self, path, data):
        super().__init__(path)
        self.path = path
        self.data = data
        self.name = data.get("name", os.path.splitext(
            os.path.basename(path))[0])
        self.dropout = [self.p_attention, self.p_residual, self.p_activation]


def load_spec(path, sluicec):
    """Reads SPEC; returns (Spec, None) or (None, message). sluicec checks
    the spec first (--emit=ir), so its own message names a bad field."""
    proc = subprocess.run([sluicec, path, "--emit=ir"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if proc.returncode != 0:
        return None, "sluicec rejects the spec: " + proc.stderr.strip()
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as err:
        return None, "%s: cannot read the file: %s" % (path, err.strerror)
    except ValueError as err:
        return None, "%s: invalid JSON: %s" % (path, err)
    if not isinstance(data, dict) or not isinstance(data.get("dims"), dict):
        return None, "%s: expected a JSON object with a 'dims' object" % path
    for field in ("batch", "seq", "heads", "embed"):
        if not isinstance(data["dims"].get(field), int):
            return None, "%s: field 'dims.%s' is missing or not an " \
                "integer" % (path, field)
    return Spec(path, data), None


def without_dropout(spec, work):
    """A training spec with dropout is rewritten with every probability 0."""
    if not spec.training or not any(spec.dropout):
        return spec
    data = dict(spec.data)
    data["name"] = spec.name
    data["dropout"] = dict(_NO_DROPOUT)
    path = os.path.join(work, spec.name + ".nodropout.json")
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
    print("note: %s: dropout (attention, residual, activation) = %s turned "
          "off for the comparison; running %s" % (spec.path, spec.dropout,
                                                  path))
    return Spec(path, data)


def round_to_dtype(values, dtype):
    """float64 values rounded to the storage dtype, returned as float64."""
    if dtype == "f16":
        return values.astype(np.float16).astype(np.float64)
    if dtype == "bf16":
        t = torch.from_numpy(values.astype(np.float32)).to(torch.bfloat16)
        return t.to(torch.float64).numpy()
    return values.astype(np.float32).astype(np.float64)


def make_inputs(spec, seed):
    """Random inputs at the scale of PyTorch's default initialization, so the
    softmax is neither uniform nor one-hot; every value is exact in the
    spec's dtype, so torch, the interpreter and the CPU module all read the
    same numbers."""
    rng = np.random.default_rng(seed)
    inputs = {}
    for name, shape in spec.shapes().items():
        if name in ("x", "dy"):
            values = rng.normal(0.0, 1.0, shape)
        elif name in ("ln1_scale", "ln2_scale"):
            values = 1.0 + rng.normal(0.0, 0.3, shape)
        elif len(shape) == 2:  # nn.Linear weight [out, in]
            values = rng.normal(0.0, 1.0 / math.sqrt(shape[1]), shape)
        else:
            values = rng.normal(0.0, 0.3, shape)
        inputs[name] = round_to_dtype(values, spec.dtype)
    return inputs


def save_inputs(inputs, spec, directory):
    os.makedirs(directory, exist_ok=True)
    # f16 layers read '<f2' files (exact), the others '<f4' (bf16 is exact
    # in float32).
    npy = np.float16 if spec.dtype == "f16" else np.float32
    for name, values in inputs.items():
        np.save(os.path.join(directory, name + ".npy"), values.astype(npy))


# ---------------------------------------------------------------------------
# The layer the way a PyTorch user writes it.


class SelfAttention(nn.Module):
    def __init__(self, embed, heads, head_dim, causal):
        super().__init__()
        self.heads, self.head_dim, self.causal = heads, head_dim, causal
        self.q = nn.Linear(embed, embed)
        self.k = nn.Linear(embed, embed)
        self.v = nn.Linear(embed, embed)
        self.o = nn.Linear(embed, embed)

    def forward(self, t):
        B, S, E = t.shape
        k = self.k(t)
        if k.requires_grad:
            k.register_hook(self._keep_key_grad)

        def split(z):  # [B, S, E] -> [B, H, S, P]
            return z.view(B, S, self.heads, self.head_dim).transpose(1, 2)

        if MUTATION == "wq-transposed":
            q = split(t @ self.q.weight + self.q.bias)
        else:
            q = split(self.q(t))
        k, v = split(k), split(self.v(t))
        width = E if MUTATION == "scale-embed" else self.head_dim
        scores = q @ k.transpose(-2, -1) / math.sqrt(width)
        if self.causal and MUTATION != "no-causal":
            future = torch.ones(S, S, dtype=torch.bool).triu(1)
            scores = scores.masked_fill(future, float("-inf"))
        context = scores.softmax(dim=-1) @ v
        return self.o(context.transpose(1, 2).reshape(B, S, E))

    def _keep_key_grad(self, grad):
        # [B, S, E] -> the per-feature sum of |terms| that d_bk adds up.
        self.key_grad_l1 = float(grad.abs().sum(dim=(0, 1)).max())


class FeedForward(nn.Module):
    def __init__(self, embed, ffn, activation):
        super().__init__()
        self.up = nn.Linear(embed, ffn)
        self.down = nn.Linear(ffn, embed)
        self.activation = activation

    def forward(self, t):
        f = self.up(t)
        if self.activation == "relu":
            f = F.relu(f)
        else:
            tanh = self.activation == "gelu_tanh"
            if MUTATION == "gelu-other":
                tanh = not tanh
            f = F.gelu(f, approximate="tanh" if tanh else "none")
        return self.down(f)


class EncoderLayer(nn.Module):
    def __init__(self, spec):
        super().__init__()
        self.pre = spec.norm == "pre"
        self.attn = SelfAttention(spec.embed, spec.heads, spec.head_dim,
                                  spec.causal)
        eps = 1e-5 if MUTATION == "eps-default" else spec.eps
        self.ln1 = nn.LayerNorm(spec.embed, eps=eps)
        self.ffn = FeedForward(spec.embed, spec.ffn, spec.activation)
        self.ln2 = nn.LayerNorm(spec.embed, eps=eps)

    def forward(self, x):
        if self.pre:  # GPT-2
            if MUTATION == "pre-ln-residual":
                n1 = self.ln1(x)
                r = n1 + self.attn(n1)
                n2 = self.ln2(r)
                return n2 + self.ffn(n2)
            r = x + self.attn(self.ln1(x))
            return r + self.ffn(self.ln2(r))
        x1 = self.ln1(x + self.attn(x))  # BERT
        return self.ln2(x1 + self.ffn(x1))

    def parameter_of(self):
        """sluice's canonical name -> this module's parameter."""
        a, f = self.attn, self.ffn
        return {"wq": a.q.weight, "bq": a.q.bias, "wk": a.k.weight,
                "bk": a.k.bias, "wv": a.v.weight, "bv": a.v.bias,
                "wo": a.o.weight, "bo": a.o.bias, "ln1_scale": self.ln1.weight,
                "ln1_bias": self.ln1.bias, "w1": f.up.weight, "b1": f.up.bias,
                "w2": f.down.weight, "b2": f.down.bias,
                "ln2_scale": self.ln2.weight, "ln2_bias": self.ln2.bias}


def run_torch(spec, inputs):
    """y and, for training, d_<name> of sum(y * dy), all float64 numpy, and
    the error scale of each output (max(max|ref|, FLOOR); see CANCELLING)."""
    model = EncoderLayer(spec).double()
    params = model.parameter_of()
    with torch.no_grad():
        for name, p in params.items():
            p.copy_(torch.from_numpy(inputs[name]))
    x = torch.from_numpy(inputs["x"]).requires_grad_(spec.training)
    y = model(x)
    out = {"y": y.detach().numpy()}
    if spec.training:
        (y * torch.from_numpy(inputs["dy"])).sum().backward()
        out["d_x"] = x.grad.numpy()
        for name, p in params.items():
            out["d_" + name] = p.grad.numpy()
    scale = {n: max(float(np.abs(v).max()), FLOOR) for n, v in out.items()}
    if spec.training:
        scale[CANCELLING] = max(scale[CANCELLING], model.attn.key_grad_l1)
    return out, scale


def run_torch_encoder_layer(spec, inputs):
    """The same layer as nn.TransformerEncoderLayer (dropout 0, separate
    projections packed into in_proj); same outputs as run_torch."""
    E = spec.embed
    if spec.activation == "relu":
        act = "relu"
    elif spec.activation == "gelu":
        act = "gelu"
    else:
        def act(t):
            return F.gelu(t, approximate="tanh")
    layer = nn.TransformerEncoderLayer(
        E, spec.heads, dim_feedforward=spec.ffn, dropout=0.0, activation=act,
        layer_norm_eps=spec.eps, batch_first=True,
        norm_first=spec.norm == "pre", dtype=torch.float64)
    layer.train(spec.training)
    t = {n: torch.from_numpy(v) for n, v in inputs.items()}
    with torch.no_grad():
        sa = layer.self_attn
        sa.in_proj_weight.copy_(torch.cat([t["wq"], t["wk"], t["wv"]]))
        sa.in_proj_bias.copy_(torch.cat([t["bq"], t["bk"], t["bv"]]))
        sa.out_proj.weight.copy_(t["wo"])
        sa.out_proj.bias.copy_(t["bo"])
        layer.linear1.weight.copy_(t["w1"])
        layer.linear1.bias.copy_(t["b1"])
        layer.linear2.weight.copy_(t["w2"])
        layer.linear2.bias.copy_(t["b2"])
        layer.norm1.weight.copy_(t["ln1_scale"])
        layer.norm1.bias.copy_(t["ln1_bias"])
        layer.norm2.weight.copy_(t["ln2_scale"])
        layer.norm2.bias.copy_(t["ln2_bias"])
    x = t["x"].clone().requires_grad_(spec.training)
    mask = None
    if spec.causal:
        mask = nn.Transformer.generate_square_subsequent_mask(
            spec.seq, dtype=torch.float64)
    with torch.set_grad_enabled(spec.training):
        y = layer(x, src_mask=mask, is_causal=spec.causal)
    out = {"y": y.detach().numpy()}
    if spec.training:
        (y * t["dy"]).sum().backward()
        out["d_x"] = x.grad.numpy()
        E3 = [slice(0, E), slice(E, 2 * E), slice(2 * E, 3 * E)]
        gw, gb = sa.in_proj_weight.grad, sa.in_proj_bias.grad
        for part, s in zip("qkv", E3):
            out["d_w" + part] = gw[s].numpy()
            out["d_b" + part] = gb[s].numpy()
        for name, p in [("wo", sa.out_proj.weight), ("bo", sa.out_proj.bias),
                        ("w1", layer.linear1.weight),
                        ("b1", layer.linear1.bias),
                        ("w2", layer.linear2.weight),
                        ("b2", layer.linear2.bias),
                        ("ln1_scale", layer.norm1.weight),
                        ("ln1_bias", layer.norm1.bias),
                        ("ln2_scale", layer.norm2.weight),
                        ("ln2_bias", layer.norm2.bias)]:
            out["d_" + name] = p.grad.numpy()
    return out


# ---------------------------------------------------------------------------
# Comparison.


def rel_err(got, want, scale):
    if got.shape != want.shape:
        return math.inf
    got = got.astype(np.float64)
    if not np.all(np.isfinite(got)):
        return math.inf
    return float(np.abs(got - want).max() / scale)


def compare(label, expected, scale, outputs_dir, tol):
    """Per-tensor errors of OUTPUTS_DIR/*.npy against EXPECTED; prints one
    line each; returns (worst error, worst tensor, failures)."""
    failures, worst, worst_name = [], 0.0, "-"
    present = sorted(f[:-4] for f in os.listdir(outputs_dir)
                     if f.endswith(".npy"))
    for extra in sorted(set(present) - set(expected)):
        failures.append(extra)
        print("  FAIL %-6s %-10s unexpected output file" % (label, extra))
    for name in sorted(expected, key=lambda n: (n != "y", n)):
        if name not in present:
            failures.append(name)
            print("  FAIL %-6s %-10s missing output" % (label, name))
            worst, worst_name = math.inf, name
            continue
        got = np.load(os.path.join(outputs_dir, name + ".npy"))
        err = rel_err(got, expected[name], scale[name])
        ok = err <= tol
        if not ok:
            failures.append(name)
        if err >= worst:
            worst, worst_name = err, name
        print("  %s %-6s %-10s rel err %.3e (max|torch| %.3e, scale %.3e, "
              "tol %.0e)" % ("ok  " if ok else "FAIL", label, name, err,
                             np.abs(expected[name]).max(), scale[name], tol))
    return worst, worst_name, failures


def run_sluicec(sluicec, spec, inputs_dir, outputs_dir, backend, seed):
    cmd = [sluicec, "run", spec.path, "--inputs", inputs_dir, "--outputs",
           outputs_dir, "--seed", str(seed)]
    cmd += {"ref64": ["--precision", "f64"], "ref32": ["--precision", "f32"],
            "cpu": ["--backend", "cpu"]}[backend]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)
    if proc.returncode != 0:
        print("  FAIL %-6s `%s` exited with status %d:\n%s"
              % (backend, " ".join(cmd), proc.returncode,
                 proc.stdout.rstrip()))
        return False
    return True


def check_spec(path, args, work):
    spec, message = load_spec(path, args.sluicec)
    if spec is None:
        print("crosscheck_torch.py: error: " + message)
        return {"name": path, "ok": False, "error": message}
    spec = without_dropout(spec, work)
    print("== %s (%s-LN, %s%s, %s, %s, B=%d S=%d H=%d P=%d E=%d U=%d, "
          "eps %g)" % (spec.name, spec.norm, spec.activation,
                       ", causal" if spec.causal else "", spec.dtype,
                       "training" if spec.training else "inference",
                       spec.batch, spec.seq, spec.heads, spec.head_dim,
                       spec.embed, spec.ffn, spec.eps))
    case = os.path.join(work, spec.name)
    inputs_dir = os.path.join(case, "in")
    inputs = make_inputs(spec, args.data_seed)
    save_inputs(inputs, spec, inputs_dir)

    expected, scale = run_torch(spec, inputs)
    result = {"name": spec.name, "dtype": spec.dtype, "ok": True}
    tel = run_torch_encoder_layer(spec, inputs)
    tel_worst = max(rel_err(tel[n], expected[n], scale[n]) for n in expected)
    tel_ok = tel_worst <= TORCH_VS_TORCH_TOL
    print("  %s torch module vs nn.TransformerEncoderLayer: worst rel err "
          "%.3e (tol %.0e)" % ("ok  " if tel_ok else "FAIL", tel_worst,
                               TORCH_VS_TORCH_TOL))
    result["tel"] = tel_worst
    result["ok"] &= tel_ok

    for backend in args.backends:
        outputs_dir = os.path.join(case, "out-" + backend)
        if os.path.exists(outputs_dir):
            shutil.rmtree(outputs_dir)
        if not run_sluicec(args.sluicec, spec, inputs_dir, outputs_dir,
                           backend, args.seed):
            result[backend] = (math.inf, "sluicec failed")
            result["ok"] = False
            continue
        tol = TOLERANCE[backend][spec.dtype]
        worst, worst_name, failures = compare(backend, expected, scale,
                                              outputs_dir, tol)
        result[backend] = (worst, worst_name)
        if failures:
            result["ok"] = False
            print("  error: %s disagrees with torch on: %s"
                  % (backend, ", ".join(failures)))
            if backend == "cpu" and diagnose_cpu(
                    args, spec, inputs_dir, outputs_dir, case, expected,
                    failures):
                result["rounding"] = True
    return result


def diagnose_cpu(args, spec, inputs_dir, cpu_dir, case, expected, failures):
    """Says whether the CPU module's failing tensors are those of the f32
    interpreter (rounding of the spec's storage dtype) or its own; true when
    every one is the interpreter's."""
    ref32_dir = os.path.join(case, "diagnose-ref32")
    if os.path.exists(ref32_dir):
        shutil.rmtree(ref32_dir)
    if not run_sluicec(args.sluicec, spec, inputs_dir, ref32_dir, "ref32",
                       args.seed):
        return False
    all_same = True
    for name in failures:
        paths = [os.path.join(d, name + ".npy") for d in (cpu_dir, ref32_dir)]
        if name not in expected or not all(map(os.path.exists, paths)):
            all_same = False
            continue
        cpu, ref32 = (np.load(p).astype(np.float64) for p in paths)
        if cpu.shape != ref32.shape:
            all_same = False
            continue
        diff = float(np.abs(cpu - ref32).max() /
                     max(np.abs(expected[name]).max(), FLOOR))
        same = diff <= SAME_ROUNDING
        all_same &= same
        print("  diagnosis: cpu %s vs `sluicec run --precision f32`: %.3e "
              "-> %s" % (name, diff, "the f32 interpreter rounds the same "
                         "way (compute/storage rounding, not the emitted "
                         "code)" if same else "the CPU module differs from "
                         "the f32 interpreter (look at the emitted code)"))
    return all_same


def print_table(results, backends):
    print()
    header = "| layer | dtype | torch vs TEL |" + "".join(
        " %s worst (tensor) |" % b for b in backends) + " result |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for r in results:
        if "error" in r:
            print("| %s | | |%s FAIL: %s |" % (r["name"], " |" * len(backends),
                                               r["error"]))
            continue
        cells = []
        for b in backends:
            worst, name = r[b]
            cells.append(" %.2e (%s) |" % (worst, name) if worst != math.inf
                         else " %s |" % name)
        print("| %s | %s | %.1e |%s %s |" % (r["name"], r["dtype"], r["tel"],
                                             "".join(cells),
                                             "pass" if r["ok"] else
                                             "FAIL (cpu = f32 interpreter)"
                                             if r.get("rounding") else "FAIL"))


def default_sluicec():
    if os.environ.get("SLUICEC"):
        return os.environ["SLUICEC"]
    return os.path.join(REPO, "build", "bin", "sluicec")


def write_suite(directory):
    os.makedirs(directory, exist_ok=True)
    paths = []
    for data in SUITE:
        path = os.path.join(directory, data["name"] + ".json")
        with open(path, "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
        paths.append(path)
    return paths


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("specs", nargs="*", metavar="SPEC.json")
    parser.add_argument("--suite", action="store_true",
                        help="also run the built-in configurations")
    parser.add_argument("--write-suite", metavar="DIR",
                        help="write the built-in specs to DIR and exit")
    parser.add_argument("--sluicec", default=default_sluicec(),
                        help="the sluicec to run (default $SLUICEC or "
                        "build/bin/sluicec)")
    parser.add_argument("--backends", default="ref64,cpu",
                        help="comma-separated: ref64 (interpreter, f64), "
                        "cpu (compiled CPU module); default both")
    parser.add_argument("--work", metavar="DIR",
                        help="keep inputs and outputs here (default: a "
                        "temporary directory, removed afterwards)")
    parser.add_argument("--data-seed", type=int, default=1,
                        help="seed of the random inputs")
    parser.add_argument("--mutate", choices=sorted(MUTATIONS),
                        help="change the torch layer on purpose (a run must "
                        "then fail):\n" + "\n".join(
                            "  %s: %s" % kv for kv in sorted(
                                MUTATIONS.items())))
    parser.add_argument("--seed", type=int, default=5,
                        help="sluicec's dropout seed (dropout is off)")
    args = parser.parse_args()

    if args.write_suite:
        for path in write_suite(args.write_suite):
            print(path)
        return 0
    args.backends = [b for b in args.backends.split(",") if b]
    for b in args.backends:
        if b not in TOLERANCE:
            parser.error("--backends: unknown backend '%s'; allowed: %s"
                         % (b, ", ".join(sorted(TOLERANCE))))
    if not args.specs and not args.suite:
        parser.error("give SPEC.json files, --suite or --write-suite DIR")
    if not (os.path.isfile(args.sluicec) and os.access(args.sluicec,
                                                       os.X_OK)):
        parser.error("--sluicec: '%s' is not an executable file; build it "
                     "or pass --sluicec PATH" % args.sluicec)

    global MUTATION
    MUTATION = args.mutate
    if MUTATION:
        print("note: --mutate %s: %s; the comparisons below are expected to "
              "fail" % (MUTATION, MUTATIONS[MUTATION]))
    torch.set_default_dtype(torch.float64)
    work = args.work or tempfile.mkdtemp(prefix="crosscheck_torch.")
    os.makedirs(work, exist_ok=True)
    specs = list(args.specs)
    if args.suite:
        specs += write_suite(os.path.join(work, "specs"))
    results = [check_spec(path, args, work) for path in specs]
    if not args.work:
        shutil.rmtree(work)
    print_table(results, args.backends)
    failed = [r["name"] for r in results if not r["ok"]]
    print("%d passed, %d failed" % (len(results) - len(failed), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
