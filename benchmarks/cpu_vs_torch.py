"""Tables of benchmarks/cpu-vs-torch.sh from the JSON files it wrote.

  cpu_vs_torch.py WORK LAYER ROUNDS

WORK holds, for LAYER and threads T in {1, 2}:
  LAYER-sluice-tT-rR.json, LAYER-torch-tT-rR.json (R = 1..ROUNDS): timings
      of the Sluice module (module_timer) and PyTorch (torch_layer_timer.py)
      taken alternately;
  LAYER-prof-tT-rR.json, LAYER-off-tT-rR.json: module_timer on the
      -DSLUICE_PROFILE builds, fused and --fuse=off, with a copy measured in
      the same process, ROUNDS times;
  LAYER-{prof,off}-{wall,cpu}/report.json: the sluicec reports (bytes) of
      the profile builds whose clock the timer JSON names.
Every time comes from those files and every byte count from the reports.

The split table puts each side's phase time in three columns: GEMM,
attention and the rest. Sluice: the profile builds' contraction kernels
(GEMMs with their epilogues and bias gradients), the streaming attention
kernel (also a contraction in the report, but it runs the scores' softmax,
mask and dropout too) and the phase less those. torch: the categories of
torch_layer_timer.py --split (torch_profile_split.py): 2-D BLAS ops, and
for attention its batched BLAS ops (shown alone as "attn GEMM") plus the
other ops on the scores. Each column is the share it had in the profiled
runs (summed over the rounds) times the un-profiled median of the speed
table, so a row adds up to that median; a total row adds the phases. Where
both sides' GEMMs run at one rate (docs/Codegen.md, "CPU backend"), the
whole-layer ratio is bounded by how much of the layer the GEMMs are.

Memory-bound kernels are those whose report class is not "contraction"
(GEMM kernels, with their epilogues and bias gradients, are contractions).
Two fractions of the copy rate: the bytes-weighted mean of the kernels'
fractions (sum of bytes x fraction / all bytes: a kernel's weight is its
bytes, so fast kernels with many bytes lift it) and all bytes over all time
(the rate of the kernels taken together, which slow kernels pull down).
Fused vs --fuse=off compares the memory-bound totals as they are, and like
for like: without the unfused kernels whose ops all run inside a GEMM
kernel of the fused build (bias adds, bias-gradient sums), whose fused time
counts as the GEMM's.
"""

import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timings import kernel_rates, load  # noqa: E402

# The columns of split_table's fractions.
SPLIT = ("gemm", "attention", "rest")


def run_path(work, layer, who, threads, r):
    """The JSON file of `who` (sluice, torch, prof, off) at `threads`
    threads in round `r`."""
    return os.path.join(work, "%s-%s-t%d-r%d.json" % (layer, who, threads, r))


def run_paths(work, layer, who, threads, rounds):
    """run_path of every round."""
    return [run_path(work, layer, who, threads, r)
            for r in range(1, rounds + 1)]


def samples(paths):
    """Forward, backward and total samples over all rounds."""
    forward, backward, total = [], [], []
    for path in paths:
        timer = load(path)
        f, b = (p["samples_ms"] for p in timer["phases"])
        forward += f
        backward += b
        total += [x + y for x, y in zip(f, b)]
    return forward, backward, total


def speed_table(work, layer, rounds):
    print("%-7s %-7s %12s %12s %12s" % ("threads", "", "forward ms",
                                         "backward ms", "total ms"))
    ratios = {}
    for threads in (1, 2):
        rows = {}
        for who in ("sluice", "torch"):
            rows[who] = [statistics.median(s) for s in samples(
                run_paths(work, layer, who, threads, rounds))]
            print("%-7d %-7s %12.2f %12.2f %12.2f" % ((threads, who) +
                                                      tuple(rows[who])))
        ratio = [t / s for t, s in zip(rows["torch"], rows["sluice"])]
        ratios[threads] = ratio[2]
        print("%-7d %-7s %12.2fx %11.2fx %11.2fx" % ((threads, "torch/us") +
                                                    tuple(ratio)))
    return ratios


def ops_of(profile_name):
    """The op names of a kernel's description, "kernel 'k8' (gemm: ffn1,
    ffn1_bias)" -> {"ffn1", "ffn1_bias"}."""
    match = re.search(r"\((?:gemm|fused): ([^)]*)\)", profile_name)
    return set(match.group(1).split(", ")) if match else set()


def memory_bound(timer, report, inside=frozenset()):
    """(name, bytes, ms, class) of every profiled memory-bound kernel (class
    other than contraction; "?" = no report row), leaving out those whose
    ops are all in `inside`."""
    out = []
    for phase, entries in kernel_rates(timer, report).items():
        for e in entries:
            ops = ops_of(e["name"])
            if e["class"] in ("contraction", "?") or (ops and ops <= inside):
                continue
            out.append((phase[0] + ":" + e["kernel"], e["bytes"], e["ms"],
                        e["class"]))
    return out


def gemm_ops(timer):
    """Ops the module runs inside its GEMM kernels (epilogues, bias
    gradients): their time counts as the GEMM's, not as memory-bound."""
    return frozenset(op for phase in timer["phases"]
                     for k in phase["kernels"] if "(gemm: " in k["name"]
                     for op in ops_of(k["name"]))


def summary(rows, copy, off_rows):
    """(bytes-weighted mean % of copy, all bytes / all time %, fused ms,
    --fuse=off ms, --fuse=off ms like for like) of one profile round.
    off_rows: (all the unfused memory-bound kernels, those whose work the
    fused build does not run inside a GEMM kernel)."""
    total_bytes = sum(r[1] for r in rows)
    total_ms = sum(r[2] for r in rows)
    weighted = sum(r[1] * (r[1] / (r[2] * 1e-3) / 1e9) for r in rows
                   if r[2] > 0) / max(total_bytes, 1)
    aggregate = total_bytes / (total_ms * 1e-3) / 1e9 if total_ms else 0
    return (100 * weighted / copy, 100 * aggregate / copy, total_ms,
            sum(r[2] for r in off_rows[0]), sum(r[2] for r in off_rows[1]))


def ratio(off_ms, on_ms):
    return off_ms / on_ms if on_ms else 0.0


def spread(values, fmt):
    """"median (min-max)" of `values`."""
    return (fmt + " (" + fmt + "-" + fmt + ")") % (
        statistics.median(values), min(values), max(values))


def bandwidth_table(work, layer, rounds):
    for threads in (1, 2):
        def timer(variant, r):
            return load(run_path(work, layer, variant, threads, r))
        clock = timer("prof", 1).get("clock", "wall")
        report = load(os.path.join(work, "%s-prof-%s" % (layer, clock),
                                   "report.json"))
        off_report = load(os.path.join(work, "%s-off-%s" % (layer, clock),
                                       "report.json"))
        per_round = []
        for r in range(1, rounds + 1):
            fused = timer("prof", r)
            off = timer("off", r)
            off_rows = (memory_bound(off, off_report),
                        memory_bound(off, off_report, gemm_ops(fused)))
            per_round.append(summary(memory_bound(fused, report),
                                     fused["copy_gbs"], off_rows) +
                             (fused["copy_gbs"],))
        # The table of the round whose bytes-weighted fraction is the median.
        median_round = sorted(range(rounds),
                              key=lambda i: per_round[i][0])[rounds // 2]
        fused = timer("prof", median_round + 1)
        copy = fused["copy_gbs"]
        rows = memory_bound(fused, report)
        print("\n%d thread(s), %s time: copy %.1f GB/s (%d MiB, %d copy "
              "threads); memory-bound kernels, fused (round %d of %d):" % (
                  threads, "process CPU" if clock == "cpu" else "wall", copy,
                  fused["copy_bytes"] >> 20, fused.get("copy_threads", 1),
                  median_round + 1, rounds))
        print("  %-22s %-14s %10s %12s %8s %7s" % (
            "kernel", "class", "ms", "bytes", "GB/s", "% copy"))
        for name, nbytes, ms, cls in rows:
            rate = nbytes / (ms * 1e-3) / 1e9 if ms > 0 else 0.0
            print("  %-22s %-14s %10.3f %12d %8.1f %7.1f" % (
                name[:22], cls, ms, nbytes, rate, 100 * rate / copy))
        weighted, aggregate, total_ms, off_ms, like_ms, _ = \
            per_round[median_round]
        print("  bytes-weighted mean: %.1f%% of copy; all bytes / all time: "
              "%.1f GB/s = %.1f%% of copy" % (weighted, aggregate * copy / 100,
                                            aggregate))
        print("  memory-bound total: fused %.2f ms, --fuse=off %.2f ms, "
              "ratio %.2fx; like for like (--fuse=off without the kernels "
              "whose ops the fused build runs inside GEMM kernels) %.2f ms, "
              "ratio %.2fx" % (total_ms, off_ms, ratio(off_ms, total_ms),
                               like_ms, ratio(like_ms, total_ms)))
        print("  per round (copy GB/s, bytes-weighted %, all bytes / all "
              "time %, fused ms, --fuse=off ms, ratio, like-for-like "
              "ratio): " + "; ".join(
                  "%.1f, %.1f%%, %.1f%%, %.2f, %.2f, %.2fx, %.2fx" % (
                      x[5], x[0], x[1], x[2], x[3], ratio(x[3], x[2]),
                      ratio(x[4], x[2])) for x in per_round))
        print("  median over %d rounds: bytes-weighted %s of copy, all "
              "bytes / all time %s, fused vs --fuse=off %s, like for "
              "like %s" % (
                  rounds, spread([x[0] for x in per_round], "%.1f%%"),
                  spread([x[1] for x in per_round], "%.1f%%"),
                  spread([ratio(x[3], x[2]) for x in per_round], "%.2fx"),
                  spread([ratio(x[4], x[2]) for x in per_round], "%.2fx")))


def sluice_category(entry):
    """GEMM, attention or rest for one profiled Sluice kernel: the streaming
    attention kernel is a contraction in the report but gets its own
    column; every other contraction is a GEMM kernel (with its epilogue and
    bias gradient)."""
    if "(streaming: " in entry["name"]:
        return "attention"
    return "gemm" if entry["class"] == "contraction" else "rest"


def sluice_fractions(work, layer, rounds, threads):
    """Per phase, the GEMM / attention / rest shares of the profile builds'
    phase time, summed over the rounds; rest = the phase less the GEMM and
    attention kernels (the other kernels and any time between kernels)."""
    sums = {}
    for path in run_paths(work, layer, "prof", threads, rounds):
        timer = load(path)
        report = load(os.path.join(work, "%s-prof-%s" % (
            layer, timer.get("clock", "wall")), "report.json"))
        rates = kernel_rates(timer, report)
        for phase in timer["phases"]:
            row = sums.setdefault(phase["phase"], dict.fromkeys(SPLIT, 0.0))
            for entry in rates[phase["phase"]]:
                cat = sluice_category(entry)
                if cat != "rest":
                    row[cat] += entry["ms"]
            row["rest"] += phase["median_ms"]
    for row in sums.values():
        row["rest"] -= row["gemm"] + row["attention"]
    return {phase: {c: row[c] / sum(row.values()) for c in SPLIT}
            for phase, row in sums.items()}


def torch_fractions(paths):
    """Per phase, the shares of torch_layer_timer --split's categories,
    summed over the runs' profiled iterations (attention = its batched BLAS
    ops and the other ops on the scores), and the profiled / timed median
    ratios; None when a run has no split."""
    sums, overhead = {}, {}
    for path in paths:
        for phase in load(path)["phases"]:
            if "split" not in phase:
                return None
            split = phase["split"]
            row = sums.setdefault(phase["phase"],
                                  dict.fromkeys(SPLIT + ("attn_gemm",), 0.0))
            row["gemm"] += sum(split["gemm_ms"])
            row["attn_gemm"] += sum(split["attention_gemm_ms"])
            row["attention"] += sum(split["attention_gemm_ms"]) + \
                sum(split["attention_other_ms"])
            row["rest"] += sum(split["rest_ms"])
            overhead.setdefault(phase["phase"], []).append(
                split["profiler_overhead"])
    return ({phase: {c: v / sum(row[k] for k in SPLIT)
                     for c, v in row.items()} for phase, row in sums.items()},
            {phase: statistics.median(v) for phase, v in overhead.items()})


def split_rows(fractions, medians, columns):
    """Per phase and their sum ("total"), each column's share times the
    phase's un-profiled median."""
    rows = {}
    for phase, median in zip(("forward", "backward"), medians):
        rows[phase] = [fractions[phase][c] * median if c in fractions[phase]
                       else None for c in columns] + [median]
    rows["total"] = [None if rows["forward"][i] is None else
                     rows["forward"][i] + rows["backward"][i]
                     for i in range(len(columns) + 1)]
    return rows


def split_cell(value, width, ratio=False):
    if value is None:
        return "%*s" % (width, "-")
    return "%*.2f%s" % (width - 1 if ratio else width, value,
                        "x" if ratio else "")


def split_table(work, layer, rounds):
    """GEMM, attention and the rest of both sides, per thread count: shares
    of the profiled runs times the un-profiled medians of speed_table."""
    columns = ("gemm", "attention", "attn_gemm", "rest")
    for threads in (1, 2):
        def paths(who):
            return run_paths(work, layer, who, threads, rounds)
        rows = {"sluice": split_rows(
            sluice_fractions(work, layer, rounds, threads),
            [statistics.median(s) for s in samples(paths("sluice"))[:2]],
            columns)}
        torch = torch_fractions(paths("torch"))
        print("\n%d thread(s): GEMM / attention / rest, shares of the "
              "profiled runs x the medians above:" % threads)
        if torch is None:
            print("  (no torch split: run torch_layer_timer.py with --split)")
        else:
            rows["torch"] = split_rows(
                torch[0], [statistics.median(s)
                           for s in samples(paths("torch"))[:2]], columns)
        print("  %-9s %-8s %10s %10s %10s %10s %10s" % (
            "phase", "", "GEMM ms", "attn ms", "attn GEMM", "rest ms",
            "total ms"))
        for phase in ("forward", "backward", "total"):
            for who in rows:
                print("  %-9s %-8s %s" % (phase, who, " ".join(
                    split_cell(v, 10) for v in rows[who][phase])))
            if torch is not None:
                print("  %-9s %-8s %s" % (phase, "torch/us", " ".join(
                    split_cell(t / s if t is not None and s else None, 10,
                               True)
                    for t, s in zip(rows["torch"][phase],
                                    rows["sluice"][phase]))))
        if torch is not None:
            print("  torch profiled / timed median: forward %.2fx, backward "
                  "%.2fx (the profiler's per-op cost and the load; shares "
                  "charge it pro rata)" % (torch[1]["forward"],
                                           torch[1]["backward"]))
    print("  (Sluice: GEMM = contraction kernels, attn = the streaming "
          "attention kernel, rest = the phase less those, from the "
          "-DSLUICE_PROFILE builds; torch: GEMM = 2-D BLAS ops, attn = "
          "batched BLAS ops (attn GEMM) + the other ops on the scores, "
          "from torch.profiler; torch_profile_split.py; total = forward + "
          "backward medians)")


def main():
    work, layer, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    print("\n== %s ==" % layer)
    speed_table(work, layer, rounds)
    split_table(work, layer, rounds)
    bandwidth_table(work, layer, rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
