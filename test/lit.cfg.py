# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "SLUICE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".json"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.sluice_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "Inputs", "unittests"]

config.substitutions.append(("%examples", os.path.join(config.sluice_src_root, "examples")))
config.substitutions.append(("%sluice_src", config.sluice_src_root))
config.substitutions.append(("%python", "/usr/bin/python3"))

llvm_config.with_system_environment(["HOME", "PATH"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(["sluice-opt", "sluicec", "sluice-translate"], [config.sluice_tools_dir])

# Compile tests (test/Compile): `nvcc` when the CUDA compiler is there,
# `gpu` when nvidia-smi lists a GPU (tests needing one are UNSUPPORTED
# elsewhere).
import shutil
import subprocess
llvm_config.with_system_environment(["SLUICE_NVCC", "SLUICE_CXX", "TMPDIR"])
_nvcc = (os.environ.get("SLUICE_NVCC") or shutil.which("nvcc") or
         ("/usr/local/cuda/bin/nvcc"
          if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None))
if _nvcc:
    config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc", _nvcc))
# test/Format: the format check needs clang-format (scripts/bootstrap.sh
# installs it).
if shutil.which("clang-format") or shutil.which("clang-format-14"):
    config.available_features.add("clang-format")
try:
    _smi = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True,
                          timeout=30)
    if _smi.returncode == 0 and "GPU " in _smi.stdout:
        config.available_features.add("gpu")
except (OSError, subprocess.SubprocessError):
    pass

# `torch` when the tests' python (/usr/bin/python3) imports torch (Debian's
# python3-torch): the PyTorch half of the GPU kit and of
# benchmarks/cpu-vs-torch.sh then run on the CPU here.
try:
    if subprocess.run(["/usr/bin/python3", "-c", "import torch"],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                      timeout=120).returncode == 0:
        config.available_features.add("torch")
except (OSError, subprocess.SubprocessError):
    pass

# test/Plugin runs from test/Install/install-test.sh, with the installed tools
# and the example plugin built against them; elsewhere it is UNSUPPORTED.
# Slow checks (minutes of one core each, e.g. ptxas for architectures whose
# tiles equal a tested one's): skipped by `make test`, run by .ci/run after
# it with `lit --param slow=1` (docs/Testing.md).
if lit_config.params.get("slow"):
    config.available_features.add("slow")

_plugin = lit_config.params.get("sluice_plugin")
if _plugin:
    config.available_features.add("plugin")
    config.substitutions.append(("%sluice_plugin", _plugin))
    config.substitutions.append(
        ("%installed_sluice_opt", lit_config.params["installed_sluice_opt"]))
    config.substitutions.append(
        ("%installed_sluicec", lit_config.params["installed_sluicec"]))

# The sanitizer build (scripts/sanitize.sh): `asan` enables test/Sanitize,
# whose emitted CPU modules are compiled with the sanitizers too.
if config.sluice_sanitize.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("asan")
config.substitutions.append(("%sanitized_cxx",
                             os.path.join(config.sluice_src_root, "scripts",
                                          "sanitized-cxx.sh")))
