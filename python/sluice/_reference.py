"""The f64 backend: the reference interpreter through `sluicec run
--backend reference --precision f64` on .npy files (docs/Python.md). The
emitted modules take f32/f16/bf16 only; this is how a float64 layer (and
torch.autograd.gradcheck) runs. It is slow (one sluicec process per call)
and meant for small layers."""

import os
import shutil
import subprocess
import tempfile

import numpy as np

from ._compile import SluiceError, find_sluicec

__all__ = ["run_reference"]


def run_reference(spec_path, inputs, seed=0, sluicec=None):
    """Runs the layer of `spec_path` on `inputs` (name -> float64 numpy
    array in its PyTorch shape; `dy` for a training layer) and returns
    name -> float64 array for y and every d_<name>."""
    sluicec = sluicec or find_sluicec()
    work = tempfile.mkdtemp(prefix="sluice-reference-")
    try:
        in_dir = os.path.join(work, "in")
        out_dir = os.path.join(work, "out")
        os.makedirs(in_dir)
        for name, value in inputs.items():
            np.save(os.path.join(in_dir, name + ".npy"),
                    np.ascontiguousarray(value, dtype=np.float64))
        proc = subprocess.run(
            [sluicec, "run", spec_path, "--backend", "reference",
             "--precision", "f64", "--inputs", in_dir, "--outputs", out_dir,
             "--seed", str(seed)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            universal_newlines=True)
        if proc.returncode != 0:
            raise SluiceError("sluicec run --backend reference failed: %s" %
                              proc.stderr.strip())
        return {f[:-4]: np.load(os.path.join(out_dir, f))
                for f in os.listdir(out_dir) if f.endswith(".npy")}
    finally:
        shutil.rmtree(work, ignore_errors=True)
