"""A stand-in for sluicec whose output depends on its heap settings, the way
a pass iterating a pointer-keyed map would depend on addresses: shows that
check_deterministic.py catches a difference (deterministic.test)."""
import os
import sys

out = sys.argv[sys.argv.index("-o") + 1]
os.makedirs(out, exist_ok=True)
heap = os.environ.get("MALLOC_PERTURB_", "") + os.environ.get("GLIBC_TUNABLES", "")
with open(os.path.join(out, "graph.mlir"), "w") as f:
    f.write("module {\n" + f"  // kernels in the order of a map keyed by {heap!r}\n" + "}\n")
for name in ("report.json", "report.md"):
    with open(os.path.join(out, name), "w") as f:
        f.write("same\n")
