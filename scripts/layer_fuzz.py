#!/usr/bin/python3
"""Random layers, random pass options: the CPU module against the reference.

  scripts/layer_fuzz.py [--sluicec build/bin/sluicec] [--count N] [--seed S]
                        [--work DIR] [--keep]

Each case draws a small layer spec (post/pre norm, layernorm or rmsnorm,
causal or not, biases or not, relu / gelu / gelu_tanh / silu / swiglu,
rotary, grouped-query heads, dropout 0 / 0.1 / 0.5 per site, f32 / f16 /
bf16, training or inference, sizes from 1 to the streaming kernels' tile
boundaries: sequences of 1 to 130, widths up to 128) and a random subset of
the pass options (--fuse, --fuse-streaming, --select-layouts,
--mask-policy, --accumulate-gemms, --fold-epilogues, --stack-contractions),
then:

  1. inputs from the compiled layer's own signature (`--emit=input-ir`:
     every boundary input's name and shape, plus `dy` in training), random
     normal values scaled by fan-in, rounded to the layer's dtype;
  2. the reference interpreter (`sluicec run --precision f32`) on the
     unfused graph;
  3. the CPU module compiled with the drawn options (`--compile --no-cuda`),
     run on the same inputs and dropout seed;
  4. test/Compile/Inputs/compare_backends.py's comparison (the tolerances of
     the cpu-vs-reference tests; `d_bk` against `d_bq`); a tensor over the
     tolerance still passes if the module is within twice the f32
     reference's own error from the exact layer (`--precision f64`): the
     tolerance is relative to the tensor's own size, which rounding alone
     exceeds for small gradients of tiny half-precision layers.

So every fusion, layout, epilogue and mask decision the options reach is
checked numerically against an oracle that takes none of them. A failing
case's directory is kept (spec.json, in/, ref/, cpu/, the module) and a
line `FAIL case ...` prints the options to reproduce it; the exit status
is 1 if any case failed. Half-precision layers never draw relu: relu' flips
where rounding moves a pre-activation across 0, which is noise at these
sizes, not a bug. Gradients that are zero in exact arithmetic (d_bk; with a
sequence of 1 every q and k gradient) are measured against a sibling's size,
as in the cpu-vs-reference tests. docs/Testing.md ("Random layers").
"""

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
COMPARE = os.path.join(REPO, "test", "Compile", "Inputs", "compare_backends.py")
# Its rounding to the layer's dtype (round to nearest even, as the modules).
sys.path.insert(0, os.path.dirname(COMPARE))
from compare_backends import round_to  # noqa: E402

OPTIONS = [("--fuse", ["on", "off"]),
           ("--fuse-streaming", ["on", "off"]),
           ("--select-layouts", ["on", "off", "canonical"]),
           ("--mask-policy", ["auto", "regenerate", "bitpack"]),
           ("--accumulate-gemms", ["on", "off"]),
           ("--fold-epilogues", ["on", "off"]),
           ("--stack-contractions", ["on", "off"])]


def draw_case(rnd, name):
    """A spec and a list of sluicec options."""
    heads = rnd.choice([1, 2, 4])
    head_dim = rnd.choice([2, 4, 8, 16, 32])
    spec = {"name": name,
            "norm": rnd.choice(["pre", "post"]),
            "norm_type": rnd.choice(["layernorm", "rmsnorm"]),
            "causal": rnd.random() < 0.5,
            "bias": rnd.random() < 0.7,
            "dims": {"batch": rnd.choice([1, 2, 3]),
                     "seq": rnd.choice([1, 2, 5, 9, 17, 64, 77, 130]),
                     "heads": heads, "embed": heads * head_dim},
            "activation": rnd.choice(["relu", "gelu", "gelu_tanh", "silu",
                                      "swiglu"]),
            "dropout": {site: rnd.choice([0.0, 0.1, 0.5])
                        for site in ["attention", "residual", "activation"]},
            "dtype": rnd.choice(["f32", "f32", "f16", "bf16"]),
            "training": rnd.random() < 0.75}
    if spec["dtype"] != "f32" and spec["activation"] == "relu":
        spec["activation"] = "gelu"
    if rnd.random() < 0.3:
        spec["dims"]["ffn"] = rnd.choice([1, 3, 8, 24])
    if rnd.random() < 0.3:
        spec["dims"]["kv_heads"] = rnd.choice(
            [g for g in range(1, heads + 1) if heads % g == 0])
    if rnd.random() < 0.3:
        spec["rope"] = {"theta": rnd.choice([10000.0, 3.0])}
    options = ["%s=%s" % (option, rnd.choice(values))
               for option, values in OPTIONS if rnd.random() < 0.35]
    return spec, options


def make_inputs(sluicec, spec_path, spec, directory, seed):
    """Writes one .npy per boundary input named in the layer's signature."""
    ir = subprocess.run([sluicec, spec_path, "--emit=input-ir"],
                        capture_output=True, text=True, check=True).stdout
    signature = ir.split("sluice.graph", 1)[1].split("{\n", 1)[0]
    tensors = re.findall(
        r'sluice.name = "(\w+)", sluice.shape = array<i64: ([0-9, ]+)>',
        signature)
    if not tensors:
        raise RuntimeError("no boundary tensors in the signature of " +
                           spec_path)
    inputs, (_, y_shape) = tensors[:-1], tensors[-1]
    if spec["training"]:
        inputs.append(("dy", y_shape))
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(seed)
    for name, shape_text in inputs:
        shape = [int(v) for v in shape_text.split(",")]
        values = rng.standard_normal(shape)
        if name.startswith("w") and len(shape) == 2:
            values /= np.sqrt(shape[1])
        if name.endswith("_scale"):
            values = 1.0 + 0.1 * values
        np.save(os.path.join(directory, name + ".npy"),
                round_to(values, spec["dtype"]))


def run_case(sluicec, directory, spec, options, seed, cpu_seed):
    """None if the CPU module agrees with the reference, else what failed."""
    spec_path = os.path.join(directory, "spec.json")
    with open(spec_path, "w") as f:
        json.dump(spec, f, indent=1)
    make_inputs(sluicec, spec_path, spec, os.path.join(directory, "in"),
                seed)
    module = os.path.join(directory, "module")
    library = os.path.join(module, "lib%s_cpu.so" % spec["name"])
    scale = []
    if spec["training"]:
        # Gradients that are zero in exact arithmetic hold only rounding
        # noise, measured against a sibling of their size: d_bk always (a
        # constant added to every key shifts each softmax row uniformly);
        # with one key all of q's and k's (a softmax over one key is 1
        # whatever the score).
        if spec["dims"]["seq"] == 1:
            zero = ["d_wq", "d_wk"] + (["d_bq", "d_bk"] if spec["bias"]
                                       else [])
            scale = ["--scale=%s=d_wv" % name for name in zero]
        elif spec["bias"]:
            scale = ["--scale=d_bk=d_bq"]
    steps = [
        ("reference", [sluicec, "run", spec_path, "--inputs",
                       os.path.join(directory, "in"), "--outputs",
                       os.path.join(directory, "ref"), "--precision", "f32",
                       "--seed", str(seed)]),
        ("compile", [sluicec, spec_path, "-o", module, "--compile",
                     "--no-cuda", "--quiet"] + options),
        ("cpu", [sluicec, "run", spec_path, "--backend", "cpu", "--module",
                 library, "--inputs", os.path.join(directory, "in"),
                 "--outputs", os.path.join(directory, "cpu"), "--seed",
                 str(cpu_seed)]),
        ("compare", [sys.executable, COMPARE, "compare", "--spec", spec_path,
                     os.path.join(directory, "cpu"),
                     os.path.join(directory, "ref")] + scale),
    ]
    for step, command in steps:
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            lines = (result.stdout + result.stderr).strip().splitlines()
            failing = [l for l in lines if l.startswith(("FAIL", "error"))]
            if step == "compare":
                tensors = [l.split()[1] for l in lines
                           if l.startswith("FAIL ") and " rel err " in l]
                if len(tensors) == len(failing) - 1 and within_rounding(
                        sluicec, spec_path, directory, tensors, seed):
                    return None
            return "%s: %s" % (step, "; ".join(failing or lines[-3:]))
    return None


def within_rounding(sluicec, spec_path, directory, tensors, seed):
    """True if the CPU module is as close to the exact (f64) layer as the
    reference is on every tensor over the tolerance.

    The tolerance is relative to a tensor's own size, so a small gradient of
    a tiny half-precision layer (d_bq at width 4) can exceed it with rounding
    noise alone; the f32 reference, which rounds every tensor to the dtype as
    the module does, then misses the exact values by as much. A real defect
    (a wrong mask, index or epilogue) misses by the tensor's own size.
    """
    exact = os.path.join(directory, "ref64")
    result = subprocess.run(
        [sluicec, "run", spec_path, "--inputs", os.path.join(directory, "in"),
         "--outputs", exact, "--precision", "f64", "--seed", str(seed)],
        capture_output=True, text=True)
    if result.returncode != 0:
        return False
    for tensor in tensors:
        def load(kind):
            return np.load(os.path.join(directory, kind, tensor + ".npy")
                           ).astype(np.float64)
        truth = load("ref64")
        cpu_error = np.max(np.abs(load("cpu") - truth))
        reference_error = np.max(np.abs(load("ref") - truth))
        if not cpu_error <= 2.0 * reference_error:
            return False
        print("  %s: over the tolerance, but within twice the reference's own "
              "rounding error (%.3g vs %.3g from the f64 layer)" %
              (tensor, cpu_error, reference_error), flush=True)
    return True


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sluicec",
                        default=os.path.join(REPO, "build", "bin", "sluicec"))
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1,
                        help="draws the cases (and their inputs and masks)")
    parser.add_argument("--work", default="layer-fuzz",
                        help="where each case's files go (default: "
                        "./layer-fuzz)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the passing cases' files too")
    parser.add_argument("--cpu-seed-offset", type=int, default=0,
                        help="a self-check of the harness: the CPU module "
                        "draws its dropout masks from another seed, so every "
                        "case with dropout in training must fail")
    args = parser.parse_args()
    if not os.access(args.sluicec, os.X_OK):
        print("error: no sluicec at %s (build first, or pass --sluicec)" %
              args.sluicec)
        return 2
    rnd = random.Random(args.seed)
    failures = 0
    for index in range(args.count):
        name = "fuzz_s%d_%d" % (args.seed, index)
        spec, options = draw_case(rnd, name)
        directory = os.path.join(args.work, name)
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory)
        start = time.time()
        seed = args.seed * 1000 + index
        failure = run_case(args.sluicec, directory, spec, options, seed,
                           seed + args.cpu_seed_offset)
        summary = "%s %s %s" % (json.dumps(spec, separators=(",", ":")),
                                " ".join(options) or "(defaults)",
                                "%.1fs" % (time.time() - start))
        if failure:
            failures += 1
            print("FAIL case %s: %s\n  %s\n  kept in %s" %
                  (name, failure, summary, directory), flush=True)
        else:
            print("ok case %s: %s" % (name, summary), flush=True)
            if not args.keep:
                shutil.rmtree(directory)
    print("%d of %d cases agree with the reference" %
          (args.count - failures, args.count))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
