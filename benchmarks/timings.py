"""Tables from module_timer JSON and sluicec report.json (benchmarks/).

  timings.py fusion ON.json ON_REPORT OFF.json OFF_REPORT
      Fusion on vs off side by side: per phase the median time of each, the
      ratio off / on, the bytes the memory-bound (non-contraction) kernels
      move according to each report, and bytes / phase time.
  timings.py kernels TIMER.json REPORT [--peak-gbs P]
      Per phase and, when the module exported sluice_profile, per kernel:
      median time, bytes from the report, achieved GB/s and the fraction of
      the peak P (default: the copy rate module_timer measured with
      --copy-bytes, else the peak it read from the device), and TFLOP/s.

Bytes always come from report.json, times from module_timer; nothing is
typed in. Phase-level bandwidth divides memory-bound bytes by the whole
phase's time (GEMMs included), so it is a lower bound on what the
memory-bound kernels achieve.
"""

import argparse
import json
import re
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def kernel_rows(report):
    """Rows that are kernels when the report has any, else every op."""
    ops = report["ops"]
    kernels = [op for op in ops if op.get("kind") == "kernel"]
    return kernels if kernels else ops


def memory_bound_bytes(report, phase):
    return sum(op["bytes_read"] + op["bytes_written"]
               for op in kernel_rows(report)
               if op["phase"] == phase and op["class"] != "contraction")


def gbs(nbytes, ms):
    return nbytes / (ms * 1e-3) / 1e9 if ms > 0 else float("nan")


def report_kernel(rows, phase, profile_name):
    """The report row of a sluice_profile entry: its name is the kernel's
    description, "kernel 'k6' (fused: ...)", and kernel names repeat across
    phases."""
    match = re.match(r"kernel '([^']+)'", profile_name)
    return rows.get((phase, match.group(1) if match else profile_name), {})


def kernel_rates(timer, report):
    """Per phase, per profiled kernel: a dict with the report's class, bytes
    and flop, the median ms, GB/s and TFLOP/s (contractions)."""
    rows = {(op["phase"], op["name"]): op for op in kernel_rows(report)}
    table = {}
    for phase in timer["phases"]:
        entries = []
        for kernel in phase["kernels"]:
            op = report_kernel(rows, phase["phase"], kernel["name"])
            nbytes = op.get("bytes_read", 0) + op.get("bytes_written", 0)
            ms = kernel["median_ms"]
            entry = {"name": kernel["name"], "kernel": op.get("name", "?"),
                     "class": op.get("class", "?"), "ms": ms,
                     "bytes": nbytes, "flop": op.get("flop", 0),
                     "gbs": gbs(nbytes, ms)}
            if entry["class"] == "contraction" and ms > 0:
                entry["tflops"] = entry["flop"] / (ms * 1e-3) / 1e12
            entries.append(entry)
        table[phase["phase"]] = entries
    return table


def cmd_fusion(args):
    on, off = load(args.on), load(args.off)
    on_report, off_report = load(args.on_report), load(args.off_report)
    print("%-9s %12s %12s %8s %16s %16s %10s %10s" % (
        "phase", "fused ms", "unfused ms", "ratio", "fused mb bytes",
        "unfused mb bytes", "fused GB/s", "unfused GB/s"))
    for p_on, p_off in zip(on["phases"], off["phases"]):
        phase = p_on["phase"]
        b_on = memory_bound_bytes(on_report, phase)
        b_off = memory_bound_bytes(off_report, phase)
        print("%-9s %12.3f %12.3f %8.2f %16d %16d %10.2f %10.2f" % (
            phase, p_on["median_ms"], p_off["median_ms"],
            p_off["median_ms"] / p_on["median_ms"], b_on, b_off,
            gbs(b_on, p_on["median_ms"]), gbs(b_off, p_off["median_ms"])))
    print("(median of %d iterations; 'mb bytes' = bytes of the memory-bound "
          "kernels from report.json; GB/s = those bytes / whole-phase time, "
          "a lower bound)" % on["iterations"])
    return 0


def cmd_kernels(args):
    timer, report = load(args.timer), load(args.report)
    if args.peak_gbs is None:
        args.peak_gbs = timer.get("copy_gbs") or timer.get("peak_gbs")
    print("%s on %s%s" % (timer["module"], timer.get("device", "?"),
                          ", peak %.0f GB/s" % args.peak_gbs
                          if args.peak_gbs else ""))
    rates = kernel_rates(timer, report)
    for phase in timer["phases"]:
        name = phase["phase"]
        b = memory_bound_bytes(report, name)
        line = "%-9s median %.3f ms (min %.3f, max %.3f); memory-bound bytes " \
               "%d -> %.1f GB/s over the whole phase" % (
                   name, phase["median_ms"], phase["min_ms"],
                   phase["max_ms"], b, gbs(b, phase["median_ms"]))
        if args.peak_gbs:
            line += " (%.1f%% of peak %.0f GB/s)" % (
                100 * gbs(b, phase["median_ms"]) / args.peak_gbs, args.peak_gbs)
        print(line)
        if not phase["kernels"]:
            continue
        print("  %-28s %-14s %10s %14s %9s %7s %8s" % (
            "kernel", "class", "ms", "bytes", "GB/s", "% peak", "TFLOP/s"))
        for entry in rates[name]:
            peak = "%7.1f" % (100 * entry["gbs"] / args.peak_gbs) \
                if args.peak_gbs else "      -"
            tflops = "%8.1f" % entry["tflops"] if "tflops" in entry \
                else "       -"
            print("  %-28s %-14s %10.4f %14d %9.1f %s %s" % (
                entry["name"][:28], entry["class"], entry["ms"],
                entry["bytes"], entry["gbs"], peak, tflops))
    if not any(p["kernels"] for p in timer["phases"]):
        print("(no per-kernel times: the module does not export "
              "sluice_profile)")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("fusion")
    for name in ["on", "on_report", "off", "off_report"]:
        p.add_argument(name)
    p = sub.add_parser("kernels")
    p.add_argument("timer")
    p.add_argument("report")
    p.add_argument("--peak-gbs", type=float)
    args = parser.parse_args()
    if args.command == "fusion":
        # Positional order on the command line: ON ON_REPORT OFF OFF_REPORT.
        return cmd_fusion(args)
    return cmd_kernels(args)


if __name__ == "__main__":
    sys.exit(main())
