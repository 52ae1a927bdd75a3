"""The memory of an N-layer training step (docs/Python.md, "N layers,
memory"), computed from the module sluicec emits for a layer spec: its
saved and scratch regions (what the module's sluice_saved_bytes and
sluice_scratch_bytes return) and its boundary tensors (parameters, x, y).

    python3 -m sluice.memory examples/bert-large.json --layers 24

Each layer in flight holds a context (its saved region) from its forward to
its backward; the contexts of one module share one scratch region, where
each context with a scratch region of its own would hold both.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

from ._compile import SluiceError, find_sluicec, normalize_spec

__all__ = ["module_layout", "training_step_memory"]

_DTYPE_BYTES = {0: 4, 1: 2, 2: 2}


def _emitted_source(spec, backend, sluicec):
    data = normalize_spec(spec)
    with tempfile.TemporaryDirectory(prefix="sluice-memory-") as work:
        path = os.path.join(work, "spec.json")
        with open(path, "w") as f:
            json.dump(data, f)
        proc = subprocess.run(
            [sluicec or find_sluicec(), path, "--emit=" + backend],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            universal_newlines=True)
    if proc.returncode != 0:
        raise SluiceError("sluicec SPEC --emit=%s failed (exit %d): %s" % (
            backend, proc.returncode, proc.stderr.strip()))
    return proc.stdout


def _number(source, function):
    match = re.search(r"uint64_t %s\(void\) \{ return (\d+)ULL; \}" %
                      function, source)
    if not match:
        raise SluiceError("the emitted module has no %s (C ABI version 1?)"
                          % function)
    return int(match.group(1))


def _forward_tensors(source):
    """{name: (bytes, is_output)} of the forward's boundary tensors, from
    the module's sluice_tensor table."""
    dims = {}
    for index, values in re.findall(
            r"static const int64_t sluice_dims_0_(\d+)\[\] = \{([^}]*)\};",
            source):
        dims["sluice_dims_0_" + index] = [
            int(v.strip().rstrip("LL")) for v in values.split(",")]
    table = re.search(r"sluice_tensors_0\[\] = \{(.*?)\n\};", source,
                      re.DOTALL)
    if not table:
        raise SluiceError("the emitted module has no tensor table")
    tensors = {}
    for name, dtype, _, dim_name, output in re.findall(
            r'\{"([^"]+)", (\d+), (\d+), (\w+), (\d)\}', table.group(1)):
        count = 1
        for size in dims.get(dim_name, []):
            count *= size
        tensors[name] = (count * _DTYPE_BYTES[int(dtype)], output == "1")
    return tensors


def module_layout(spec, backend="cuda", sluicec=None):
    """{'saved_bytes', 'scratch_bytes', 'tensors'} of the `backend` ("cuda"
    or "cpp") module of `spec`: its region sizes and its forward boundary
    tensors ({name: (bytes, is_output)})."""
    if backend not in ("cuda", "cpp"):
        raise SluiceError("backend must be 'cuda' or 'cpp', not %r" %
                          (backend,))
    source = _emitted_source(spec, backend, sluicec)
    return {"saved_bytes": _number(source, "sluice_saved_bytes"),
            "scratch_bytes": _number(source, "sluice_scratch_bytes"),
            "tensors": _forward_tensors(source)}


def training_step_memory(spec, layers, backend="cuda", sluicec=None):
    """The bytes a training step of `layers` layers of `spec` holds at its
    peak (every forward done, no backward yet): the contexts, the
    parameters and their gradients, and x/y of every layer kept by autograd
    (y of layer i is x of layer i+1). Both with one scratch region shared
    by all contexts ('shared') and with one per context ('unshared')."""
    if layers < 1:
        raise SluiceError("layers must be at least 1, not %r" % (layers,))
    layout = module_layout(spec, backend, sluicec)
    tensors = layout["tensors"]
    if "x" not in tensors:
        raise SluiceError("the module has no boundary tensor 'x'")
    parameters = sum(size for name, (size, output) in tensors.items()
                     if not output and name != "x")
    saved, scratch = layout["saved_bytes"], layout["scratch_bytes"]
    common = {"parameters": layers * parameters,
              "gradients": layers * parameters,
              "activations": (layers + 1) * tensors["x"][0]}
    fixed = sum(common.values())
    result = dict(common, layers=layers, saved_bytes=saved,
                  scratch_bytes=scratch)
    result["contexts_shared"] = layers * saved + scratch
    result["contexts_unshared"] = layers * (saved + scratch)
    result["shared"] = fixed + result["contexts_shared"]
    result["unshared"] = fixed + result["contexts_unshared"]
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Peak memory of an N-layer training step")
    parser.add_argument("spec")
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--backend", default="cuda", choices=("cuda", "cpp"))
    args = parser.parse_args(argv)
    try:
        m = training_step_memory(args.spec, args.layers, args.backend)
    except SluiceError as err:
        print("error: %s" % err, file=sys.stderr)
        return 1
    n = m["layers"]
    rows = [
        ("contexts, one shared scratch: %d x saved %s + scratch %s" % (
            n, format(m["saved_bytes"], ","), format(m["scratch_bytes"], ",")),
         m["contexts_shared"]),
        ("parameters", m["parameters"]),
        ("their gradients", m["gradients"]),
        ("x and y kept by autograd: %d tensors" % (n + 1), m["activations"]),
        ("total, shared scratch", m["shared"]),
        ("contexts, each with its own scratch: %d x (%s + %s)" % (
            n, format(m["saved_bytes"], ","), format(m["scratch_bytes"], ",")),
         m["contexts_unshared"]),
        ("total, a scratch per context", m["unshared"]),
        ("saved by sharing", m["unshared"] - m["shared"]),
    ]
    for label, value in rows:
        print("%-72s %16s" % (label, format(value, ",")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
