"""A compiled module through its generic C ABI (docs/Codegen.md, "The C
ABI"): ctypes only, no compiled extension."""

import ctypes
import os
import threading

from ._compile import SluiceError

__all__ = ["Module", "Scratch", "load_module", "DTYPE_NAMES"]

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


class Scratch:
    """One scratch region (docs/Codegen.md, "The C ABI"): what a call uses
    and leaves dead, shared by every context of a module on one device.
    Runs on it are serialized: a lock around each CPU run; on CUDA a run
    on another stream than the previous one first waits for it (an event),
    so contexts on one stream never wait."""

    ALIGN = 256

    def __init__(self, nbytes, device=None):
        self.nbytes = nbytes
        self.lock = threading.Lock()
        self._stream = None
        size = nbytes + self.ALIGN
        if device is None:
            self._buffer = ctypes.create_string_buffer(size)
            base = ctypes.addressof(self._buffer)
        else:
            import torch
            self._buffer = torch.empty(size, dtype=torch.uint8, device=device)
            base = self._buffer.data_ptr()
        self.address = (base + self.ALIGN - 1) // self.ALIGN * self.ALIGN

    def order(self, stream):
        """Makes CUDA `stream` (a torch.cuda.Stream) wait for the previous
        run on this scratch when that ran on another stream."""
        if stream is None or not hasattr(stream, "wait_event"):
            return
        previous, self._stream = self._stream, stream
        if previous is not None and previous != stream:
            import torch
            event = torch.cuda.Event()
            event.record(previous)
            stream.wait_event(event)


class Context:
    """One sluice context: its saved region holds the saved tensors between
    a forward and its backward. With a Scratch (ABI version 2) the scratch
    region is that shared one (sluice_create_shared), else the context's
    own (sluice_create). Destroyed when collected."""

    def __init__(self, module, scratch=None):
        self._module = module
        self.scratch = scratch
        handle = ctypes.c_void_p()
        if scratch is not None:
            status = module._lib.sluice_create_shared(
                ctypes.byref(handle), ctypes.c_void_p(scratch.address),
                ctypes.c_uint64(scratch.nbytes))
            entry = "sluice_create_shared"
        else:
            status = module._lib.sluice_create(ctypes.byref(handle))
            entry = "sluice_create"
        if status != 0:
            message = module._error(handle)
            if handle.value:
                module._lib.sluice_destroy(handle)
            raise SluiceError("module '%s': %s failed (%s): %s" %
                              (module.name, entry, _STATUS.get(status, status),
                               message))
        self.handle = handle

    def __del__(self):
        handle, self.handle = getattr(self, "handle", None), None
        if handle is not None and handle.value:
            self._module._lib.sluice_destroy(handle)


class Module:
    """A module library loaded once per path (load_module): its phases'
    tensors, and a pool of contexts per device. A context is taken for a
    forward and given back after its backward (or at once when no backward
    follows), so N layers of one model share the library and, in inference,
    one context. Every context of a device shares one scratch region
    (ABI version 2), so N layers in training hold N saved regions and one
    scratch region."""

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
        self.abi_version = 1
        self.saved_bytes = self.scratch_bytes = None
        if hasattr(lib, "sluice_abi_version"):
            lib.sluice_abi_version.restype = ctypes.c_int
            lib.sluice_saved_bytes.restype = ctypes.c_uint64
            lib.sluice_scratch_bytes.restype = ctypes.c_uint64
            lib.sluice_create_shared.argtypes = [
                ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
                ctypes.c_uint64]
            self.abi_version = lib.sluice_abi_version()
            self.saved_bytes = lib.sluice_saved_bytes()
            self.scratch_bytes = lib.sluice_scratch_bytes()
        self.name = lib.sluice_module_name().decode()
        self.phases = []
        for phase in range(lib.sluice_num_phases()):
            self.phases.append([
                TensorSpec(lib.sluice_tensor(phase, i).contents)
                for i in range(lib.sluice_num_tensors(phase))])
        self._free = {}
        self._scratch = {}
        self._lock = threading.Lock()
        self.contexts_created = 0

    def _error(self, handle):
        text = self._lib.sluice_last_error(handle)
        return text.decode() if text else "(no message)"

    def _device_key(self, device):
        if not self.cuda:
            return "cpu"
        import torch
        device = torch.device(device if device is not None else "cuda")
        index = device.index
        return index if index is not None else torch.cuda.current_device()

    def scratch(self, device=None):
        """The scratch region shared by this module's contexts on `device`
        (a CUDA device for a CUDA module), or None for an ABI version 1
        module (each context has its own)."""
        if self.abi_version < 2:
            return None
        key = self._device_key(device)
        with self._lock:
            scratch = self._scratch.get(key)
            if scratch is None:
                scratch = Scratch(self.scratch_bytes,
                                  ("cuda:%d" % key) if self.cuda else None)
                self._scratch[key] = scratch
            return scratch

    def acquire(self, device=None):
        """A free context on `device`, or a new one (on the shared
        scratch)."""
        key = self._device_key(device)
        with self._lock:
            free = self._free.get(key)
            if free:
                return free.pop()
        context = Context(self, self.scratch(device))
        context.device_key = key
        with self._lock:
            self.contexts_created += 1
        return context

    def release(self, context):
        with self._lock:
            self._free.setdefault(context.device_key, []).append(context)

    def memory(self):
        """Bytes the module's contexts hold now (computed from the ABI's
        region sizes): {'contexts', 'saved_bytes', 'scratch_bytes',
        'total_bytes'}; with a shared scratch each context holds its saved
        region and every device one scratch region, else each context
        holds both. None for an ABI version 1 module."""
        if self.abi_version < 2:
            return None
        with self._lock:
            contexts = self.contexts_created
            scratches = len(self._scratch)
        saved = contexts * self.saved_bytes
        scratch = scratches * self.scratch_bytes
        return {"contexts": contexts, "saved_bytes": saved,
                "scratch_bytes": scratch, "total_bytes": saved + scratch}

    def run(self, context, phase, pointers, seed=0, stream=None):
        """sluice_run with one data pointer per tensor of `phase`, in order;
        raises SluiceError with the module's message on a non-zero status.
        `stream` is a torch.cuda.Stream for a CUDA module (or a raw
        cudaStream_t handle, which is not ordered against other streams;
        None: the default stream)."""
        array = (ctypes.c_void_p * len(pointers))(*pointers)
        scratch = context.scratch
        if scratch is None:
            return self._run(context, phase, array, seed, stream)
        with scratch.lock:
            scratch.order(stream)
            return self._run(context, phase, array, seed, stream)

    def _run(self, context, phase, array, seed, stream):
        handle = getattr(stream, "cuda_stream", stream) or 0
        status = self._lib.sluice_run(context.handle, phase, array,
                                      ctypes.c_uint64(seed),
                                      ctypes.c_void_p(handle))
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
