"""Specs, sluicec and the compile cache (docs/Python.md)."""

import hashlib
import json
import os
import shutil
import subprocess
import tempfile

__all__ = ["SluiceError", "find_sluicec", "compile_spec", "report",
           "CompiledSpec", "normalize_spec"]


class SluiceError(RuntimeError):
    """An error of the sluice package: a bad spec, a failed compile, a module
    that refuses its inputs. The message says what and where."""


def find_sluicec():
    """sluicec: $SLUICE_SLUICEC, else `sluicec` on PATH, else the build tree
    next to this package (../build/bin/sluicec when run from a checkout)."""
    candidates = []
    env = os.environ.get("SLUICE_SLUICEC")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env
        raise SluiceError("SLUICE_SLUICEC is '%s', which is not an executable "
                          "file" % env)
    on_path = shutil.which("sluicec")
    if on_path:
        return on_path
    here = os.path.dirname(os.path.abspath(__file__))
    candidates.append(os.path.join(here, "..", "..", "build", "bin",
                                   "sluicec"))
    for candidate in candidates:
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return os.path.normpath(candidate)
    raise SluiceError("cannot find sluicec (looked at $SLUICE_SLUICEC, PATH "
                      "and %s); build Sluice or set SLUICE_SLUICEC" %
                      os.path.normpath(candidates[0]))


def cache_root():
    """$SLUICE_CACHE_DIR, else $XDG_CACHE_HOME/sluice, else ~/.cache/sluice."""
    root = os.environ.get("SLUICE_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
            os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "sluice")
    return root


def normalize_spec(spec):
    """A spec as a dict: a dict is copied, a str is a path to a JSON file or
    JSON text. Validation is sluicec's (its message names the field)."""
    if isinstance(spec, dict):
        return json.loads(json.dumps(spec))
    if isinstance(spec, (str, os.PathLike)):
        text = str(spec)
        if not text.lstrip().startswith("{"):
            try:
                with open(text) as f:
                    text = f.read()
            except OSError as err:
                raise SluiceError("%s: cannot read the spec: %s" %
                                  (spec, err.strerror)) from None
        try:
            data = json.loads(text)
        except ValueError as err:
            raise SluiceError("spec: invalid JSON: %s" % err) from None
        if not isinstance(data, dict):
            raise SluiceError("spec: expected a JSON object, got %s" %
                              type(data).__name__)
        return data
    raise SluiceError("spec: expected a dict, a JSON string or a path, got "
                      "%s" % type(spec).__name__)


def _tool_identity(path):
    info = os.stat(path)
    return "%s:%d:%d" % (os.path.realpath(path), info.st_size,
                         int(info.st_mtime))


class CompiledSpec:
    """A spec compiled by sluicec into a cache directory: `directory`,
    `name`, `spec` (the dict), `report` (report.json as a dict), and
    `cpu_library` / `cuda_library` (paths, or None when not built)."""

    def __init__(self, directory, spec):
        self.directory = directory
        self.spec = spec
        with open(os.path.join(directory, "report.json")) as f:
            self.report = json.load(f)
        self.name = self.report["name"]
        safe = "".join(c if c.isalnum() or c in "._-" else "_"
                       for c in self.name)
        cpu = os.path.join(directory, "lib%s_cpu.so" % safe)
        cuda = os.path.join(directory, "lib%s.so" % safe)
        self.cpu_library = cpu if os.path.exists(cpu) else None
        self.cuda_library = cuda if os.path.exists(cuda) else None
        self.spec_path = os.path.join(directory, "spec.json")

    def __repr__(self):
        return "CompiledSpec(%r, %r)" % (self.name, self.directory)


def _run(command, what):
    proc = subprocess.run(command, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)
    if proc.returncode != 0:
        raise SluiceError("%s failed (exit %d): %s" % (
            what, proc.returncode, (proc.stderr or proc.stdout).strip()))
    return proc


def compile_spec(spec, cpu=True, cuda=False, cuda_arch=None, sluicec=None,
                 cache_dir=None, extra_args=()):
    """Compiles `spec` (a dict, JSON text or a path) with
    `sluicec --compile`; returns a CompiledSpec. Results are cached by the
    hash of the spec, the options and the sluicec binary: a second call
    with the same spec loads the cached directory without running sluicec.
    With cpu=False and cuda=False only the reports are made."""
    data = normalize_spec(spec)
    sluicec = sluicec or find_sluicec()
    args = list(extra_args)
    if cpu or cuda:
        args.append("--compile")
        if not cpu:
            args.append("--no-cpu")
        if not cuda:
            args.append("--no-cuda")
        if cuda and cuda_arch:
            args += ["--cuda-arch", cuda_arch]
    key = hashlib.sha256(json.dumps(
        {"spec": data, "args": args, "tool": _tool_identity(sluicec)},
        sort_keys=True).encode()).hexdigest()[:20]
    root = cache_dir or cache_root()
    name = str(data.get("name", "layer"))
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in name)
    final = os.path.join(root, "%s-%s" % (safe, key))
    if os.path.exists(os.path.join(final, "report.json")):
        return CompiledSpec(final, data)
    os.makedirs(root, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".compile-", dir=root)
    try:
        spec_path = os.path.join(work, "spec.json")
        with open(spec_path, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        out = os.path.join(work, "out")
        _run([sluicec, spec_path, "-o", out, "--quiet"] + args,
             "sluicec %s" % " ".join(["SPEC", "-o", "DIR"] + args))
        shutil.move(spec_path, os.path.join(out, "spec.json"))
        try:
            os.rename(out, final)
        except OSError:
            # Another process compiled the same spec first: use its result.
            if not os.path.exists(os.path.join(final, "report.json")):
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return CompiledSpec(final, data)


def report(spec, sluicec=None, cache_dir=None):
    """The report of `spec` (report.json of `sluicec SPEC -o DIR`) as a dict:
    every op's and kernel's flop and bytes, the totals, the baseline and
    lower bound, the arena plan (docs/Report.md). Cached like compile_spec."""
    return compile_spec(spec, cpu=False, cuda=False, sluicec=sluicec,
                        cache_dir=cache_dir).report
