"""Compiles layer specs several times under different heap layouts and
checks that every output is byte-identical (docs/Testing.md,
"Deterministic output").

The first run of each (spec, target) has the plain environment; each later
run gets one of the perturbations below, picked in turn: glibc's allocator
filling fresh and freed blocks with a byte (MALLOC_PERTURB_), no tcache,
tiny mmap threshold, one arena, a large environment (which moves the stack
and the first heap blocks), address-space randomization off (setarch -R,
where the kernel allows it), and output directories of different lengths.
A pass whose decisions depend on pointer values or on uninitialized memory
gives different bytes under some of these.

  check_deterministic.py --sluicec CMD --out DIR --targets v100,h100
      [--runs N] [--emit report|cuda|cpp] SPEC... [-- SLUICEC-OPTIONS]

Prints one summary line; on a difference, names the run, the file and the
first differing line, and exits 1.
"""
import argparse
import os
import shlex
import shutil
import subprocess
import sys

REPORT_FILES = ("graph.mlir", "report.json", "report.md")


def perturbations(aslr_off_works):
    """(name, extra environment, command prefix) in the order runs use them."""
    pad = "x" * 70000
    variants = [
        ("MALLOC_PERTURB_=165", {"MALLOC_PERTURB_": "165"}, []),
        ("tcache off + perturb 90",
         {"GLIBC_TUNABLES": "glibc.malloc.tcache_count=0:glibc.malloc.perturb=90"},
         []),
        ("mmap threshold 4096 + top pad 256 KiB",
         {"GLIBC_TUNABLES":
          "glibc.malloc.mmap_threshold=4096:glibc.malloc.top_pad=262144"}, []),
        ("one arena + 70 KB environment",
         {"MALLOC_ARENA_MAX": "1", "SLUICE_DETERMINISM_PAD": pad}, []),
    ]
    if aslr_off_works:
        variants.append(("setarch -R + MALLOC_PERTURB_=7",
                         {"MALLOC_PERTURB_": "7"}, ["setarch", "-R"]))
    return variants


def setarch_works():
    if not shutil.which("setarch"):
        return False
    try:
        return subprocess.run(["setarch", "-R", "true"],
                              capture_output=True).returncode == 0
    except OSError:
        return False


def first_difference(a, b):
    """The 1-based number of the first line where `a` and `b` differ."""
    la, lb = a.splitlines(), b.splitlines()
    for number, (x, y) in enumerate(zip(la, lb), start=1):
        if x != y:
            return number, x.decode(errors="replace"), y.decode(errors="replace")
    number = min(len(la), len(lb)) + 1
    at = lambda lines: (lines[number - 1].decode(errors="replace")
                        if number <= len(lines) else "<end of file>")
    return number, at(la), at(lb)


def compile_once(args, spec, target, run, variant, options):
    """The outputs of one run, by file name."""
    name, extra, prefix = variant
    env = dict(os.environ)
    env.update(extra)
    base = os.path.splitext(os.path.basename(spec))[0]
    # Output paths of different lengths move argv and the path strings.
    out = os.path.join(args.out, f"{base}-{target}-{run}" + "d" * (17 * run))
    command = prefix + shlex.split(args.sluicec) + [spec, "--target", target,
                                                   "--quiet"] + options
    if args.emit == "report":
        command += ["-o", out]
    else:
        command += ["--emit=" + args.emit]
    result = subprocess.run(command, env=env, capture_output=True)
    if result.returncode != 0:
        sys.exit(f"error: {' '.join(command)} ({name}) exited with "
                 f"{result.returncode}:\n{result.stderr.decode(errors='replace')}")
    if args.emit != "report":
        return {"stdout": result.stdout}
    outputs = {}
    for file in REPORT_FILES:
        with open(os.path.join(out, file), "rb") as f:
            outputs[file] = f.read()
    return outputs


def main():
    argv = sys.argv[1:]
    options = []
    if "--" in argv:
        options = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    parser = argparse.ArgumentParser()
    parser.add_argument("--sluicec", required=True,
                        help="the compiler command (split like a shell)")
    parser.add_argument("--out", required=True)
    parser.add_argument("--targets", default="v100,a100,h100,h200")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--emit", choices=("report", "cuda", "cpp"),
                        default="report")
    parser.add_argument("specs", nargs="+")
    args = parser.parse_args(argv)
    if args.runs < 2:
        sys.exit("error: --runs must be at least 2 to compare anything")
    os.makedirs(args.out, exist_ok=True)
    variants = perturbations(setarch_works())
    targets = args.targets.split(",")
    plain = ("plain", {}, [])
    turn = 0
    compilations = 0
    for spec in args.specs:
        for target in targets:
            reference = compile_once(args, spec, target, 0, plain, options)
            compilations += 1
            for run in range(1, args.runs):
                variant = variants[turn % len(variants)]
                turn += 1
                outputs = compile_once(args, spec, target, run, variant, options)
                compilations += 1
                for file, data in reference.items():
                    if outputs[file] == data:
                        continue
                    line, want, got = first_difference(data, outputs[file])
                    print(f"differs: {os.path.basename(spec)} --target {target} "
                          f"{' '.join(options)} run {run} ({variant[0]}): "
                          f"{file} line {line}:\n  plain: {want}\n  this:  {got}")
                    sys.exit(1)
    print(f"deterministic: {len(args.specs)} specs x {len(targets)} targets x "
          f"{args.runs} runs ({compilations} compilations, --emit={args.emit}"
          f"{' ' + ' '.join(options) if options else ''}): identical")
    print("perturbations: " + "; ".join(v[0] for v in variants))


if __name__ == "__main__":
    main()
