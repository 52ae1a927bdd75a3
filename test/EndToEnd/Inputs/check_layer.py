"""The end-to-end oracle of `sluicec run` (docs/Testing.md).

  check_layer.py make  --spec SPEC --dir DIR [--data-seed N] [--npy f4|f8]
                       [--bad-shape NAME]
      Writes DIR/<name>.npy for every boundary input of SPEC (and dy for a
      training spec): random values, rounded to float32, small magnitudes.
      --bad-shape NAME writes NAME with one extra element on its last axis.

  check_layer.py check --spec SPEC --inputs DIR --outputs DIR --seed N
                       --precision f64|f32 [--tol T]
      Recomputes the layer with the numpy reference (reference_layer.py)
      from the same inputs and dropout seed, and compares y.npy and, for a
      training spec, every d_<name>.npy. Per tensor: max|sluice - ref| /
      max(max|ref|, tiny) must be <= T (default 1e-10 for f64, 1e-4 for
      f32). The outputs directory must hold exactly the expected files, each
      of the expected shape and npy dtype ('<f8' for f64, '<f4' for f32).
      Prints one line per tensor; exits 1 naming every failing tensor.

  check_layer.py differ A.npy B.npy
      Exits 1 unless the two arrays have the same shape and differ.

  check_layer.py selftest --spec SPEC [--seed N]
      Checks the numpy Philox against Random123's known-answer vectors and
      the hand-written backward against central finite differences.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_layer as ref  # noqa: E402

# The denominator of the relative error is max(max|ref|, FLOOR): a gradient
# that is zero in exact arithmetic (d_bk: adding a constant to every key
# shifts each softmax row uniformly) is compared absolutely, against the
# rounding noise of its O(1) inputs.
FLOOR = 1e-2


def make_inputs(spec, data_seed):
    rng = np.random.default_rng(data_seed)
    inputs = {}
    for name, shape in spec.shapes().items():
        if name in ("x", "dy"):
            values = rng.normal(0.0, 1.0, shape)
        elif name in ("ln1_scale", "ln2_scale"):
            values = 1.0 + rng.normal(0.0, 0.3, shape)
        else:
            values = rng.normal(0.0, 0.3, shape)
        inputs[name] = values.astype(np.float32).astype(np.float64)
    return inputs


def cmd_make(args):
    spec = ref.Spec(args.spec)
    inputs = make_inputs(spec, args.data_seed)
    os.makedirs(args.dir, exist_ok=True)
    dtype = np.float32 if args.npy == "f4" else np.float64
    for name, values in inputs.items():
        if name == args.bad_shape:
            pad = [(0, 0)] * (values.ndim - 1) + [(0, 1)]
            values = np.pad(values, pad)
        np.save(os.path.join(args.dir, name + ".npy"), values.astype(dtype))
    if args.bad_shape and args.bad_shape not in inputs:
        print("error: --bad-shape %s: no such input" % args.bad_shape)
        return 1
    return 0


def cmd_check(args):
    spec = ref.Spec(args.spec)
    tol = args.tol if args.tol is not None else (
        1e-10 if args.precision == "f64" else 1e-4)
    shapes = spec.shapes()
    inputs = {n: np.load(os.path.join(args.inputs, n + ".npy")).astype(
        np.float64) for n in shapes}
    expected = ref.run_layer(spec, inputs, args.seed)
    want_dtype = np.dtype("<f8" if args.precision == "f64" else "<f4")

    failures = []
    present = sorted(f for f in os.listdir(args.outputs) if f.endswith(".npy"))
    wanted = sorted(n + ".npy" for n in expected)
    for extra in sorted(set(present) - set(wanted)):
        failures.append(extra[:-4])
        print("FAIL %s: unexpected output file" % extra)
    for name in sorted(expected, key=lambda n: (n != "y", n)):
        path = os.path.join(args.outputs, name + ".npy")
        if not os.path.exists(path):
            failures.append(name)
            print("FAIL %-10s missing output %s" % (name, path))
            continue
        got = np.load(path)
        want = expected[name]
        if got.dtype != want_dtype or got.shape != want.shape:
            failures.append(name)
            print("FAIL %-10s dtype %s shape %s, expected dtype %s shape %s"
                  % (name, got.dtype.str, got.shape, want_dtype.str,
                     want.shape))
            continue
        got = got.astype(np.float64)
        scale = max(np.abs(want).max(), FLOOR)
        if not np.all(np.isfinite(got)):
            err = np.inf
        else:
            err = np.abs(got - want).max() / scale
        ok = err <= tol
        print("%s %-10s rel err %.3e (max|ref| %.3e, tol %.0e)"
              % ("ok  " if ok else "FAIL", name, err, scale, tol))
        if not ok:
            failures.append(name)
    if failures:
        print("error: %s disagree%s with the numpy reference: %s"
              % (args.outputs, "" if len(failures) > 1 else "s",
                 ", ".join(failures)))
        return 1
    print("all %d outputs agree with the numpy reference" % len(expected))
    return 0


def cmd_differ(args):
    a, b = np.load(args.a), np.load(args.b)
    if a.shape != b.shape:
        print("error: shapes differ: %s vs %s" % (a.shape, b.shape))
        return 1
    diff = np.abs(a.astype(np.float64) - b.astype(np.float64)).max()
    print("max difference %.3e" % diff)
    if diff == 0:
        print("error: %s and %s are identical" % (args.a, args.b))
        return 1
    return 0


def cmd_selftest(args):
    ref.check_philox()
    print("philox: %d known-answer vectors ok" % len(ref.PHILOX_KAT))
    spec = ref.Spec(args.spec)
    if not spec.training:
        print("error: selftest needs a training spec")
        return 1
    inputs = make_inputs(spec, 0)
    worst, report = ref.finite_difference_check(spec, inputs, args.seed)
    for name, err in report.items():
        print("fd %-10s rel err %.3e" % (name, err))
    if worst > 1e-6:
        print("error: the hand-written backward disagrees with finite "
              "differences (worst %.3e)" % worst)
        return 1
    print("backward agrees with finite differences (worst %.3e)" % worst)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("make")
    p.add_argument("--spec", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--data-seed", type=int, default=0)
    p.add_argument("--npy", choices=["f4", "f8"], default="f8")
    p.add_argument("--bad-shape")
    p = sub.add_parser("check")
    p.add_argument("--spec", required=True)
    p.add_argument("--inputs", required=True)
    p.add_argument("--outputs", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--precision", choices=["f64", "f32"], required=True)
    p.add_argument("--tol", type=float)
    p = sub.add_parser("differ")
    p.add_argument("a")
    p.add_argument("b")
    p = sub.add_parser("selftest")
    p.add_argument("--spec", required=True)
    p.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    return {"make": cmd_make, "check": cmd_check, "differ": cmd_differ,
            "selftest": cmd_selftest}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
