"""Prints, per file and phase of torch_layer_timer.py --split output,
whether each category has time (attention_other: softmax on the scores,
present in every layer) and whether the split adds up: categories to the
profiled phase per iteration, shares to one, scaled times to the timed
median, blas_fraction to the two BLAS shares (torch-layer-split.test)."""

import json
import os
import sys

CATEGORIES = ("gemm", "attention_gemm", "attention_other", "rest")


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(b))


for path in sys.argv[1:]:
    timer = json.load(open(path))
    for phase in timer["phases"]:
        split = phase["split"]
        n = split["iterations"]
        has = ", ".join("%s %s" % (c, all(v > 0 for v in split[c + "_ms"]))
                        for c in CATEGORIES)
        sums = all(close(sum(split[c + "_ms"][i] for c in CATEGORIES),
                         split["profiled_ms"][i]) for i in range(n))
        shares = close(sum(split["fractions"].values()), 1.0)
        scaled = close(sum(split["scaled_ms"].values()), phase["median_ms"])
        blas = close(split["blas_fraction"], split["fractions"]["gemm"] +
                     split["fractions"]["attention_gemm"])
        name = ".".join(os.path.basename(path).split(".")[-2:])
        print("%s %s: %d timed, %d profiled; %s; sums %s, shares %s, "
              "scaled %s, blas %s" % (
                  name, phase["phase"],
                  len(phase["samples_ms"]), n, has, sums, shares, scaled,
                  blas))
