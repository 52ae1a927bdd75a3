"""Checks report.json's "kept_relayouts" against the report's kernels.

usage: check_kept_relayouts.py REPORT_JSON

Every relayout in a kernel (or unfused op) must be listed once, under its
kernel; an entry the layout selection recorded must show the selection's
objective no larger than the best selection without the relayout (else
keeping it would not be the model's optimum). The list is there (empty)
when no kernel holds a relayout. Prints one line per entry and "OK", or
exits non-zero naming the first mismatch.
"""
import json
import sys

report = json.load(open(sys.argv[1]))


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


expected = []
for op in report["ops"]:
    members = op.get("members", [])
    if not members and op["kind"] == "relayout":
        expected.append((op["name"], op["name"]))
    expected += [(op["name"], m["name"]) for m in members if m["kind"] == "relayout"]
if "kept_relayouts" not in report:
    fail("report.json has no kept_relayouts (an empty list when no kernel holds a relayout)")
kept = report["kept_relayouts"]
listed = [(entry["kernel"], entry["relayout"]) for entry in kept]
if listed != expected:
    fail(f"kept_relayouts lists {listed}, the kernels hold {expected}")
for entry in kept:
    evidence = entry["evidence"]
    if evidence == "optimum":
        if entry["without_us"] < entry["selected_us"]:
            fail(f"{entry['relayout']}: the selection without it ({entry['without_us']} us) "
                 f"beats the one keeping it ({entry['selected_us']} us)")
        detail = f"+{entry['without_us'] - entry['selected_us']:.2f} us without it"
    elif evidence == "no_alternative":
        if entry["without_us"] is not None:
            fail(f"{entry['relayout']}: no alternative, but a time without it")
        detail = "no layouts avoid it"
    elif evidence == "not_selected":
        detail = "not a choice of the layout selection"
    else:
        fail(f"{entry['relayout']}: unknown evidence {evidence}")
    print(f"{entry['kernel']} {entry['relayout']} ({entry['contraction']} {entry['gemm']}): "
          f"{evidence}, {detail}")
print("OK")
