"""Sluice from Python: compile transformer layer specs and run the compiled
modules as PyTorch layers (docs/Python.md).

    import sluice
    layer = sluice.EncoderLayer.from_torch(torch_layer, batch=8, seq=128)
    y = layer(x)            # forward and backward run the compiled module

Pure Python: ctypes over the modules' C ABI, sluicec as a subprocess.
torch is needed only for EncoderLayer (imported on first use).
"""

from ._compile import (CompiledSpec, SluiceError, compile_spec, find_sluicec,
                       report)
from ._module import Module, load_module

__all__ = ["CompiledSpec", "SluiceError", "compile_spec", "find_sluicec",
           "report", "Module", "load_module", "memory", "EncoderLayer",
           "from_torch_encoder", "spec_from_torch"]
__version__ = "0.1.0"


def __getattr__(name):
    # sluice.memory is imported on first use, so that `python3 -m
    # sluice.memory` does not find it imported already (a RuntimeWarning).
    if name == "memory":
        import importlib
        return importlib.import_module(".memory", __name__)
    if name in ("EncoderLayer", "from_torch_encoder", "spec_from_torch",
                "PARAMETERS"):
        from . import torch_layer
        return getattr(torch_layer, name)
    raise AttributeError("module 'sluice' has no attribute %r" % name)
