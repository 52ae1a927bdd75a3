"""Checks the GPU side of the kit (benchmarks/gpu/gpu_kit.py, kit_results.py,
benchmarks/timings.py) on this machine, without a GPU: the verdicts read from
compute-sanitizer and ncu output, the per-kernel rates, the results files,
and the subprocess wrapper that keeps a crashing or hanging runner from
taking the run down. Usage: kit_selftest.py REPO WORKDIR
"""

import json
import os
import sys

repo, work = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(repo, "benchmarks"))
sys.path.insert(0, os.path.join(repo, "benchmarks", "gpu"))
import gpu_kit  # noqa: E402
import kit_results  # noqa: E402
import timings  # noqa: E402

failures = []


def expect(label, got, want):
    if got != want:
        failures.append("%s: got %r, want %r" % (label, got, want))


# compute-sanitizer: status and error count from its summary lines.
v = gpu_kit.sanitizer_verdict
expect("clean memcheck", v(0, "========= ERROR SUMMARY: 0 errors\n")[:2],
       ("clean", 0))
expect("memcheck errors",
       v(86, "========= Invalid __global__ read of size 4\n"
             "========= ERROR SUMMARY: 3 errors\n")[:2], ("errors", 3))
expect("clean racecheck", v(0, "========= RACECHECK SUMMARY: 0 hazards "
                               "displayed (0 errors, 0 warnings)\n")[:2],
       ("clean", 0))
expect("racecheck hazards", v(86, "========= RACECHECK SUMMARY: 2 hazards "
                                  "displayed (1 error, 1 warning)\n")[:2],
       ("errors", 1))
expect("device refused", v(1, "========= Error: Device not supported\n")[:2],
       ("unavailable", None))
expect("timed out", v(None, "partial\n(killed after 9 s)")[:2],
       ("timed out", None))
expect("no summary", v(1, "Traceback: something broke\n")[:2],
       ("error", None))
expect("runner failed", v(1, "========= ERROR SUMMARY: 0 errors\n")[:2],
       ("error", 0))

# ncu --csv --page details: the metrics kept.
csv = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context",'
       '"Stream","Block Size","Grid Size","Device","CC","Section Name",'
       '"Metric Name","Metric Unit","Metric Value"\n'
       '"0","1","module_timer","h","sluice_kernel_2_k6","1","7","(256, 1, 1)",'
       '"(64, 1, 1)","0","9.0","GPU Speed Of Light Throughput",'
       '"DRAM Throughput","%","81.52"\n'
       '"0","1","module_timer","h","sluice_kernel_2_k6","1","7","(256, 1, 1)",'
       '"(64, 1, 1)","0","9.0","GPU Speed Of Light Throughput","Duration",'
       '"us","12.48"\n')
expect("ncu metrics", gpu_kit.ncu_metrics(csv),
       {"DRAM Throughput": "81.52 %", "Duration": "12.48 us"})

# Per-kernel rates: profile names are descriptions, names repeat by phase.
report = {"ops": [
    {"name": "k0", "kind": "kernel", "phase": "forward",
     "class": "contraction", "flop": 2e12, "bytes_read": 10,
     "bytes_written": 10},
    {"name": "k1", "kind": "kernel", "phase": "forward",
     "class": "normalization", "flop": 0, "bytes_read": 3e9,
     "bytes_written": 1e9},
    {"name": "k0", "kind": "kernel", "phase": "backward",
     "class": "element-wise", "flop": 0, "bytes_read": 1e9,
     "bytes_written": 1e9}]}
timer = {"module": "m", "phases": [
    {"phase": "forward", "median_ms": 3.0, "min_ms": 3, "max_ms": 3,
     "kernels": [{"name": "kernel 'k0' (gemm: q_proj)", "median_ms": 1.0},
                 {"name": "kernel 'k1' (fused: softmax)", "median_ms": 2.0}]},
    {"phase": "backward", "median_ms": 1.0, "min_ms": 1, "max_ms": 1,
     "kernels": [{"name": "kernel 'k0' (fused: x.grad)",
                  "median_ms": 1.0}]}]}
rates = timings.kernel_rates(timer, report)
expect("gemm TFLOP/s", round(rates["forward"][0]["tflops"], 3), 2000.0)
expect("softmax GB/s", round(rates["forward"][1]["gbs"], 3), 2000.0)
expect("backward k0 is the backward's", (rates["backward"][0]["class"],
                                         round(rates["backward"][0]["gbs"])),
       ("element-wise", 2000))
expect("no TFLOP/s for memory-bound", "tflops" in rates["forward"][1], False)

# The results files: every section renders, a second save keeps the first.
out = os.path.join(work, "results")
os.makedirs(out, exist_ok=True)
kit_results.update(out, "device", {"name": "Fake H200", "driver": "1"})
kit_results.update(out, "correctness", [
    {"name": "a", "status": "pass", "worst_cpu": "1e-06 (y)",
     "worst_ref": "2e-06 (y)", "tolerance": 1e-4},
    {"name": "b", "status": "error", "message": "crashed | SIGSEGV"}])
kit_results.update(out, "sanitizer", [
    {"case": "fused (a)", "tool": "memcheck", "status": "clean",
     "errors": 0, "message": ""}])
kit_results.update(out, "sluice_timing", {"s": {"phases": {
    "forward": {"median_ms": 2.0}, "backward": {"median_ms": 4.0}},
    "nonfinite_outputs": ["d_x"]}})
kit_results.update(out, "torch_timing", {"s": {
    "eager": {"forward": {"median_ms": 3.0}, "backward": {"median_ms": 6.0}},
    "compile": {"error": "did not finish within the step's time limit"}}})
kit_results.update(out, "copy_gbs", 4000.0)
for rows in rates.values():
    for row in rows:
        row["copy_fraction"] = row["gbs"] / 4000.0
kit_results.update(out, "kernels", {"s": rates})
kit_results.update(out, "ncu", [{"shape": "s", "kernel": "k1",
                                 "function": "sluice_kernel_2_k1",
                                 "status": "ok", "metrics": {"Duration":
                                                             "2 ms"}}])
kit_results.record_step(out, "correctness", "failed", 3.25, "1 of 2 pass")
saved = json.load(open(os.path.join(out, "gpu-results.json")))
expect("json keeps every part", sorted(saved), sorted([
    "steps", "device", "correctness", "sanitizer", "sluice_timing",
    "torch_timing", "copy_gbs", "kernels", "ncu"]))
md = open(os.path.join(out, "gpu-results.md")).read()
for line in ["- device: Fake H200", "1 of 2 cases pass.",
             "| b | error | - | - | - | crashed / SIGSEGV |",
             "| s | forward | 2.000 | 3.000 | - | 1.50 | - |",
             "| s | backward | 4.000 | 6.000 | - | 1.50 | - |",
             "- s: Sluice outputs with NaN/Inf: d_x",
             "- s: compile: did not finish within the step's time limit",
             "Device-to-device copy: 4000 GB/s",
             "| k1 | normalization | 2.0000 | 4000.0 | 2000 | 50.0 | - |",
             "| k0 | contraction | 1.0000 | 0.0 | 0 | 0.0 | 2000.0 |",
             "| s | k1 | sluice_kernel_2_k1 | ok | Duration 2 ms |",
             "| correctness | failed | 3.2 | 1 of 2 pass |"]:
    if line not in md:
        failures.append("gpu-results.md lacks %r" % line)

# The subprocess wrapper: a crash and a hang each become one result.
code, text = gpu_kit.execute([sys.executable, "-c",
                              "import os, signal; "
                              "os.kill(os.getpid(), signal.SIGSEGV)"], 30)
expect("crash code", code, -11)
expect("crash named", "(crashed: SIGSEGV)" in text, True)
code, text = gpu_kit.execute([sys.executable, "-c",
                              "import time; print('started', flush=True); "
                              "time.sleep(60)"], 2)
expect("hang", (code, "started" in text, "(killed after 2 s)" in text),
       (None, True, True))
expect("no budget", gpu_kit.execute(["true"], 0.5)[0], None)

# The outputs of failing cases are kept in one file, up to a size limit.
import argparse  # noqa: E402
import numpy as np  # noqa: E402
case_dir = os.path.join(work, "work", "correctness", "bad")
os.makedirs(case_dir)
np.save(os.path.join(case_dir, "y.npy"), np.ones((4, 4), np.float32))
np.save(os.path.join(case_dir, "d_x.npy"), np.zeros((64, 64), np.float32))
args = argparse.Namespace(work=os.path.join(work, "work"), out=out)
gpu_kit.keep_failed_outputs(args, ["bad"], limit=1024)
kept = np.load(os.path.join(out, "failed-outputs.npz"))
expect("kept outputs", sorted(kept.files), ["bad/y"])
expect("kept values", float(kept["bad/y"].sum()), 16.0)

if failures:
    print("selftest FAILED:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("selftest ok")
