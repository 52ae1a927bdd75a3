"""Writes x.npy [4, 8] and b.npy [8] for Inputs/bias_relu_kernel.mlir into
the directory given as the only argument."""
import os
import sys

import numpy as np

rng = np.random.default_rng(5)
os.makedirs(sys.argv[1], exist_ok=True)
np.save(os.path.join(sys.argv[1], "x.npy"), rng.normal(size=(4, 8)))
np.save(os.path.join(sys.argv[1], "b.npy"), rng.normal(size=(8,)))
