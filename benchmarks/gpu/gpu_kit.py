#!/usr/bin/env python3
"""The steps of gpu-kit/run.sh, on the GPU machine (docs/GPU.md).

  gpu_kit.py STEP --kit KIT --out OUTDIR --work DIR --budget SECONDS
  gpu_kit.py note STEP STATUS SECONDS MESSAGE --out OUTDIR

STEP is one of env, correctness, sanitizer, timing, profile, torch, ncu.
Needs python3 and numpy (torch only for the torch step). Every external
program (the CUDA runner, compute-sanitizer, module_timer, the PyTorch
script, ncu) runs as a subprocess under a time limit taken from the step's
budget, so a crashing or hanging module costs one entry, not the run. Each
result is written to OUTDIR/gpu-results.json and .md as soon as it is known
(kit_results.py).
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kit_results as results  # noqa: E402
import profile_db  # noqa: E402
import timings  # noqa: E402

INPUTS = os.path.join(HERE, "test", "Compile", "Inputs")
SANITIZER_TOOLS = ("memcheck", "racecheck", "synccheck")
UNAVAILABLE = re.compile(
    r"Device not supported|LibraryNotLoaded|not supported on this|"
    r"ERR_NVGPUCTRPERM|Unable to find injection library|"
    r"Profiling is not supported|permission", re.IGNORECASE)


class Budget:
    """Seconds left for this step; every subprocess gets at most that."""

    def __init__(self, seconds):
        self.deadline = time.time() + seconds

    def left(self):
        return self.deadline - time.time()

    def limit(self, wanted):
        return max(0.0, min(wanted, self.left()))


def execute(command, timeout, cwd=None, env=None, stdin_text=None):
    """(returncode or None on time-out, output). A signal (a crash) is a
    negative return code, named in the output. `stdin_text`, if given, is
    the command's standard input."""
    if timeout <= 1:
        return None, "no time left in this step's budget"
    try:
        proc = subprocess.Popen(command, cwd=cwd, env=env,
                                stdin=None if stdin_text is None
                                else subprocess.PIPE,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT,
                                universal_newlines=True,
                                start_new_session=True)
    except OSError as error:
        return 127, "cannot start %s: %s" % (command[0], error)
    try:
        output, _ = proc.communicate(input=stdin_text, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        return None, (output or "") + "\n(killed after %.0f s)" % timeout
    if proc.returncode < 0:
        try:
            name = signal.Signals(-proc.returncode).name
        except ValueError:
            name = "signal %d" % -proc.returncode
        output += "\n(crashed: %s)" % name
    return proc.returncode, output


def tail(text, size=1500):
    text = text.strip()
    return text if len(text) <= size else "..." + text[-size:]


def load_kit(kit):
    with open(os.path.join(kit, "kit.json")) as f:
        return json.load(f)


def find_tool(name):
    found = shutil.which(name)
    if found:
        return found
    candidates = ["/usr/local/cuda/bin/" + name]
    if name == "ncu":
        base = "/usr/local/cuda"
        candidates += [os.path.join(base, d, "ncu") for d in
                       sorted(os.listdir(base)) if d.startswith("nsight")] \
            if os.path.isdir(base) else []
    for candidate in candidates:
        if os.access(candidate, os.X_OK):
            return candidate
    return None


# ---------------------------------------------------------------------------
# env


def step_env(args, budget):
    device = {}
    code, output = execute(["nvidia-smi", "--query-gpu=name,driver_version,"
                            "memory.total,clocks.max.sm,clocks.max.mem",
                            "--format=csv,noheader"], budget.limit(20))
    fields = [f.strip() for f in output.splitlines()[0].split(",")] \
        if code == 0 and output.strip() else []
    if len(fields) >= 5:
        device.update(name=fields[0], driver=fields[1], memory=fields[2],
                      clocks="SM %s, memory %s" % (fields[3], fields[4]))
    else:
        device["name"] = "unknown (nvidia-smi: %s)" % tail(output, 200)
    for key, tool in (("compute_sanitizer", "compute-sanitizer"),
                      ("ncu", "ncu")):
        path = find_tool(tool)
        if not path:
            device[key] = "not found"
            continue
        code, output = execute([path, "--version"], budget.limit(20))
        lines = [l for l in output.splitlines() if l.strip()]
        device[key] = "%s (%s)" % (path, lines[-1] if lines else "?")
    code, output = execute([sys.executable, "-c", "import torch, numpy; "
                            "print(torch.__version__, torch.version.cuda, "
                            "torch.cuda.is_available(), numpy.__version__)"],
                           budget.limit(60))
    device["torch"] = output.strip().splitlines()[-1] if code == 0 and \
        output.strip() else "unavailable: " + tail(output, 300)
    res = results.load(args.out)
    res["device"] = device
    res["kit"] = {k: v for k, v in load_kit(args.kit).items()
                  if k in ("created", "commit", "arch", "quick")}
    results.save(args.out, res)
    return "ok", device.get("name", "")


# ---------------------------------------------------------------------------
# correctness


def compare(actual, expected, case, budget):
    """compare_backends.py with the CPU backend's tolerance for the case's
    dtype (0 for the masks): (passed, {tensor: error}, output)."""
    command = [sys.executable, os.path.join(INPUTS, "compare_backends.py"),
               "compare", "--dtype", case["dtype"], "--scale", "d_bk=d_bq",
               actual, expected]
    if case.get("tolerance") is not None:
        command += ["--tol", repr(case["tolerance"])]
    code, output = execute(command, budget.limit(60))
    errors = {}
    for line in output.splitlines():
        match = re.match(r"(ok|FAIL) (\S+) rel err (\S+)", line)
        if match:
            errors[match.group(2)] = float(match.group(3))
    return code == 0, errors, output


def worst(errors):
    if not errors:
        return "-"
    name = max(errors, key=errors.get)
    return "%.3g (%s)" % (errors[name], name)


def run_case(args, case, outputs, budget, env=None):
    directory = os.path.join(args.kit, "cases", case["name"])
    return execute(
        [sys.executable, os.path.join(INPUTS, "run_cuda_module.py"),
         os.path.join(directory, case["library"]), "--inputs",
         os.path.join(directory, "in"), "--outputs", outputs, "--seed",
         str(case["seed"])], budget.limit(90), env=env)


def check_case(args, case, budget):
    directory = os.path.join(args.kit, "cases", case["name"])
    outputs = os.path.join(args.work, "correctness", case["name"])
    entry = {"name": case["name"], "dtype": case["dtype"],
             "options": " ".join(case["options"]),
             "tolerance": case.get("tolerance")}
    code, output = run_case(args, case, outputs, budget)
    if code != 0:
        message = "the CUDA module did not run: " + tail(output, 1000)
        # An asynchronous error (an illegal address) surfaces at the
        # stream's synchronization without the kernel's name; with
        # synchronous launches the check after the failing launch names it.
        env = dict(os.environ, CUDA_LAUNCH_BLOCKING="1")
        code, again = run_case(args, case, outputs + "-blocking", budget, env)
        if code != 0:
            message += " | with CUDA_LAUNCH_BLOCKING=1: " + tail(again, 1000)
        else:
            message += " | with CUDA_LAUNCH_BLOCKING=1 it ran"
        entry.update(status="error", message=message)
        return entry
    ok_cpu, cpu_errors, cpu_text = compare(outputs,
                                           os.path.join(directory, "cpu"),
                                           case, budget)
    ok_ref, ref_errors, ref_text = compare(outputs,
                                           os.path.join(directory, "ref"),
                                           case, budget)
    entry.update(vs_cpu=cpu_errors, vs_ref=ref_errors,
                 worst_cpu=worst(cpu_errors), worst_ref=worst(ref_errors))
    if entry["tolerance"] is None:
        match = re.search(r"\(tol (\S+)\)", cpu_text)
        entry["tolerance"] = float(match.group(1)) if match else None
    if ok_cpu:
        entry["status"] = "pass"
        if not ok_ref:
            entry["message"] = "vs reference: " + tail(ref_text, 400)
    else:
        entry.update(status="fail", message=tail(cpu_text, 600))
    return entry


def keep_failed_outputs(args, names, limit=16 << 20):
    """The GPU outputs of the failing cases, in OUTDIR/failed-outputs.npz
    (`case/tensor` keys, up to `limit` bytes), so that they can be studied
    after the machine is gone."""
    import numpy as np
    arrays, total = {}, 0
    for name in names:
        directory = os.path.join(args.work, "correctness", name)
        for file in sorted(os.listdir(directory)):
            values = np.load(os.path.join(directory, file))
            if total + values.nbytes > limit:
                continue
            arrays["%s/%s" % (name, file[:-4])] = values
            total += values.nbytes
    if arrays:
        np.savez_compressed(os.path.join(args.out, "failed-outputs.npz"),
                            **arrays)


def step_correctness(args, budget):
    kit = load_kit(args.kit)
    done = []
    for case in kit["cases"]:
        if budget.left() < 5:
            done.append({"name": case["name"], "status": "not run",
                         "message": "no time left in the step's budget"})
        else:
            done.append(check_case(args, case, budget))
        results.update(args.out, "correctness", done)
        print("correctness: %s: %s %s" % (
            case["name"], done[-1]["status"], done[-1].get("worst_cpu", "")),
            flush=True)
    failed = [c["name"] for c in done if c["status"] != "pass"]
    keep_failed_outputs(args, [c["name"] for c in done
                               if c["status"] == "fail"])
    return ("failed" if failed else "ok",
            "%d of %d pass%s" % (len(done) - len(failed), len(done),
                                 "; not passing: " + ", ".join(failed)
                                 if failed else ""))


# ---------------------------------------------------------------------------
# sanitizer


def sanitizer_verdict(code, output):
    """(status, errors, message) from one compute-sanitizer run."""
    if code is None:
        return "timed out", None, tail(output, 300)
    if UNAVAILABLE.search(output) and not re.search(
            r"(ERROR|RACECHECK) SUMMARY", output):
        return "unavailable", None, tail(output, 300)
    summary = re.search(r"ERROR SUMMARY: (\d+) error", output)
    race = re.search(r"RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) "
                     r"errors?", output)
    count = int((race or summary).group(1)) if (race or summary) else None
    if count is None:
        return "error", None, tail(output, 600)
    if count:
        return "errors", count, tail(output, 1200)
    if code != 0:
        return "error", 0, "runner failed: " + tail(output, 600)
    return "clean", 0, ""


def step_sanitizer(args, budget):
    tool = find_tool("compute-sanitizer")
    if not tool:
        return "unavailable", "compute-sanitizer not found"
    kit = load_kit(args.kit)
    runs = []
    for case in kit["cases"]:
        if not case.get("sanitizer"):
            continue
        directory = os.path.join(args.kit, "cases", case["name"])
        for check in SANITIZER_TOOLS:
            outputs = os.path.join(args.work, "sanitizer",
                                   case["name"] + "-" + check)
            command = [tool, "--tool", check, "--error-exitcode", "86",
                       sys.executable, os.path.join(INPUTS,
                                                    "run_cuda_module.py"),
                       os.path.join(directory, case["library"]), "--inputs",
                       os.path.join(directory, "in"), "--outputs", outputs,
                       "--seed", str(case["seed"])]
            runs.append((case["sanitizer"] + " (" + case["name"] + ")",
                         check, command))
    # The runs are independent: all at once, each under the step's budget.
    procs = []
    for label, check, command in runs:
        log = open(os.path.join(args.work, "sanitizer-%d.log" % len(procs)),
                   "w+")
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        procs.append((label, check, proc, log))
    entries = []
    for label, check, proc, log in procs:
        try:
            code = proc.wait(timeout=max(1.0, budget.left() - 3))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = None
        log.seek(0)
        status, errors, message = sanitizer_verdict(code, log.read())
        entries.append({"case": label, "tool": check, "status": status,
                        "errors": errors, "message": message})
        results.update(args.out, "sanitizer", entries)
        print("sanitizer: %s %s: %s" % (label, check, status), flush=True)
    bad = [e for e in entries if e["status"] not in ("clean", "unavailable")]
    if all(e["status"] == "unavailable" for e in entries):
        return "unavailable", entries[0]["message"][:300] if entries else ""
    return ("failed" if bad else "ok",
            "%d runs clean, %d unavailable, %d not clean" % (
                sum(e["status"] == "clean" for e in entries),
                sum(e["status"] == "unavailable" for e in entries), len(bad)))


# ---------------------------------------------------------------------------
# timing and profile (module_timer)


def module_timer(args, library, budget, runs_left, extra=()):
    """module_timer's JSON, or None and the reason. This run gets an equal
    share of what is left for `runs_left` runs: module_timer stops starting
    iterations at its share (--time-limit), the process is killed 20 s
    after it (start-up, cuBLAS, the copy)."""
    share = max(3.0, (budget.left() - 3) / runs_left - 20)
    command = [os.path.join(args.kit, "bin", "module_timer"), library,
               "--iterations", str(args.iterations), "--warmup", "5",
               "--time-limit", "%.1f" % share] + list(extra)
    code, output = execute(command, budget.limit(share + 20))
    if code != 0:
        return None, tail(output)
    try:
        return json.loads(output[output.index("{"):]), ""
    except ValueError:
        return None, "unreadable module_timer output: " + tail(output)


def no_timing_modules(kit):
    return None if kit["timing"] else (
        "skipped", "the kit has no timing modules (built with --quick)")


def step_timing(args, budget):
    kit = load_kit(args.kit)
    if no_timing_modules(kit):
        return no_timing_modules(kit)
    timing = {}
    for index, entry in enumerate(kit["timing"]):
        library = os.path.join(args.kit, "timing", entry["name"],
                               entry["library"])
        data, error = module_timer(args, library, budget,
                                   len(kit["timing"]) - index)
        if data is None:
            timing[entry["name"]] = {"error": error}
        else:
            timing[entry["name"]] = {
                "phases": {p["phase"]: {k: p[k] for k in
                                        ("median_ms", "min_ms", "max_ms")}
                           for p in data["phases"]},
                "iterations": data["iterations"],
                "time_limited": data.get("time_limited", False),
                "nonfinite_outputs": data.get("nonfinite_outputs", [])}
        results.update(args.out, "sluice_timing", timing)
        print("timing: %s: %s" % (entry["name"], timing[entry["name"]]),
              flush=True)
    bad = [n for n, t in timing.items()
           if t.get("error") or t.get("nonfinite_outputs")]
    return ("failed" if bad else "ok",
            "problems in " + ", ".join(bad) if bad else "")


def step_profile(args, budget):
    kit = load_kit(args.kit)
    if no_timing_modules(kit):
        return no_timing_modules(kit)
    res = results.load(args.out)
    target = args.profile_target or profile_db.target_of(
        res.get("device", {}).get("name"))
    kernels, problems, measured = res.get("kernels", {}), [], []
    # The layers, then the same layers in other layout policies (profile
    # only: their kernels in other layouts, for the database).
    modules = kit["timing"] + kit.get("profile_variants", [])
    for index, entry in enumerate(modules):
        directory = os.path.join(args.kit, "timing", entry["name"])
        # The copy is measured once, in the first run.
        extra = ["--copy-bytes", str(args.copy_bytes)] if index == 0 else []
        data, error = module_timer(
            args, os.path.join(directory, entry["profiled"]), budget,
            len(modules) - index, extra)
        if data is None:
            problems.append("%s: %s" % (entry["name"], error))
            continue
        if data.get("copy_gbs"):
            results.update(args.out, "copy_gbs", data["copy_gbs"])
        copy = results.load(args.out).get("copy_gbs")
        with open(os.path.join(directory, "report.json")) as f:
            report = json.load(f)
        table = timings.kernel_rates(data, report)
        for rows in table.values():
            for row in rows:
                if copy:
                    row["copy_fraction"] = row["gbs"] / copy
        kernels[entry["name"]] = table
        results.update(args.out, "kernels", kernels)
        measured += profile_db.measured_entries(
            entry["name"], report, table,
            profile_db.load_predicted(directory, target))
        write_profile_database(args.out, target, measured)
        if not any(table.values()):
            problems.append("%s: no per-kernel times (sluice_profile "
                            "returned none)" % entry["name"])
    return ("failed" if problems else "ok", "; ".join(problems))


def write_profile_database(out, target, measured):
    """OUT/profile-db.json for `sluicec --target T --profile`, and each
    kernel's measured and predicted time in the results."""
    path, count = profile_db.write(out, target or "unknown", measured)
    results.update(out, "profile_db", {
        "file": os.path.basename(path), "target": target, "kernels": count,
        "measured": measured})


# ---------------------------------------------------------------------------
# torch


def step_torch(args, budget):
    kit = load_kit(args.kit)
    if no_timing_modules(kit):
        return no_timing_modules(kit)
    specs = [os.path.join(args.kit, "timing", t["name"], "spec.json")
             for t in kit["timing"]]
    lines = os.path.join(args.work, "torch.jsonl")
    command = [sys.executable, os.path.join(HERE, "torch_layers.py"),
               "--out", lines, "--iterations", str(args.iterations),
               "--deadline", str(time.time() + budget.left() - 5)] + specs
    code, output = execute(command, budget.limit(budget.left() - 2))
    print(output, flush=True)
    torch = {}
    started = set()
    if os.path.exists(lines):
        for line in open(lines):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            key = (record["shape"], record["mode"])
            if record.get("status") == "started":
                started.add(key)
                continue
            started.discard(key)
            torch.setdefault(record["shape"], {})[record["mode"]] = record
    for shape, mode in started:
        torch.setdefault(shape, {})[mode] = {
            "error": "did not finish within the step's time limit (%s)" % (
                "compile-time limit" if mode == "compile" else "time limit")}
    results.update(args.out, "torch_timing", torch)
    if code != 0:
        return ("timed out" if code is None else "failed", tail(output, 400))
    return "ok", ""


# ---------------------------------------------------------------------------
# ncu


def ncu_metrics(output):
    """Metric name -> "value unit" from ncu --csv --page details."""
    metrics = {}
    wanted = ("Duration", "DRAM Throughput", "Memory Throughput",
              "Compute (SM) Throughput", "Achieved Occupancy")
    for line in output.splitlines():
        cells = [c.strip('"') for c in re.findall(r'"[^"]*"', line)]
        if len(cells) >= 3 and cells[-3] in wanted:
            metrics[cells[-3]] = "%s %s" % (cells[-1], cells[-2])
    return metrics


def step_ncu(args, budget):
    tool = find_tool("ncu")
    if not tool:
        return "unavailable", "ncu not found"
    kit = load_kit(args.kit)
    res = results.load(args.out)
    candidates = []
    for entry in kit["timing"]:
        table = res.get("kernels", {}).get(entry["name"], {})
        functions = json.load(open(os.path.join(
            args.kit, "timing", entry["name"], "kernels.json")))
        for phase_index, phase in enumerate(("forward", "backward")):
            for index, row in enumerate(table.get(phase, [])):
                launched = functions.get(str(phase_index), {}).get(
                    str(index), [])
                if row["class"] != "contraction" and launched:
                    candidates.append((row["ms"], entry, phase, row,
                                       launched[0]))
    if not candidates:
        return "skipped", "no profiled memory-bound kernels to look at"
    runs = []
    for _, entry, phase, row, function in sorted(
            candidates, key=lambda c: -c[0])[:3]:
        if budget.left() < 30:
            runs.append({"shape": entry["name"], "kernel": row["kernel"],
                         "function": function, "status": "not run",
                         "message": "no time left"})
            continue
        library = os.path.join(args.kit, "timing", entry["name"],
                               entry["library"])
        code, output = execute(
            [tool, "--kernel-name", function, "--launch-count", "1",
             "--section", "SpeedOfLight", "--section", "Occupancy", "--csv",
             "--page", "details", os.path.join(args.kit, "bin",
                                               "module_timer"), library,
             "--iterations", "1", "--warmup", "0"],
            budget.limit(budget.left() - 5))
        metrics = ncu_metrics(output)
        status = "ok" if metrics else ("unavailable" if UNAVAILABLE.search(
            output) else ("timed out" if code is None else "failed"))
        runs.append({"shape": entry["name"], "phase": phase,
                     "kernel": row["kernel"], "function": function,
                     "status": status, "metrics": metrics,
                     "message": "" if metrics else tail(output, 400)})
        results.update(args.out, "ncu", runs)
    results.update(args.out, "ncu", runs)
    return ("ok" if all(r["status"] == "ok" for r in runs) else
            runs[-1]["status"], "")


# ---------------------------------------------------------------------------
# attention


def step_attention(args, budget):
    """bin/stream_attention_check: the CUDA streaming attention kernels
    against the C++ ones (f16/bf16/f32, head dims 32-128, causal, dropout,
    odd lengths, the tiles of sm_80 and sm_90)."""
    binary = os.path.join(args.kit, "bin", "stream_attention_check")
    if not os.path.isfile(binary):
        return "skipped", "the kit has no stream_attention_check (--quick)"
    code, output = execute([binary], budget.limit(budget.left()))
    print(output, flush=True)
    if code == 0 and output.startswith("skipped"):
        return "unavailable", tail(output, 300)
    lines = [line for line in output.splitlines()
             if line.startswith(("ok", "FAIL"))]
    failing = [line for line in lines if line.startswith("FAIL")]
    results.update(args.out, "stream_attention",
                   {"cases": len(lines), "failing": failing[:40],
                    "returncode": code})
    if code is None:
        return "timed out", tail(output, 300)
    timed = time_attention(args, binary, budget)
    return ("ok" if code == 0 else "failed",
            "%d lines, %d failing; %s" % (len(lines), len(failing), timed))


def time_attention(args, binary, budget):
    """`stream_attention_check --time`, then PyTorch's
    scaled_dot_product_attention on the same shapes (attention_torch.py);
    records attention_timing and returns a summary for the step's note."""
    code, output = execute([binary, "--time"], budget.limit(budget.left() / 3))
    print(output, flush=True)
    timed = [line for line in output.splitlines() if line.startswith("time ")]
    if code != 0 or not timed:
        results.update(args.out, "attention_timing",
                       {"error": tail(output, 300)})
        return "timing failed"
    script = os.path.join(HERE, "attention_torch.py")
    torch_code, torch_output = execute(
        [sys.executable, script, "--device", args.torch_device],
        budget.limit(budget.left() - 2), stdin_text="\n".join(timed))
    print(torch_output, flush=True)
    rows = []
    for line in torch_output.splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue
    if not rows:  # torch missing or failing: keep Sluice's times
        import attention_torch
        rows = [attention_torch.with_rates(shape)
                for shape in attention_torch.parse(timed)]
    results.update(args.out, "attention_timing",
                   {"shapes": rows, "torch_returncode": torch_code,
                    "torch_output": tail(torch_output, 300)
                    if torch_code != 0 else ""})
    return "%d shapes timed" % len(rows)


# ---------------------------------------------------------------------------
# python: the sluice package's CUDA path (python/tests/gpu_check.py)


def step_python(args, budget):
    """gpu_check.py on the kit's python-check layers: each layer and a
    4-layer stack on one shared scratch region against torch, on the default
    and a side stream, and the device memory of the stack's contexts."""
    check = os.path.join(args.kit, "python", "tests", "gpu_check.py")
    layers = os.path.join(args.kit, "python-check")
    if not os.path.isdir(layers):
        return "skipped", "no python check in this kit (a --quick kit)"
    env = dict(os.environ, PYTHONPATH=os.path.join(args.kit, "python"))
    code, output = execute(
        [sys.executable, check, layers, "--device", args.python_device],
        budget.limit(budget.left() - 2), env=env)
    print(output, flush=True)
    results.update(args.out, "python_check", [
        line for line in output.splitlines()
        if " max error " in line or line.startswith(("stack contexts",
                                                     "measured:"))])
    if code != 0:
        return ("timed out" if code is None else "failed", tail(output, 400))
    return "ok", ""


STEPS = {"env": step_env, "correctness": step_correctness,
         "attention": step_attention,
         "sanitizer": step_sanitizer, "timing": step_timing,
         "profile": step_profile, "torch": step_torch, "ncu": step_ncu,
         "python": step_python}


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "note":
        parser = argparse.ArgumentParser()
        parser.add_argument("note")
        parser.add_argument("step")
        parser.add_argument("status")
        parser.add_argument("seconds", type=float)
        parser.add_argument("message")
        parser.add_argument("--out", required=True)
        args = parser.parse_args()
        results.record_step(args.out, args.step, args.status, args.seconds,
                            args.message)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=sorted(STEPS))
    parser.add_argument("--kit", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--budget", type=float, required=True)
    parser.add_argument("--iterations", type=int, default=40,
                        help="timed iterations (Sluice and PyTorch)")
    parser.add_argument("--torch-device", default="cuda",
                        choices=("cuda", "cpu"),
                        help="where the attention step runs PyTorch's "
                        "attention (cpu: tests)")
    parser.add_argument("--copy-bytes", type=int, default=1 << 30,
                        help="size of the copy that measures the bandwidth")
    parser.add_argument("--profile-target", default="",
                        help="the built-in target the profile database is "
                        "for (default: the device's, from nvidia-smi)")
    parser.add_argument("--python-device", default="cuda",
                        choices=("cuda", "cpu"),
                        help="where the python step runs the layers")
    args = parser.parse_args()
    start = time.time()
    try:
        status, message = STEPS[args.step](args, Budget(args.budget))
    except Exception as error:  # report it, never lose the later steps
        import traceback
        traceback.print_exc()
        status, message = "failed", "%s: %s" % (type(error).__name__, error)
    results.record_step(args.out, args.step, status, time.time() - start,
                        message)
    print("%s: %s %s" % (args.step, status, message), flush=True)
    return 0 if status in ("ok", "skipped", "unavailable") else 1


if __name__ == "__main__":
    sys.exit(main())
