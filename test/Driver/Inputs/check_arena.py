"""Checks the memory plan in a report.json (docs/MemoryPlan.md) without
trusting the compiler: offsets aligned, saved buffers in the saved region and
the others in the scratch region, no two buffers of a region that live at the
same step share a byte, each region's size = its highest end, peak = their
sum, the no-reuse figure = the sum of the aligned sizes, lower bound <= peak
<= no-reuse. Prints a summary."""
import json
import sys

ALIGN = 256
report = json.load(open(sys.argv[1]))
arena = report["arena"]
totals = report["totals"]


def aligned(n):
    return (n + ALIGN - 1) // ALIGN * ALIGN


for b in arena:
    assert b["offset"] % ALIGN == 0, b
    assert b["bytes"] > 0, b
    assert b["first_step"] <= b["last_step"], b
for b in arena:
    assert b["region"] == ("saved" if b["saved"] else "scratch"), b
for i, a in enumerate(arena):
    for b in arena[i + 1:]:
        if a["region"] == b["region"] and a["first_step"] <= b["last_step"] and b["first_step"] <= a["last_step"]:
            disjoint = (a["offset"] + aligned(a["bytes"]) <= b["offset"] or
                        b["offset"] + aligned(b["bytes"]) <= a["offset"])
            assert disjoint, (a, b)
regions = {}
for region in ("saved", "scratch"):
    regions[region] = max((b["offset"] + aligned(b["bytes"]) for b in arena
                           if b["region"] == region), default=0)
    assert totals[region + "_bytes"] == regions[region], (region, totals)
peak = regions["saved"] + regions["scratch"]
assert totals["peak_bytes"] == peak, (totals["peak_bytes"], peak)
total = sum(aligned(b["bytes"]) for b in arena)
assert totals["arena_bytes_without_reuse"] == total
live = max((sum(aligned(b["bytes"]) for b in arena
                if b["first_step"] <= s <= b["last_step"])
            for s in range(max((b["last_step"] for b in arena), default=-1) + 1)),
           default=0)
assert totals["arena_lower_bound_bytes"] == live, (totals["arena_lower_bound_bytes"], live)
assert live <= peak <= total
keys = [(b["graph"], b["name"]) for b in arena]
assert len(set(keys)) == len(keys), "a buffer name repeats within a graph"
saved = [b for b in arena if b["saved"]]
assert all(b["name"].startswith("saved.") for b in saved)
assert all(b["graph"].endswith("_forward") for b in saved)
print(f"buffers: {len(arena)}, saved: {len(saved)}")
print("reuse" if peak < total else "no reuse")
print("valid")
