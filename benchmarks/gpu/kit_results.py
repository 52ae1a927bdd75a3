"""The GPU kit's results files (docs/GPU.md): OUTDIR/gpu-results.json, every
figure, and OUTDIR/gpu-results.md, the tables a person reads.

Every step of gpu-kit/run.sh reads the JSON, adds its part and writes both
files again (to a temporary name, then renamed), so whatever a later step
does, including being killed by its time limit, the results of the steps
before it are on disk.
"""

import json
import os

JSON_NAME = "gpu-results.json"
MD_NAME = "gpu-results.md"


def load(out):
    path = os.path.join(out, JSON_NAME)
    if not os.path.exists(path):
        return {"steps": {}}
    try:
        with open(path) as f:
            return json.load(f)
    except ValueError:
        # A half-written file cannot happen (rename), but never lose a run
        # over it: start again and say so.
        return {"steps": {}, "warning": "%s was unreadable" % path}


def _write(path, text):
    temporary = path + ".tmp"
    with open(temporary, "w") as f:
        f.write(text)
    os.replace(temporary, path)


def save(out, results):
    _write(os.path.join(out, JSON_NAME), json.dumps(results, indent=1) + "\n")
    _write(os.path.join(out, MD_NAME), render(results))


def update(out, key, value):
    results = load(out)
    results[key] = value
    save(out, results)


def record_step(out, step, status, seconds, message=""):
    """status: ok, failed, timed out, skipped, unavailable."""
    results = load(out)
    results.setdefault("steps", {})[step] = {
        "status": status, "seconds": round(seconds, 1), "message": message}
    save(out, results)


def _ms(value):
    return "%.3f" % value if isinstance(value, (int, float)) else "-"


def _ratio(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0:
        return "%.2f" % (a / b)
    return "-"


def _steps(results):
    lines = ["## Steps", "", "| step | status | seconds | note |",
             "|---|---|---|---|"]
    for name, step in results.get("steps", {}).items():
        note = step.get("message", "").replace("\n", " ").replace("|", "/")
        lines.append("| %s | %s | %s | %s |" % (
            name, step.get("status"), step.get("seconds"), note[:300]))
    return lines


def _correctness(results):
    cases = results.get("correctness", [])
    if not cases:
        return []
    passed = sum(1 for c in cases if c.get("status") == "pass")
    lines = ["## Correctness (CUDA module vs CPU backend and reference)", "",
             "%d of %d cases pass." % (passed, len(cases)), "",
             "| case | status | worst vs CPU (tensor) | worst vs reference | "
             "tolerance | note |", "|---|---|---|---|---|---|"]
    for case in cases:
        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            case["name"], case.get("status"), case.get("worst_cpu", "-"),
            case.get("worst_ref", "-"),
            "-" if case.get("tolerance") is None else case["tolerance"],
            case.get("message", "").replace("\n", " ").replace("|", "/")[:300]))
    return lines + [""]


def _sanitizer(results):
    runs = results.get("sanitizer", [])
    if not runs:
        return []
    lines = ["## compute-sanitizer", "", "| case | tool | status | errors | "
             "note |", "|---|---|---|---|---|"]
    for entry in runs:
        lines.append("| %s | %s | %s | %s | %s |" % (
            entry["case"], entry["tool"], entry["status"],
            entry.get("errors", "-"),
            entry.get("message", "").replace("\n", " ").replace("|", "/")[:200]))
    return lines + [""]


def _timing(results):
    sluice = results.get("sluice_timing", {})
    torch = results.get("torch_timing", {})
    if not sluice and not torch:
        return []
    lines = ["## Timing (median ms, CUDA events)", "",
             "| shape | phase | Sluice | eager | torch.compile | "
             "eager / Sluice | compile / Sluice |",
             "|---|---|---|---|---|---|---|"]
    for shape in sorted(set(sluice) | set(torch)):
        ours = sluice.get(shape, {}).get("phases", {})
        eager = torch.get(shape, {}).get("eager", {})
        compiled = torch.get(shape, {}).get("compile", {})
        for phase in ("forward", "backward"):
            s = ours.get(phase, {}).get("median_ms")
            e = eager.get(phase, {}).get("median_ms")
            c = compiled.get(phase, {}).get("median_ms")
            lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                shape, phase, _ms(s), _ms(e), _ms(c), _ratio(e, s),
                _ratio(c, s)))
    notes = []
    for shape, entry in sorted(sluice.items()):
        if entry.get("nonfinite_outputs"):
            notes.append("- %s: Sluice outputs with NaN/Inf: %s" % (
                shape, ", ".join(entry["nonfinite_outputs"])))
        if entry.get("error"):
            notes.append("- %s: Sluice: %s" % (shape, entry["error"]))
        if entry.get("time_limited"):
            notes.append("- %s: Sluice: only %d iterations fit in the step's "
                         "time" % (shape, entry.get("iterations", 0)))
    for shape, modes in sorted(torch.items()):
        for mode, entry in sorted(modes.items()):
            if entry.get("error"):
                notes.append("- %s: %s: %s" % (shape, mode, entry["error"]))
            if entry.get("time_limited"):
                notes.append("- %s: %s: only %d iterations fit in the "
                             "step's time" % (shape, mode,
                                              entry.get("iterations", 0)))
            if entry.get("compile_s") is not None:
                notes.append("- %s: torch.compile took %.1f s (first "
                             "iteration)" % (shape, entry["compile_s"]))
    return lines + [""] + notes + [""]


def _attention(results):
    timing = results.get("attention_timing", {})
    if not timing:
        return []
    lines = ["## Streaming attention vs scaled_dot_product_attention", ""]
    if timing.get("error"):
        return lines + ["timing failed: %s" % timing["error"], ""]
    lines += ["Medians, ms (TFLOP/s by FlashAttention's count: forward "
              "4·b·h·l²·d, halved when causal; backward 2.5x). Tensors "
              "[b, l, h, d]. Sluice's backward excludes the row dot "
              "rowsum(dO·O).", "",
              "| shape | Sluice fwd | torch fwd | torch / Sluice | "
              "Sluice bwd | torch bwd | torch / Sluice | torch backend |",
              "|---|---|---|---|---|---|---|---|"]

    def cell(row, who, phase):
        ms = row.get("%s_%s_ms" % (who, phase))
        tflops = row.get("%s_%s_tflops" % (who, phase))
        if not isinstance(ms, (int, float)) or ms <= 0:
            return "-"
        return "%.3f (%.0f)" % (ms, tflops) if tflops else _ms(ms)

    for row in timing.get("shapes", []):
        shape = "%s b%d h%d l%d d%d%s%s" % (
            row["dtype"], row["b"], row["h"], row["l"], row["d"],
            " causal" if row.get("causal") else "",
            " dropout %g" % row["dropout"] if row.get("dropout") else "")
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            shape, cell(row, "sluice", "fwd"), cell(row, "torch", "fwd"),
            _ratio(row.get("torch_fwd_ms"), row.get("sluice_fwd_ms")),
            cell(row, "sluice", "bwd"), cell(row, "torch", "bwd"),
            _ratio(row.get("torch_bwd_ms"), row.get("sluice_bwd_ms")),
            row.get("error") or row.get("backend", "-")))
    if timing.get("torch_output"):
        lines += ["", "PyTorch side: %s" % timing["torch_output"]]
    return lines + [""]


def _kernels(results):
    profile = results.get("kernels", {})
    if not profile:
        return []
    lines = ["## Per-kernel times (sluice_profile)", ""]
    copy = results.get("copy_gbs")
    if copy:
        lines.append("Device-to-device copy: %.0f GB/s (read + written), the "
                     "100%% of the bandwidth column." % copy)
        lines.append("")
    for shape, phases in sorted(profile.items()):
        for phase, entries in phases.items():
            total = sum(e["ms"] for e in entries)
            lines += ["### %s %s (sum of kernels %.3f ms)" % (shape, phase,
                                                              total), "",
                      "| kernel | class | ms | MB | GB/s | % of copy | "
                      "TFLOP/s | description |",
                      "|---|---|---|---|---|---|---|---|"]
            for e in sorted(entries, key=lambda e: -e["ms"]):
                lines.append("| %s | %s | %.4f | %.1f | %.0f | %s | %s | %s |"
                             % (e["kernel"], e["class"], e["ms"],
                                e["bytes"] / 1e6, e["gbs"],
                                "%.1f" % (100 * e["copy_fraction"])
                                if "copy_fraction" in e else "-",
                                "%.1f" % e["tflops"] if "tflops" in e
                                else "-", e["name"][:90].replace("|", "/")))
            lines.append("")
    return lines


def _profile_db(results):
    db = results.get("profile_db")
    if not db:
        return []
    target = db.get("target") or "unknown"
    lines = ["## Profile database and the cost model (%s)" % target, "",
             "`%s`: %d kernels by signature and layout, for `sluicec "
             "--target %s --profile %s` (docs/Layout.md). Per kernel, "
             "measured against the model's prediction on %s:" % (
                 db.get("file"), db.get("kernels", 0), target,
                 db.get("file"), target), "",
             "| module | phase | kernel | measured µs | predicted µs | "
             "measured / predicted |", "|---|---|---|---|---|---|"]
    for e in db.get("measured", []):
        predicted = e.get("predicted_us")
        lines.append("| %s | %s | %s | %.2f | %s | %s |" % (
            e["module"], e["phase"], e["kernel"], e["us"],
            "%.2f" % predicted if predicted else "-",
            _ratio(e["us"], predicted) if predicted else "-"))
    return lines + [""]


def _ncu(results):
    runs = results.get("ncu", [])
    if not runs:
        return []
    lines = ["## ncu (slowest memory-bound kernels)", "",
             "| shape | kernel | function | status | metrics |",
             "|---|---|---|---|---|"]
    for entry in runs:
        metrics = "; ".join("%s %s" % (k, v) for k, v in
                            sorted(entry.get("metrics", {}).items()))
        lines.append("| %s | %s | %s | %s | %s |" % (
            entry.get("shape"), entry.get("kernel"), entry.get("function"),
            entry.get("status"), metrics or entry.get("message", "")[:200]))
    return lines + [""]


def render(results):
    device = results.get("device", {})
    kit = results.get("kit", {})
    lines = ["# Sluice GPU kit results", ""]
    if results.get("skipped"):
        lines += ["skipped: %s" % results["skipped"], ""]
    lines.append("- device: %s" % device.get("name", "?"))
    for key in ("driver", "memory", "torch", "compute_sanitizer", "ncu"):
        if key in device:
            lines.append("- %s: %s" % (key, device[key]))
    if kit:
        lines.append("- kit: commit %s, built %s" % (kit.get("commit"),
                                                    kit.get("created")))
    if results.get("started"):
        lines.append("- run started %s" % results["started"])
    lines.append("")
    for part in (_correctness, _sanitizer, _attention, _timing, _kernels,
                 _profile_db, _ncu):
        lines += part(results)
    lines += _steps(results)
    return "\n".join(lines) + "\n"
