"""Prints the sum of a report's contraction flops per phase, and checks the
report's internal consistency (totals = sums over ops)."""
import json
import sys

report = json.load(open(sys.argv[1]))
ops = report["ops"]
def contraction_flop(op):
    """A kernel's contraction flop are its contract members'."""
    if "members" in op:
        return sum(m["flop"] for m in op["members"] if m["class"] == "contraction")
    return op["flop"] if op["class"] == "contraction" else 0

for phase in ("forward", "backward"):
    flop = sum(contraction_flop(op) for op in ops if op["phase"] == phase)
    print(f"{phase} contraction flop: {flop}")
totals = report["totals"]
for key in ("flop", "bytes_read", "bytes_written"):
    assert totals[key] == sum(op[key] for op in ops), key
    for cls, sub in totals["by_class"].items():
        assert sub[key] == sum(op[key] for op in ops if op["class"] == cls), (cls, key)
    for phase, sub in totals["by_phase"].items():
        assert sub[key] == sum(op[key] for op in ops if op["phase"] == phase), (phase, key)
        for cls, cell in sub["by_class"].items():
            assert cell[key] == sum(op[key] for op in ops
                                    if op["phase"] == phase and op["class"] == cls), (phase, cls, key)
assert totals["bytes"] == totals["bytes_read"] + totals["bytes_written"]
for op in ops:
    if "members" in op:
        assert op["flop"] == sum(m["flop"] for m in op["members"]), op["name"]
print("consistent")
