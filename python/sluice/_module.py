"""A compiled module through its generic C ABI (docs/Codegen.md, "The C
ABI"): ctypes only, no compiled extension."""

import ctypes
import os
import threading

from ._compile import SluiceError

__all__ = ["Module", "load_module", "DTYPE_NAMES"]

# SLUICE_DTYPE_* of sluice_runtime.h.
DTYPE_NAMES = {0: "f32", 1: "f16", 2: "bf16"}
_STATUS = {1: "SLUICE_ERROR_CUDA", 2: "SLUICE_ERROR_CUBLAS",
           3: "SLUICE_ERROR_ALLOC", 4: "SLUICE_ERROR_ARGUMENT",
           5: "SLUICE_ERROR_UNSUPPORTED"}


class _TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int),
                ("rank", ctypes.c_int),
                ("dims", ctypes.POINTER(ctypes.c_int64)),
                ("is_output", ctypes.c_int)]


class TensorSpec:
    """One boundary tensor of a phase: name, dtype name, dims (layout
    order), number of elements, and whether the module writes it."""

    def __init__(self, info):
        self.name = info.name.decode()
        self.dtype = DTYPE_NAMES.get(info.dtype, "dtype %d" % info.dtype)
        self.dims = tuple(info.dims[d] for d in range(info.rank))
        self.numel = 1
        for d in self.dims:
            self.numel *= d
        self.is_output = bool(info.is_output)

    def __repr__(self):
        return "TensorSpec(%s, %s, %s%s)" % (
            self.name, self.dtype, list(self.dims),
            ", output" if self.is_output else "")


class Context:
    """One sluice context (its arena holds the saved tensors between a
    forward and its backward). Destroyed when collected."""

    def __init__(self, module):
        self._module = module
        handle = ctypes.c_void_p()
        status = module._lib.sluice_create(ctypes.byref(handle))
        if status != 0:
            message = module._error(handle)
            if handle.value:
                module._lib.sluice_destroy(handle)
            raise SluiceError("module '%s': sluice_create failed (%s): %s" %
                              (module.name, _STATUS.get(status, status),
                               message))
        self.handle = handle

    def __del__(self):
        handle, self.handle = getattr(self, "handle", None), None
        if handle is not None and handle.value:
            self._module._lib.sluice_destroy(handle)


class Module:
    """A module library loaded once per path (load_module): its phases'
    tensors, and a pool of contexts. A context is taken for a forward and
    given back after its backward (or at once when no backward follows), so
    N layers of one model share the library and, in inference, one arena."""

    def __init__(self, path, cuda):
        self.path = path
        self.cuda = cuda
        try:
            # RTLD_NODELETE semantics come for free: ctypes never unloads.
            self._lib = ctypes.CDLL(os.path.abspath(path),
                                    mode=ctypes.RTLD_LOCAL)
        except OSError as err:
            raise SluiceError("cannot load module '%s': %s" % (path, err))
        lib = self._lib
        lib.sluice_module_name.restype = ctypes.c_char_p
        lib.sluice_num_phases.restype = ctypes.c_int
        lib.sluice_num_tensors.restype = ctypes.c_int
        lib.sluice_num_tensors.argtypes = [ctypes.c_int]
        lib.sluice_tensor.restype = ctypes.POINTER(_TensorInfo)
        lib.sluice_tensor.argtypes = [ctypes.c_int, ctypes.c_int]
        lib.sluice_create.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        lib.sluice_destroy.argtypes = [ctypes.c_void_p]
        lib.sluice_last_error.restype = ctypes.c_char_p
        lib.sluice_last_error.argtypes = [ctypes.c_void_p]
        lib.sluice_run.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                   ctypes.POINTER(ctypes.c_void_p),
                                   ctypes.c_uint64, ctypes.c_void_p]
        self.name = lib.sluice_module_name().decode()
        self.phases = []
        for phase in range(lib.sluice_num_phases()):
            self.phases.append([
                TensorSpec(lib.sluice_tensor(phase, i).contents)
                for i in range(lib.sluice_num_tensors(phase))])
        self._free = []
        self._lock = threading.Lock()
        self.contexts_created = 0

    def _error(self, handle):
        text = self._lib.sluice_last_error(handle)
        return text.decode() if text else "(no message)"

    def acquire(self):
        """A free context, or a new one."""
        with self._lock:
            if self._free:
                return self._free.pop()
        context = Context(self)
        self.contexts_created += 1
        return context

    def release(self, context):
        with self._lock:
            self._free.append(context)

    def run(self, context, phase, pointers, seed=0, stream=None):
        """sluice_run with one data pointer per tensor of `phase`, in order;
        raises SluiceError with the module's message on a non-zero status."""
        array = (ctypes.c_void_p * len(pointers))(*pointers)
        status = self._lib.sluice_run(context.handle, phase, array,
                                      ctypes.c_uint64(seed),
                                      ctypes.c_void_p(stream or 0))
        if status != 0:
            raise SluiceError("module '%s' phase %d: %s: %s" % (
                self.name, phase, _STATUS.get(status, status),
                self._error(context.handle)))


_loaded = {}
_loaded_lock = threading.Lock()


def load_module(path, cuda=False):
    """The Module of library `path`, loaded once per process."""
    key = (os.path.realpath(path), cuda)
    with _loaded_lock:
        module = _loaded.get(key)
        if module is None:
            module = Module(path, cuda)
            _loaded[key] = module
        return module
