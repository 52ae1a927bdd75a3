"""Compile time of sluicec, spec to report (no nvcc), and how it grows.

usage: compile_time.py SLUICEC [--spec SPEC] [--layers 1,2,4,8,16] [--runs N]

1. `sluicec SPEC -o DIR --quiet` N times (default examples/bert-large.json):
   the median CPU time (user + sys of the child) and wall time.
2. The same layer chained L times in one graph (the spec's --emit=input-ir
   graph copied L times, layer n's input the output of layer n - 1, each
   with its own weights and op names; training specs stay training), for
   each L of --layers: ops in the input graph, median CPU time, CPU time per
   op, and the ratio of that per-op time to the one-layer per-op time (at
   most about 1 when the compile time grows linearly with the ops).

Numbers come from the runs; nothing is pinned. CPU time is what a shared
machine measures reliably; wall time is printed beside it.
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(command):
    """Runs `command`; returns (child CPU seconds, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def median_times(command, runs):
    samples = [timed(command) for _ in range(runs)]
    return (statistics.median(s[0] for s in samples),
            statistics.median(s[1] for s in samples))


ARG = re.compile(r'%(\w+): (!sluice\.tensor<[^>]*>) \{sluice\.name = "([^"]*)"([^}]*)\}')
VALUE = re.compile(r"%(\w+)")
NAME = re.compile(r'sluice\.name = "([^"]*)"')


def chain(module_text, layers):
    """The input graph of `module_text` chained `layers` times."""
    lines = module_text.rstrip("\n").split("\n")
    header_index = next(i for i, line in enumerate(lines) if "sluice.graph @" in line)
    header = lines[header_index]
    body = lines[header_index + 1:-2]  # up to the graph's and module's "}"
    graph_name = re.search(r"sluice\.graph @(\"[^\"]*\"|[\w.-]+)", header).group(1)
    args_text = header[header.index("(") + 1:header.index(") -> (")]
    results_text = header[header.index(") -> (") + len(") -> ("):header.rindex(") {")]
    args = ARG.findall(args_text)
    input_arg = args[0][0]
    weights = {a[0] for a in args[1:]}
    returned = VALUE.search(body[-1]).group(1)
    new_args = [f"%{input_arg}: {args[0][1]} {{sluice.name = \"{args[0][2]}\"{args[0][3]}}}"]
    new_body = []
    for n in range(layers):
        for name, type_, label, rest in args[1:]:
            new_args.append(f"%{name}_L{n}: {type_} {{sluice.name = \"{label}_L{n}\"{rest}}}")

        def value(match, n=n):
            token = match.group(1)
            if token == input_arg:
                return f"%{input_arg}" if n == 0 else f"%L{n - 1}_{returned}"
            if token in weights:
                return f"%{token}_L{n}"
            return f"%L{n}_{token}"

        for line in body[:-1]:
            line = VALUE.sub(value, line)
            new_body.append(NAME.sub(lambda m, n=n: f'sluice.name = "L{n}.{m.group(1)}"', line))
    result_type = body[-1].split(" : ", 1)[1]
    new_body.append(f"    return %L{layers - 1}_{returned} : {result_type}")
    new_header = (f"  sluice.graph @{graph_name}({', '.join(new_args)}) -> ({results_text}) {{")
    return "\n".join(lines[:header_index] + [new_header] + new_body + lines[-2:]) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sluicec")
    parser.add_argument("--spec", default=os.path.join(ROOT, "examples", "bert-large.json"))
    parser.add_argument("--layers", default="1,2,4,8,16")
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    work = tempfile.mkdtemp(prefix="sluice-compile-time-")
    cpu, wall = median_times([options.sluicec, options.spec, "-o", f"{work}/spec", "--quiet"],
                             options.runs)
    print(f"{os.path.basename(options.spec)}: spec to report, median of {options.runs}: "
          f"{cpu:.3f} s CPU, {wall:.3f} s wall")
    module = subprocess.run([options.sluicec, options.spec, "--emit=input-ir"], check=True,
                            capture_output=True, text=True).stdout
    print(f"{'layers':>6} {'ops':>6} {'CPU s':>8} {'wall s':>8} {'CPU ms/op':>10} {'vs 1 layer':>10}")
    per_op_one = None
    for layers in (int(n) for n in options.layers.split(",")):
        path = f"{work}/chain{layers}.mlir"
        text = chain(module, layers)
        open(path, "w").write(text)
        ops = sum(1 for line in text.split("\n") if re.match(r"\s+%\S+( = |, )", line))
        cpu, wall = median_times([options.sluicec, path, "-o", f"{work}/chain{layers}",
                                  "--quiet"], options.runs)
        per_op = cpu / ops
        if per_op_one is None:
            per_op_one = per_op
        print(f"{layers:>6} {ops:>6} {cpu:>8.3f} {wall:>8.3f} {per_op * 1e3:>10.3f} "
              f"{per_op / per_op_one if per_op_one else 0:>10.2f}")


if __name__ == "__main__":
    sys.exit(main())
