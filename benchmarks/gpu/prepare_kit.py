#!/usr/bin/env python3
"""Builds the GPU kit (docs/GPU.md); called by benchmarks/gpu/prepare.sh.

  prepare_kit.py [--out DIR] [--quick] [--sluicec PATH]
  prepare_kit.py --check DIR

Builds, with this checkout's sluicec and nvcc and nothing that needs a GPU,
a directory that runs on a bare GPU machine (CUDA, python3 with numpy and
torch; no MLIR, no network): the correctness suite's CUDA modules (sm_90)
with their inputs and the outputs the CPU backend and the reference
interpreter compute here, the timing modules (plain and -DSLUICE_PROFILE),
module_timer built by nvcc, the Python scripts the GPU side runs, and
run.sh. The directory is built next to DIR and moved into place only when
everything succeeded. --quick builds one correctness module (no timing
modules) for `make test`. --check DIR checks a kit's shape only: every file
the manifest names is there, the size is under the limit, and no ELF file
needs an MLIR/LLVM library (ldd).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PYTHON = "/usr/bin/python3"
ARCH = "sm_90"
# What a device call can carry (the `run` tool's limit is 64 MiB for all
# carried paths; 4 MiB of headroom). SLUICE_KIT_LIMIT_MIB lowers it, for the
# test that proves the check bites (test/GpuKit/full-kit-slow.test).
SIZE_LIMIT = int(os.environ.get("SLUICE_KIT_LIMIT_MIB", "60")) * 1024 * 1024
COMPILE_INPUTS = os.path.join(REPO, "test", "Compile", "Inputs")
SPECS = os.path.join(HERE, "specs")

# The correctness suite: (case name, spec, sluicec options, data seed,
# sanitizer role). Every case's CUDA module runs against the CPU backend and
# the reference interpreter. `d_bk` is measured against d_bq's size (see
# compare_backends.py --scale).
CASES = [
    ("post_relu_f32_train_dropout", "Compile:post_relu_f32_train_dropout.json",
     [], 3, "fused"),
    ("post_relu_f32_train_dropout_unfused",
     "Compile:post_relu_f32_train_dropout.json", ["--fuse=off"], 3,
     "unfused"),
    ("pre_gelu_tanh_causal_f16_train_dropout_bitpack",
     "Compile:pre_gelu_tanh_causal_f16_train_dropout.json",
     ["--mask-policy=bitpack"], 4, "bitpack"),
    ("pre_gelu_tanh_causal_f16_train_dropout",
     "Compile:pre_gelu_tanh_causal_f16_train_dropout.json", [], 4, None),
    ("post_gelu_f16_train", "Compile:post_gelu_f16_train.json", [], 5, None),
    ("post_gelu_bf16_train_dropout",
     "Compile:post_gelu_bf16_train_dropout.json", [], 9, None),
    ("post_gelu_tanh_causal_f32_infer",
     "Compile:post_gelu_tanh_causal_f32_infer.json", [], 6, None),
    ("pre_gelu_causal_f32_train", "Compile:pre_gelu_causal_f32_train.json",
     [], 7, None),
    ("pre_relu_f16_infer", "Compile:pre_relu_f16_infer.json", [], 8, None),
    ("mid_post_gelu_f16_train_dropout",
     "Kit:mid_post_gelu_f16_train_dropout.json", [], 11, None),
    ("mid_post_gelu_f16_train_dropout_unfused",
     "Kit:mid_post_gelu_f16_train_dropout.json", ["--fuse=off"], 11, None),
    ("mid_pre_gelu_tanh_causal_bf16_train_dropout_bitpack",
     "Kit:mid_pre_gelu_tanh_causal_bf16_train_dropout.json",
     ["--mask-policy=bitpack"], 12, None),
    ("mid_post_relu_f32_train", "Kit:mid_post_relu_f32_train.json", [], 13,
     None),
    ("dropout_masks", "Kit:dropout_masks.mlir", [], 14, None),
    ("dropout_masks_unfused", "Kit:dropout_masks.mlir", ["--fuse=off"], 14,
     None),
]
QUICK_CASE = "post_relu_f32_train_dropout_unfused"

# Timing modules: (name, spec).
TIMING = [
    ("bert-large-b8s512", os.path.join(REPO, "examples", "bert-large.json")),
    ("bert-large-b96s128", os.path.join(SPECS, "bert-large-b96s128.json")),
]

# BERT-large in the other layout policies, for the profile step only: its
# kernels in their other candidate layouts (attention as GEMMs, with the
# layouts the selection picks for them and with the builder's), measured
# into the profile database (profile_db.py, docs/Layout.md).
PROFILE_VARIANTS = [
    ("bert-large-b8s512-gemm-attention", TIMING[0][1],
     ["--fuse-streaming=off"]),
    ("bert-large-b8s512-gemm-attention-builder", TIMING[0][1],
     ["--fuse-streaming=off", "--select-layouts=off"]),
]

# The built-in targets (targets/*.json) the model's per-kernel predictions
# are stored for, so the kit compares them with whatever device it runs on.
MODEL_TARGETS = ["a100", "h100", "h200", "v100"]

# What the GPU side runs, copied into the kit (kit path <- repo path). The
# comparison and the CUDA runner are the test suite's own scripts, kept at
# their relative paths so their imports work.
SCRIPTS = {
    "run.sh": "benchmarks/gpu/kit_run.sh",
    "py/gpu_kit.py": "benchmarks/gpu/gpu_kit.py",
    "py/kit_results.py": "benchmarks/gpu/kit_results.py",
    "py/profile_db.py": "benchmarks/gpu/profile_db.py",
    "py/torch_layers.py": "benchmarks/gpu/torch_layers.py",
    "py/attention_torch.py": "benchmarks/gpu/attention_torch.py",
    "py/timings.py": "benchmarks/timings.py",
    "py/test/Compile/Inputs/compare_backends.py":
        "test/Compile/Inputs/compare_backends.py",
    "py/test/Compile/Inputs/run_cuda_module.py":
        "test/Compile/Inputs/run_cuda_module.py",
    "py/test/EndToEnd/Inputs/check_layer.py":
        "test/EndToEnd/Inputs/check_layer.py",
    "py/test/EndToEnd/Inputs/reference_layer.py":
        "test/EndToEnd/Inputs/reference_layer.py",
}

FORBIDDEN_LIBRARIES = re.compile(r"lib(MLIR|LLVM|clang)[^ ]*\.so")


class KitError(Exception):
    pass


def log(message):
    print("prepare: %s" % message, flush=True)


def run(command, what, cwd=None, env=None):
    """Runs `command`; raises KitError with its output's tail on failure."""
    proc = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)
    if proc.returncode != 0:
        raise KitError("%s failed (exit %d): %s\n%s" % (
            what, proc.returncode, " ".join(command), proc.stdout[-4000:]))
    return proc.stdout


def find_nvcc():
    for candidate in (os.environ.get("SLUICE_NVCC"), shutil.which("nvcc"),
                      "/usr/local/cuda/bin/nvcc"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise KitError("cannot find nvcc (looked at $SLUICE_NVCC, PATH and "
                   "/usr/local/cuda/bin/nvcc)")


def spec_path(ref):
    where, name = ref.split(":", 1)
    return os.path.join(COMPILE_INPUTS if where == "Compile" else SPECS, name)


def spec_info(path):
    """(module name, dtype, training, has dropout) of a spec or .mlir graph."""
    if path.endswith(".mlir"):
        match = re.search(r"sluice\.graph @([\w-]+)", open(path).read())
        return match.group(1), "f32", False, True
    with open(path) as f:
        data = json.load(f)
    dropout = data.get("dropout", {"attention": 0.1})
    return (data["name"], data.get("dtype", "f32"), data.get("training", True),
            data.get("training", True) and any(dropout.values()))


def compare(actual, expected, dtype, tol=None):
    """compare_backends.py compare: (passed, {tensor: error}, text)."""
    command = [PYTHON, os.path.join(COMPILE_INPUTS, "compare_backends.py"),
               "compare", "--dtype", dtype, "--scale", "d_bk=d_bq", actual,
               expected]
    if tol is not None:
        command += ["--tol", repr(tol)]
    proc = subprocess.run(command, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)
    errors = {}
    for line in proc.stdout.splitlines():
        match = re.match(r"(ok|FAIL) (\S+) rel err (\S+)", line)
        if match:
            errors[match.group(2)] = float(match.group(3))
    return proc.returncode == 0, errors, proc.stdout


def build_case(case, kit, sluicec, work):
    name, ref, options, seed, role = case
    spec = spec_path(ref)
    module, dtype, training, dropout = spec_info(spec)
    case_dir = os.path.join(kit, "cases", name)
    build = os.path.join(work, name)
    run([sluicec, spec, "-o", build, "--compile", "--cuda-arch", ARCH,
         "--quiet"] + options, "sluicec --compile of %s" % name)
    os.makedirs(case_dir)
    library = "lib%s.so" % module
    shutil.copy(os.path.join(build, library), case_dir)
    shutil.copy(spec, os.path.join(case_dir, os.path.basename(spec)))
    inputs = os.path.join(case_dir, "in")
    if spec.endswith(".mlir"):
        write_ones(spec, inputs)
    else:
        run([PYTHON, os.path.join(COMPILE_INPUTS, "compare_backends.py"),
             "make", "--spec", spec, "--dir", inputs, "--data-seed",
             str(seed)], "inputs of %s" % name)
        as_float32(inputs)
    cpu_module = os.path.join(build, "lib%s_cpu.so" % module)

    def cpu_run(outputs, run_seed):
        run([sluicec, "run", spec, "--backend", "cpu", "--module", cpu_module,
             "--inputs", inputs, "--outputs", outputs, "--seed",
             str(run_seed)], "CPU backend run of %s" % name)

    cpu_run(os.path.join(case_dir, "cpu"), seed)
    run([sluicec, "run", spec, "--inputs", inputs, "--outputs",
         os.path.join(case_dir, "ref"), "--precision", "f32", "--seed",
         str(seed)], "reference run of %s" % name)
    # Masks are compared bit for bit; everything else at the CPU backend's
    # tolerance, which the CPU module itself must meet against the
    # reference (else the expected outputs are not worth shipping).
    tol = 0.0 if module == "dropout_masks" else None
    ok, cpu_errors, text = compare(os.path.join(case_dir, "cpu"),
                                   os.path.join(case_dir, "ref"), dtype, tol)
    if not ok:
        raise KitError("the CPU backend disagrees with the reference on %s:"
                       "\n%s" % (name, text))
    entry = {"name": name, "spec": os.path.basename(spec), "module": module,
             "library": library, "options": options, "seed": seed,
             "dtype": dtype, "training": training, "dropout": dropout,
             "tolerance": tol, "sanitizer": role,
             "cpu_vs_reference": cpu_errors}
    if dropout:
        # Another seed must move the outputs past the tolerance, so the
        # comparison does see the masks.
        other = os.path.join(work, name + "-other-seed")
        cpu_run(other, seed + 1)
        _, errors, _ = compare(other, os.path.join(case_dir, "cpu"), dtype,
                               tol)
        entry["other_seed_error"] = max(errors.values())
    return entry


def as_float32(directory):
    """The inputs as '<f4' (half the size of compare_backends' '<f8'): the
    values are already rounded to the layer's dtype, so this is exact."""
    import numpy as np
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        values = np.load(path)
        if not np.array_equal(values.astype(np.float32), values):
            raise KitError("%s is not exact in float32" % path)
        np.save(path, values.astype(np.float32))


def write_ones(graph, directory):
    """x = ones for the mask graph, so y and mask show the draw alone."""
    text = open(graph).read()
    dims = re.search(r"%x: !sluice\.tensor<\[([^\]]*)\]", text).group(1)
    shape = [int(d.split("=")[1]) for d in dims.split(",")]
    os.makedirs(directory)
    import numpy as np
    np.save(os.path.join(directory, "x.npy"), np.ones(shape, np.float32))


def kernel_functions(source):
    """Per phase, per profiled kernel index: the __global__ functions
    launched between its SLUICE_PROFILE_BEGIN and _END (for ncu)."""
    phases = {}
    current = None
    for line in open(source):
        begin = re.search(r"SLUICE_PROFILE_BEGIN\((\d+), (\d+)\);", line)
        if begin:
            current = (int(begin.group(1)), int(begin.group(2)))
            phases.setdefault(str(current[0]), {})[str(current[1])] = []
            continue
        if re.search(r"SLUICE_PROFILE_END\(", line):
            current = None
            continue
        launch = re.search(r"(sluice_kernel_\w+)<<<", line)
        if launch and current:
            phases[str(current[0])][str(current[1])].append(launch.group(1))
    return phases


def store_predictions(name, spec, options, target_dir, sluicec, work):
    """predicted-<target>.json beside a timing module: the model's
    prediction.kernels on each MODEL_TARGETS target, where the layer
    compiled for that target has the same kernels (signatures and layouts)
    as the module; returns the targets stored."""
    with open(os.path.join(target_dir, "report.json")) as f:
        compiled = [(k["phase"], k["name"], k["signature"], k["layout"])
                    for k in json.load(f)["prediction"]["kernels"]]
    stored = []
    for target in MODEL_TARGETS:
        out = os.path.join(work, "%s-%s" % (name, target))
        run([sluicec, spec, "-o", out, "--target", target, "--quiet"] +
            options, "sluicec --target %s of %s" % (target, name))
        with open(os.path.join(out, "report.json")) as f:
            kernels = json.load(f)["prediction"]["kernels"]
        if [(k["phase"], k["name"], k["signature"], k["layout"])
                for k in kernels] != compiled:
            continue
        with open(os.path.join(target_dir, "predicted-%s.json" % target),
                  "w") as f:
            json.dump(kernels, f)
        stored.append(target)
    return stored


def build_timing(name, spec, kit, sluicec, nvcc, work, options=(),
                 profile_only=False):
    module, dtype, _, _ = spec_info(spec)
    build = os.path.join(work, name)
    run([sluicec, spec, "-o", build, "--compile", "--no-cpu", "--cuda-arch",
         ARCH, "--quiet"] + list(options), "sluicec --compile of %s" % name)
    target = os.path.join(kit, "timing", name)
    os.makedirs(target)
    # A profile-only module (a layout variant) carries no plain library.
    library = None if profile_only else "lib%s.so" % module
    profiled = "lib%s_profile.so" % module
    if library:
        shutil.copy(os.path.join(build, library), target)
    # The toolchain's own nvcc line (docs/Compile.md) plus -DSLUICE_PROFILE.
    run([nvcc, "-O3", "-std=c++17", "-arch=" + ARCH, "-shared", "-Xcompiler",
         "-fPIC", "-cudart", "shared", "-DSLUICE_PROFILE", module + ".cu", "-o",
         os.path.join(target, profiled), "-lcublasLt", "-lcublas"],
        "nvcc -DSLUICE_PROFILE of %s" % name, cwd=build)
    shutil.copy(os.path.join(build, "report.json"), target)
    shutil.copy(spec, os.path.join(target, "spec.json"))
    with open(os.path.join(target, "kernels.json"), "w") as f:
        json.dump(kernel_functions(os.path.join(build, module + ".cu")), f)
    predicted = store_predictions(name, spec, list(options), target, sluicec,
                                  work)
    return {"name": name, "module": module, "library": library,
            "profiled": profiled, "dtype": dtype, "options": list(options),
            "predicted": predicted, "spec": json.load(open(spec))}


# The sluice package and its GPU check (python/tests/gpu_check.py): one layer
# per dtype and a stack of four on one shared scratch region, against torch.
PYTHON_FILES = ["python/sluice/" + name for name in (
    "__init__.py", "_compile.py", "_module.py", "_reference.py", "memory.py",
    "torch_layer.py")] + ["python/tests/gpu_check.py",
                          "python/tests/common.py"]


def build_python_check(kit, sluicec, work):
    """Copies the package and gpu_check.py into kit/python and compiles the
    check's layers (nvcc) into kit/python-check."""
    for source in PYTHON_FILES:
        target = os.path.join(kit, source)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy(os.path.join(REPO, source), target)
    env = dict(os.environ, SLUICE_SLUICEC=os.path.abspath(sluicec),
               SLUICE_CACHE_DIR=os.path.join(work, "python-cache"))
    run([PYTHON, os.path.join(kit, "python", "tests", "gpu_check.py"),
         "--prepare", os.path.join(kit, "python-check")],
        "gpu_check.py --prepare", env=env)


def build_runners(kit, nvcc, attention):
    """bin/module_timer and, unless `attention` is false (--quick),
    bin/stream_attention_check."""
    os.makedirs(os.path.join(kit, "bin"))
    run([nvcc, "-O2", "-std=c++17", "-arch=" + ARCH, "-cudart", "shared",
         "-DSLUICE_TIMER_CUDA",
         "-x", "cu", os.path.join(REPO, "benchmarks", "module_timer.cpp"),
         "-o", os.path.join(kit, "bin", "module_timer"), "-ldl"],
        "nvcc of module_timer")
    if not attention:
        return
    run([nvcc, "-O3", "-std=c++17", "-arch=" + ARCH, "-cudart", "shared",
         "-I", os.path.join(REPO, "include", "sluice", "Runtime"),
         os.path.join(REPO, "benchmarks", "gpu", "stream_attention_check.cu"),
         "-o", os.path.join(kit, "bin", "stream_attention_check")],
        "nvcc of stream_attention_check")


def copy_scripts(kit):
    for target, source in SCRIPTS.items():
        path = os.path.join(kit, target)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        shutil.copy(os.path.join(REPO, source), path)
    os.chmod(os.path.join(kit, "run.sh"), 0o755)


def git_commit():
    proc = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          universal_newlines=True)
    return proc.stdout.strip() or "unknown"


def manifest_files(manifest):
    files = ["run.sh", "kit.json", "bin/module_timer"] + list(SCRIPTS)
    if manifest.get("stream_attention"):
        files.append("bin/stream_attention_check")
    for case in manifest["cases"]:
        files.append("cases/%s/%s" % (case["name"], case["library"]))
    for timing in manifest["timing"] + manifest.get("profile_variants", []):
        for name in (timing["library"], timing["profiled"], "report.json",
                     "kernels.json", "spec.json") + tuple(
                         "predicted-%s.json" % target
                         for target in timing.get("predicted", [])):
            if name:
                files.append("timing/%s/%s" % (timing["name"], name))
    return sorted(set(files))


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def check_kit(kit):
    """Raises KitError unless the kit is complete, small and MLIR-free."""
    manifest_path = os.path.join(kit, "kit.json")
    if not os.path.isfile(manifest_path):
        raise KitError("%s: no kit.json (not a kit)" % kit)
    manifest = json.load(open(manifest_path))
    missing = [f for f in manifest_files(manifest)
               if not os.path.isfile(os.path.join(kit, f))]
    for case in manifest["cases"]:
        for sub in ("in", "cpu", "ref"):
            if not os.path.isdir(os.path.join(kit, "cases", case["name"], sub)):
                missing.append("cases/%s/%s/" % (case["name"], sub))
    if missing:
        raise KitError("%s: missing %s" % (kit, ", ".join(missing)))
    total, count, elves, bad = 0, 0, 0, []
    for root, _, names in os.walk(kit):
        for name in names:
            path = os.path.join(root, name)
            total += os.path.getsize(path)
            count += 1
            if not is_elf(path):
                continue
            elves += 1
            proc = subprocess.run(["ldd", path], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT,
                                  universal_newlines=True)
            for line in proc.stdout.splitlines():
                if FORBIDDEN_LIBRARIES.search(line) or "not found" in line:
                    bad.append("%s: %s" % (os.path.relpath(path, kit),
                                           line.strip()))
    if bad:
        raise KitError("%s: ELF files that need a library the GPU machine "
                       "does not have:\n  %s" % (kit, "\n  ".join(bad)))
    if total > SIZE_LIMIT:
        raise KitError("%s: %.1f MiB, over the limit of %d MiB" % (
            kit, total / 2**20, SIZE_LIMIT // 2**20))
    return ("%s: %d files, %.1f MiB (limit %d MiB), %d cases, %d timing "
            "modules; ldd: no MLIR/LLVM library in %d ELF files" % (
                kit, count, total / 2**20, SIZE_LIMIT // 2**20,
                len(manifest["cases"]), len(manifest["timing"]), elves))


def build_kit(args):
    nvcc = find_nvcc()
    if not os.access(args.sluicec, os.X_OK):
        raise KitError("no sluicec at %s (run `make build` first, or pass "
                       "--sluicec)" % args.sluicec)
    out = os.path.abspath(args.out)
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".gpu-kit-", dir=parent)
    work = tempfile.mkdtemp(prefix="sluice-kit-")
    start = time.time()
    try:
        kit = os.path.join(staging, "kit")
        os.makedirs(kit)
        copy_scripts(kit)
        log("module_timer (nvcc)")
        build_runners(kit, nvcc, attention=not args.quick)
        cases = [c for c in CASES if not args.quick or c[0] == QUICK_CASE]
        entries = []
        for case in cases:
            log("case %s" % case[0])
            entries.append(build_case(case, kit, args.sluicec, work))
        timing = []
        if not args.quick:
            log("python check (sluice package, nvcc)")
            build_python_check(kit, args.sluicec, work)
            for name, spec in TIMING:
                log("timing module %s (nvcc, plain and -DSLUICE_PROFILE)" %
                    name)
                timing.append(build_timing(name, spec, kit, args.sluicec,
                                           nvcc, work))
        variants = []
        if not args.quick:
            for name, spec, options in PROFILE_VARIANTS:
                log("profile module %s (%s)" % (name, " ".join(options)))
                variants.append(build_timing(name, spec, kit, args.sluicec,
                                             nvcc, work, options,
                                             profile_only=True))
        manifest = {"created": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
                    "commit": git_commit(), "arch": ARCH,
                    "quick": args.quick, "cases": entries, "timing": timing,
                    "profile_variants": variants,
                    "stream_attention": not args.quick}
        with open(os.path.join(kit, "kit.json"), "w") as f:
            json.dump(manifest, f, indent=1)
        summary = check_kit(kit)
        if os.path.exists(out):
            shutil.rmtree(out)
        os.rename(kit, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    log("built in %.0f s" % (time.time() - start))
    return summary.replace(os.path.join(staging, "kit"), out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(REPO, "gpu-kit"))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sluicec",
                        default=os.path.join(REPO, "build", "bin", "sluicec"))
    parser.add_argument("--check", metavar="DIR")
    args = parser.parse_args()
    try:
        summary = check_kit(args.check) if args.check else build_kit(args)
    except KitError as error:
        print("prepare: error: %s" % error, file=sys.stderr)
        return 1
    print("kit ok: %s" % summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
