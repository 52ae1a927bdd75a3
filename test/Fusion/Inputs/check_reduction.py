#!/usr/bin/env python3
"""Checks sluicec's data-movement report on BERT-shaped training layers that
are not in examples/.

For each layer it writes a spec, runs `sluicec SPEC -o DIR`, and checks from
report.json that
  * fusion moves at least MIN_REDUCTION percent fewer bytes than the baseline,
  * totals.bytes is the sum of the ops' bytes, and the phases add up,
  * lower_bound_bytes <= bytes <= baseline_bytes (in total and per phase),
  * the forward baseline agrees within 2% with an independent closed-form
    estimate written from the baseline's definition (one kernel per composite
    op, each reading its inputs and writing its outputs once), from the spec's
    dims alone.

Usage: check_reduction.py SLUICEC WORKDIR
"""

import json
import os
import subprocess
import sys

MIN_REDUCTION = 22.91
BASELINE_TOLERANCE = 0.02

# (name, batch, seq, embed, heads, ffn, dtype, norm, causal)
LAYERS = [
    ("b16_s256_e1024", 16, 256, 1024, 16, 4096, "f16", "post", False),
    ("b16_s256_e1024_pre", 16, 256, 1024, 16, 4096, "f32", "pre", False),
    ("b2_s1024_e2048", 2, 1024, 2048, 32, 8192, "f16", "post", False),
    ("b2_s1024_e2048_pre", 2, 1024, 2048, 32, 8192, "f16", "pre", False),
    ("b32_s64_e512", 32, 64, 512, 8, 2048, "f32", "post", False),
    ("b32_s64_e512_pre_causal", 32, 64, 512, 8, 2048, "f16", "pre", True),
    ("b4_s128_e768", 4, 128, 768, 12, 3072, "f16", "post", False),
    # Below the bar until layout selection was on by default (at seq 128 the
    # attention scores are small next to the activations; the relayouts it
    # removes closed the gap).
    ("b4_s128_e768_f32", 4, 128, 768, 12, 3072, "f32", "post", False),
]

# Layers where fusion is known to save less than MIN_REDUCTION (a gap of the
# pass, reported to the lead). Everything else is checked as for LAYERS; the
# reduction must stay below the bar, so that this test fails (and the layer
# moves to LAYERS) once the pass closes the gap. None today.
KNOWN_BELOW_BAR = [
]

DROPOUT = 0.1
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2}
STAT_BYTES = 4  # layernorm mean and rstd are f32


def forward_baseline(b, s, e, h, u, dtype, causal):
    """Bytes a framework moves running the forward layer one kernel per
    composite op: every op reads each input once and writes each output once.
    """
    w = ELEMENT_BYTES[dtype]
    act = b * s * e  # [b, seq, embed] activations
    hid = b * s * u  # [b, seq, ffn] activations
    scores = b * h * s * s  # [b, heads, seq, seq]
    rows = b * s  # layernorm statistics [b, seq]

    def elems(n):
        return n * w

    total = 0
    # Q, K, V projections: read x and the weight, write q/k/v.
    total += 3 * elems(act + e * e + act)
    # Their bias adds: read the projection and the bias, write the sum.
    total += 3 * elems(act + e + act)
    # QK^T: read q and k, write the scores.
    total += elems(2 * act + scores)
    # The causal mask (GPT): read the scores, write the masked scores.
    if causal:
        total += elems(2 * scores)
    # Softmax: read the scores, write the probabilities.
    total += elems(2 * scores)
    # Attention dropout: read the probabilities, write the output and a mask.
    total += elems(3 * scores)
    # Attention x V: read the probabilities and v, write the context.
    total += elems(scores + act + act)
    # Output projection and its bias.
    total += elems(act + e * e + act)
    total += elems(act + e + act)
    # FFN: ffn1, its bias, the activation, its dropout, ffn2, its bias.
    total += elems(act + u * e + hid)
    total += elems(hid + u + hid)
    total += elems(2 * hid)
    total += elems(3 * hid)
    total += elems(hid + u * e + act)
    total += elems(act + e + act)
    # Two residual sites: dropout (read, write output and mask), residual add
    # (read two, write one), layernorm (read the input, scale and bias; write
    # the output and the f32 mean and rstd).
    for _ in range(2):
        total += elems(3 * act)
        total += elems(3 * act)
        total += elems(act + 2 * e + act) + 2 * rows * STAT_BYTES
    return total


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def check_layer(sluicec, workdir, layer, meets_bar=True):
    name, b, s, e, h, u, dtype, norm, causal = layer
    spec = {
        "name": name,
        "norm": norm,
        "causal": causal,
        "dims": {"batch": b, "seq": s, "heads": h, "embed": e, "ffn": u},
        "activation": "gelu",
        "dropout": {"attention": DROPOUT, "residual": DROPOUT,
                    "activation": DROPOUT},
        "dtype": dtype,
        "training": True,
    }
    spec_path = os.path.join(workdir, name + ".json")
    out_dir = os.path.join(workdir, name)
    with open(spec_path, "w") as f:
        json.dump(spec, f)
    subprocess.run([sluicec, spec_path, "-o", out_dir], check=True,
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(out_dir, "report.json")) as f:
        report = json.load(f)
    totals = report["totals"]
    phases = totals["by_phase"]

    reduction = totals["reduction_percent"]
    print("%s: reduction_percent %.2f" % (name, reduction))
    if meets_bar and not reduction >= MIN_REDUCTION:
        fail("%s: reduction %.4f%% is below %.2f%%" %
             (name, reduction, MIN_REDUCTION))
    if not meets_bar:
        if reduction >= MIN_REDUCTION:
            fail("%s: reduction %.4f%% now meets the %.2f%% bar: move the "
                 "layer from KNOWN_BELOW_BAR to LAYERS" %
                 (name, reduction, MIN_REDUCTION))
        print("%s: known gap: below the %.2f%% bar" % (name, MIN_REDUCTION))
    expected = 100.0 * (1 - totals["bytes"] / totals["baseline_bytes"])
    if abs(expected - reduction) > 1e-9:
        fail("%s: reduction_percent %.6f is not 1 - bytes/baseline = %.6f" %
             (name, reduction, expected))

    # The ops' bytes add up to the totals, per phase and in all.
    op_sum = {"forward": 0, "backward": 0}
    for op in report["ops"]:
        if op["bytes_read"] + op["bytes_written"] != op.get(
                "bytes", op["bytes_read"] + op["bytes_written"]):
            fail("%s: op %s bytes != read + written" % (name, op["name"]))
        op_sum[op["phase"]] += op["bytes_read"] + op["bytes_written"]
    if sum(op_sum.values()) != totals["bytes"]:
        fail("%s: the ops move %d bytes, totals.bytes says %d" %
             (name, sum(op_sum.values()), totals["bytes"]))
    if totals["bytes"] != totals["bytes_read"] + totals["bytes_written"]:
        fail("%s: totals.bytes != bytes_read + bytes_written" % name)
    for key in ("bytes", "bytes_read", "bytes_written", "flop",
                "baseline_bytes", "lower_bound_bytes"):
        parts = phases["forward"][key] + phases["backward"][key]
        if parts != totals[key]:
            fail("%s: by_phase %s add up to %d, totals say %d" %
                 (name, key, parts, totals[key]))
    for phase in ("forward", "backward"):
        if op_sum[phase] != phases[phase]["bytes"]:
            fail("%s: the %s ops move %d bytes, by_phase says %d" %
                 (name, phase, op_sum[phase], phases[phase]["bytes"]))

    # The lower bound <= what moves <= the baseline.
    for scope, numbers in [("total", totals)] + sorted(phases.items()):
        low, moved, base = (numbers["lower_bound_bytes"], numbers["bytes"],
                            numbers["baseline_bytes"])
        if not (0 < low <= moved <= base):
            fail("%s: %s: expected 0 < lower bound %d <= bytes %d <= "
                 "baseline %d" % (name, scope, low, moved, base))

    # The forward baseline against the closed form.
    tool = phases["forward"]["baseline_bytes"]
    estimate = forward_baseline(b, s, e, h, u, dtype, causal)
    deviation = abs(tool - estimate) / estimate
    print("%s: forward baseline: sluicec %d, closed form %d (%.3f%% apart)" %
          (name, tool, estimate, 100.0 * deviation))
    if deviation > BASELINE_TOLERANCE:
        fail("%s: the forward baseline %d is %.2f%% away from the closed "
             "form %d" % (name, tool, 100.0 * deviation, estimate))


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sluicec, workdir = sys.argv[1], sys.argv[2]
    os.makedirs(workdir, exist_ok=True)
    norms = set()
    for layer in LAYERS:
        check_layer(sluicec, workdir, layer)
        norms.add(layer[7])
    if norms != {"post", "pre"}:
        fail("expected post-LN and pre-LN layers, got %s" % sorted(norms))
    for layer in KNOWN_BELOW_BAR:
        check_layer(sluicec, workdir, layer, meets_bar=False)
    print("OK: %d layers at or above the bar, %d known below it" %
          (len(LAYERS), len(KNOWN_BELOW_BAR)))


if __name__ == "__main__":
    main()
