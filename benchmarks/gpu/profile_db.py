"""The measured profile database (docs/Layout.md, "Measured profiles") from
the GPU kit's per-kernel times: each profiled kernel's median joined with
its report.json entry (`prediction.kernels`: the kernel's signature and
layout, the keys `sluicec --profile` looks up), one entry per signature and
layout (the median where several modules measured the same one), for the
built-in target of the device measured. Also the cost model's prediction
of each kernel on that target (prepare_kit.py stores them per module as
predicted-<target>.json), so the kit shows model against measurement."""

import json
import os
import statistics

# nvidia-smi's device name -> the built-in target (targets/*.json).
DEVICE_TARGETS = (("H200", "h200"), ("H100", "h100"), ("A100", "a100"),
                  ("V100", "v100"))


def target_of(device_name):
    """The built-in target of an nvidia-smi device name, or None."""
    for marker, target in DEVICE_TARGETS:
        if marker in (device_name or ""):
            return target
    return None


def report_kernels(report):
    """(phase, name) -> the report's prediction entry of each kernel."""
    return {(k["phase"], k["name"]): k
            for k in report.get("prediction", {}).get("kernels", [])}


def measured_entries(module, report, table, predicted=None):
    """One dict per measured kernel of `module`: signature, layout, measured
    us, and the model's us on the measured target when `predicted` (that
    target's prediction.kernels, same kernels) has it."""
    keys = report_kernels(report)
    model = report_kernels({"prediction": {"kernels": predicted or []}})
    entries = []
    for phase, rows in table.items():
        for row in rows:
            key = keys.get((phase, row["kernel"]))
            if not key or row["ms"] <= 0:
                continue
            entry = {"module": module, "phase": phase,
                     "kernel": row["kernel"], "signature": key["signature"],
                     "layout": key["layout"], "us": row["ms"] * 1e3}
            other = model.get((phase, row["kernel"]))
            if other and other.get("signature") == key["signature"] and \
                    other.get("layout") == key["layout"]:
                entry["predicted_us"] = other["predicted_us"]
            entries.append(entry)
    return entries


def database(target, entries):
    """The --profile JSON: one kernel per signature and layout, the median
    of its measurements."""
    grouped = {}
    for entry in entries:
        grouped.setdefault((entry["signature"], entry["layout"]),
                           []).append(entry["us"])
    kernels = [{"signature": signature, "layout": layout,
                "us": round(statistics.median(times), 3)}
               for (signature, layout), times in sorted(grouped.items())]
    return {"target": target, "kernels": kernels}


def write(out, target, entries):
    """Writes OUT/profile-db.json; returns its path and entry count."""
    data = database(target, entries)
    path = os.path.join(out, "profile-db.json")
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    return path, len(data["kernels"])


def load_predicted(directory, target):
    """The model's prediction.kernels for `target`, stored by prepare_kit.py
    beside a timing module, or None."""
    path = os.path.join(directory, "predicted-%s.json" % target)
    if not target or not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)
