"""Checks the predicted-time rows of docs/Layout.md against sluicec.

usage: check_layout_doc.py SLUICEC SPEC DOC WORKDIR [--update]

Every table row "| Sluice (...) predicted on TARGET | F | B | T |" must hold
the forward, backward and total milliseconds that `sluicec SPEC --target
TARGET` (with --fuse=off when the label says so) reports, to 0.001 ms (the table's three decimals).
With --update, DOC's rows are rewritten with the tool's numbers instead
(for re-pinning after a change that moves them).
"""
import json
import re
import subprocess
import sys

sluicec, spec, doc, workdir = sys.argv[1:5]
update = sys.argv[5:] == ["--update"]
row = re.compile(r"^\| Sluice (.*) predicted on (\w+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \|$")
lines = open(doc, encoding="utf-8").read().split("\n")
rows = [m for m in (row.match(line.strip()) for line in lines) if m]
if len(rows) < 2:
    sys.exit(f"{doc}: expected predicted rows, found {len(rows)}")
failures = 0
for index, match in enumerate(rows):
    label, target = match.group(1), match.group(2)
    documented = [float(match.group(i)) for i in (3, 4, 5)]
    out = f"{workdir}/{index}"
    command = [sluicec, spec, "-o", out, "--quiet", "--target", target]
    if "--fuse=off" in label:
        command.append("--fuse=off")
    subprocess.run(command, check=True)
    prediction = json.load(open(f"{out}/report.json"))["prediction"]
    tool = [prediction[key] / 1000 for key in ("forward_us", "backward_us", "total_us")]
    if update:
        fresh = f"| Sluice {label} predicted on {target} | " + " | ".join(f"{ms:.3f}" for ms in tool) + " |"
        lines = [fresh if line.strip() == match.group(0) else line for line in lines]
        continue
    for name, doc_ms, tool_ms in zip(("forward", "backward", "total"), documented, tool):
        if abs(doc_ms - tool_ms) > 0.0005:
            print(f"{doc}: '{label} predicted on {target}' {name}: documented {doc_ms} ms, sluicec says {tool_ms:.3f} ms")
            failures += 1
if update:
    open(doc, "w", encoding="utf-8").write("\n".join(lines))
    print(f"updated {len(rows)} rows")
    sys.exit(0)
print(f"checked {len(rows)} rows, {failures} mismatches")
sys.exit(1 if failures else 0)
