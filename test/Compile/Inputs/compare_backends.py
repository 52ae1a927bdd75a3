"""Compares `sluicec run` backends (docs/Compile.md, docs/Testing.md).

  compare_backends.py make --spec SPEC --dir DIR [--data-seed N]
      Writes DIR/<name>.npy for every boundary input of SPEC (the random
      values of EndToEnd/Inputs/check_layer.py), rounded to the spec's dtype
      so that every backend starts from the same numbers.

  compare_backends.py compare (--spec SPEC | --dtype D) ACTUAL EXPECTED [--tol T]
                              [--scale TENSOR=OTHER ...]
      Every .npy of EXPECTED (the reference backend's outputs) must be in
      ACTUAL with the same shape, and no other: per tensor,
      max|actual - expected| / max(max|expected|, 1e-2) <= T (default by the
      spec's dtype: f32 1e-4, f16 2e-2, bf16 6e-2). Prints one line per
      tensor; exits 1 naming every failing tensor.
      --scale TENSOR=OTHER measures TENSOR against max|OTHER| of EXPECTED
      instead of its own: for d_bk, which is zero in exact arithmetic (a
      constant added to every key shifts each softmax row uniformly), so
      both sides hold only rounding noise of a sum of terms of the size of
      the other projections' gradients (`--scale d_bk=d_bq`). Beyond tiny
      layers the 1e-2 floor no longer covers that noise.
"""

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "EndToEnd", "Inputs"))
import check_layer  # noqa: E402
import reference_layer as ref  # noqa: E402

FLOOR = 1e-2
TOLERANCE = {"f32": 1e-4, "f16": 2e-2, "bf16": 6e-2}


def spec_dtype(path):
    with open(path) as f:
        return json.load(f).get("dtype", "f32")


def round_to(values, dtype):
    if dtype == "f16":
        return values.astype(np.float16).astype(np.float64)
    if dtype == "bf16":
        bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
        # Round to nearest, ties to even, on the top 16 bits.
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    return values.astype(np.float32).astype(np.float64)


def cmd_make(args):
    spec = ref.Spec(args.spec)
    dtype = spec_dtype(args.spec)
    os.makedirs(args.dir, exist_ok=True)
    for name, values in check_layer.make_inputs(spec, args.data_seed).items():
        np.save(os.path.join(args.dir, name + ".npy"), round_to(values, dtype))
    return 0


def cmd_compare(args):
    dtype = spec_dtype(args.spec) if args.spec else args.dtype
    tol = args.tol if args.tol is not None else TOLERANCE[dtype]
    scale_of = {}
    for pair in args.scale or []:
        tensor, _, other = pair.partition("=")
        if not tensor or not other:
            print("error: --scale expects TENSOR=OTHER, got '%s'" % pair)
            return 1
        scale_of[tensor] = other
    for directory in (args.actual, args.expected):
        if not os.path.isdir(directory):
            print("error: %s is not a directory" % directory)
            return 1
    expected = sorted(f for f in os.listdir(args.expected) if f.endswith(".npy"))
    actual = sorted(f for f in os.listdir(args.actual) if f.endswith(".npy"))
    failed = []
    for extra in sorted(set(actual) - set(expected)):
        print("FAIL %s: not written by the reference" % extra[:-4])
        failed.append(extra[:-4])
    for name in expected:
        tensor = name[:-4]
        if name not in actual:
            print("FAIL %s: missing output" % tensor)
            failed.append(tensor)
            continue
        a = np.load(os.path.join(args.actual, name)).astype(np.float64)
        e = np.load(os.path.join(args.expected, name)).astype(np.float64)
        if a.shape != e.shape:
            print("FAIL %s: shape %s, expected %s" % (tensor, a.shape, e.shape))
            failed.append(tensor)
            continue
        if not np.all(np.isfinite(a)):
            print("FAIL %s: not finite" % tensor)
            failed.append(tensor)
            continue
        scale = np.max(np.abs(e))
        if tensor in scale_of:
            other = os.path.join(args.expected, scale_of[tensor] + ".npy")
            if not os.path.exists(other):
                print("FAIL %s: scale tensor %s is not in %s" %
                      (tensor, scale_of[tensor], args.expected))
                failed.append(tensor)
                continue
            scale = np.max(np.abs(np.load(other).astype(np.float64)))
        err = np.max(np.abs(a - e)) / max(scale, FLOOR)
        status = "ok" if err <= tol else "FAIL"
        print("%s %s rel err %.3g (tol %g)" % (status, tensor, err, tol))
        if err > tol:
            failed.append(tensor)
    if failed:
        print("error: %s disagree with %s: %s" %
              (args.actual, args.expected, ", ".join(failed)))
        return 1
    print("all %d outputs agree" % len(expected))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("make")
    p.add_argument("--spec", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--data-seed", type=int, default=0)
    p = sub.add_parser("compare")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--spec")
    which.add_argument("--dtype", choices=sorted(TOLERANCE))
    p.add_argument("actual")
    p.add_argument("expected")
    p.add_argument("--tol", type=float)
    p.add_argument("--scale", action="append", metavar="TENSOR=OTHER")
    args = parser.parse_args()
    return {"make": cmd_make, "compare": cmd_compare}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
