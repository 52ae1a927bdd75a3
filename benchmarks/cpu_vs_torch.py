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
"""

import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from timings import kernel_rates, load  # noqa: E402


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
            paths = [os.path.join(work, "%s-%s-t%d-r%d.json" % (
                layer, who, threads, r)) for r in range(1, rounds + 1)]
            rows[who] = [statistics.median(s) for s in samples(paths)]
            print("%-7d %-7s %12.2f %12.2f %12.2f" % ((threads, who) +
                                                      tuple(rows[who])))
        ratio = [t / s for t, s in zip(rows["torch"], rows["sluice"])]
        ratios[threads] = ratio[2]
        print("%-7d %-7s %12.2fx %11.2fx %11.2fx" % ((threads, "torch/us") +
                                                    tuple(ratio)))
    return ratios


def memory_bound(timer, report):
    """(name, bytes, ms) of every profiled memory-bound kernel."""
    out = []
    for phase, entries in kernel_rates(timer, report).items():
        for e in entries:
            if e["class"] not in ("contraction", "?"):
                out.append((phase[0] + ":" + e["kernel"], e["bytes"], e["ms"],
                            e["class"]))
    return out


def summary(rows, copy, off_ms):
    """(bytes-weighted % of copy, all bytes / all time %, fused ms,
    unfused ms) of one profile round."""
    total_bytes = sum(r[1] for r in rows)
    total_ms = sum(r[2] for r in rows)
    weighted = sum(r[1] * (r[1] / (r[2] * 1e-3) / 1e9) for r in rows
                   if r[2] > 0) / max(total_bytes, 1)
    aggregate = total_bytes / (total_ms * 1e-3) / 1e9 if total_ms else 0
    return 100 * weighted / copy, 100 * aggregate / copy, total_ms, off_ms


def bandwidth_table(work, layer, rounds):
    for threads in (1, 2):
        def timer(variant, r):
            return load(os.path.join(work, "%s-%s-t%d-r%d.json" % (
                layer, variant, threads, r)))
        clock = timer("prof", 1).get("clock", "wall")
        report = load(os.path.join(work, "%s-prof-%s" % (layer, clock),
                                   "report.json"))
        off_report = load(os.path.join(work, "%s-off-%s" % (layer, clock),
                                       "report.json"))
        per_round = []
        for r in range(1, rounds + 1):
            fused = timer("prof", r)
            off_ms = sum(x[2] for x in memory_bound(timer("off", r),
                                                    off_report))
            per_round.append(summary(memory_bound(fused, report),
                                     fused["copy_gbs"], off_ms) +
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
        weighted, aggregate, total_ms, off_ms, _ = per_round[median_round]
        print("  bytes-weighted mean: %.1f%% of copy; all bytes / all time: "
              "%.1f GB/s = %.1f%% of copy" % (weighted, aggregate * copy / 100,
                                            aggregate))
        print("  memory-bound total: fused %.2f ms, --fuse=off %.2f ms, "
              "ratio %.2fx" % (total_ms, off_ms,
                               off_ms / total_ms if total_ms else 0))
        print("  per round (copy GB/s, bytes-weighted %, fused ms, --fuse=off "
              "ms, ratio): " + "; ".join(
                  "%.1f, %.1f%%, %.2f, %.2f, %.2fx" % (
                      x[4], x[0], x[2], x[3], x[3] / x[2] if x[2] else 0)
                  for x in per_round))
        weighted = statistics.median(x[0] for x in per_round)
        ratios = [x[3] / x[2] for x in per_round if x[2]]
        print("  median over %d rounds: bytes-weighted %.1f%% of copy "
              "(%.1f-%.1f), fused vs --fuse=off %.2fx (%.2f-%.2f)" % (
                  rounds, weighted, min(x[0] for x in per_round),
                  max(x[0] for x in per_round), statistics.median(ratios),
                  min(ratios), max(ratios)))


def main():
    work, layer, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    print("\n== %s ==" % layer)
    speed_table(work, layer, rounds)
    bandwidth_table(work, layer, rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
