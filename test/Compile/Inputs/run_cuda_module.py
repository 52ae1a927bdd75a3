"""Runs a CUDA module built by `sluicec --compile` on .npy inputs.

  run_cuda_module.py LIB --inputs DIR --outputs DIR [--seed N]

The CUDA counterpart of `sluicec run --backend cpu --module LIB`: reads
DIR/<name>.npy for every input tensor the module declares (sluice_tensor),
rounds it to the tensor's dtype, copies it to the GPU (cudaMalloc through
ctypes and libcudart), runs phase 0 and then phase 1 (training) on one
stream with one seed, and writes every output except saved.* as float32
.npy (in the PyTorch shape of the input file it corresponds to, or the
module's dims). Exits 1 with a message on any error.
"""

import argparse
import ctypes
import ctypes.util
import os
import sys

import numpy as np


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int),
                ("rank", ctypes.c_int),
                ("dims", ctypes.POINTER(ctypes.c_int64)),
                ("is_output", ctypes.c_int)]


def fail(message):
    print("run_cuda_module: error: %s" % message, file=sys.stderr)
    sys.exit(1)


def load_cudart():
    candidates = [ctypes.util.find_library("cudart"),
                  "/usr/local/cuda/lib64/libcudart.so",
                  "libcudart.so", "libcudart.so.13", "libcudart.so.12"]
    for name in candidates:
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    fail("cannot load libcudart (looked for %s)" %
         ", ".join(c for c in candidates if c))


def to_dtype(values, dtype):
    if dtype == 0:
        return values.astype(np.float32)
    if dtype == 1:
        return values.astype(np.float16)
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
    return bits.astype(np.uint16)


def from_dtype(raw, dtype):
    if dtype == 0:
        return raw.view(np.float32)
    if dtype == 1:
        return raw.view(np.float16).astype(np.float32)
    return (raw.view(np.uint16).astype(np.uint32) << 16).view(np.float32)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("library")
    parser.add_argument("--inputs", required=True)
    parser.add_argument("--outputs", required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    cudart = load_cudart()
    try:
        module = ctypes.CDLL(os.path.abspath(args.library))
    except OSError as error:
        fail("cannot load module '%s': %s" % (args.library, error))
    module.sluice_tensor.restype = ctypes.POINTER(TensorInfo)
    module.sluice_tensor.argtypes = [ctypes.c_int, ctypes.c_int]
    module.sluice_last_error.restype = ctypes.c_char_p
    module.sluice_last_error.argtypes = [ctypes.c_void_p]
    module.sluice_run.argtypes = [ctypes.c_void_p, ctypes.c_int,
                                  ctypes.POINTER(ctypes.c_void_p),
                                  ctypes.c_uint64, ctypes.c_void_p]
    cudart.cudaGetErrorString.restype = ctypes.c_char_p

    def check(status, what):
        if status != 0:
            fail("%s: %s" % (what, cudart.cudaGetErrorString(status).decode()))

    stream = ctypes.c_void_p()
    check(cudart.cudaStreamCreate(ctypes.byref(stream)), "cudaStreamCreate")
    ctx = ctypes.c_void_p()
    status = module.sluice_create(ctypes.byref(ctx))
    if status != 0:
        fail("sluice_create: status %d: %s" % (
            status, (module.sluice_last_error(ctx) or b"").decode()))

    device = {}   # name -> (pointer, dtype, dims)
    shapes = {}   # name -> PyTorch shape of its input file
    outputs = []
    for phase in range(module.sluice_num_phases()):
        pointers = []
        for index in range(module.sluice_num_tensors(phase)):
            info = module.sluice_tensor(phase, index).contents
            name = info.name.decode()
            dims = [info.dims[d] for d in range(info.rank)]
            if name not in device:
                count = int(np.prod(dims)) if dims else 1
                nbytes = count * (4 if info.dtype == 0 else 2)
                pointer = ctypes.c_void_p()
                check(cudart.cudaMalloc(ctypes.byref(pointer),
                                        ctypes.c_size_t(nbytes)), "cudaMalloc")
                if not info.is_output:
                    path = os.path.join(args.inputs, name + ".npy")
                    if not os.path.exists(path):
                        fail("missing input '%s': expected %s" % (name, path))
                    values = np.load(path)
                    if values.size != count:
                        fail("input '%s' has %d elements, the module expects "
                             "%d" % (name, values.size, count))
                    shapes[name] = values.shape
                    host = np.ascontiguousarray(to_dtype(values.reshape(-1),
                                                         info.dtype))
                    check(cudart.cudaMemcpy(pointer, host.ctypes.data_as(
                        ctypes.c_void_p), ctypes.c_size_t(nbytes), 1),
                        "cudaMemcpy to the device")
                else:
                    outputs.append(name)
                device[name] = (pointer, info.dtype, dims)
            pointers.append(device[name][0])
        array = (ctypes.c_void_p * len(pointers))(*pointers)
        status = module.sluice_run(ctx, phase, array, args.seed, stream)
        if status != 0:
            fail("sluice_run phase %d: status %d: %s" % (
                phase, status, module.sluice_last_error(ctx).decode()))
        check(cudart.cudaStreamSynchronize(stream), "cudaStreamSynchronize")

    os.makedirs(args.outputs, exist_ok=True)
    written = []
    for name in outputs:
        if name.startswith("saved."):
            continue
        pointer, dtype, dims = device[name]
        count = int(np.prod(dims)) if dims else 1
        raw = np.empty(count * (4 if dtype == 0 else 2), dtype=np.uint8)
        check(cudart.cudaMemcpy(raw.ctypes.data_as(ctypes.c_void_p), pointer,
                                ctypes.c_size_t(raw.size), 2),
              "cudaMemcpy to the host")
        values = from_dtype(raw, dtype)
        # Gradients take their input's PyTorch shape; y takes x's.
        source = name[2:] if name.startswith("d_") else "x"
        shape = shapes.get(source, tuple(dims))
        if int(np.prod(shape)) != count:
            shape = tuple(dims)
        np.save(os.path.join(args.outputs, name + ".npy"),
                values.reshape(shape).astype(np.float32))
        written.append(name + ".npy")
    module.sluice_destroy(ctx)
    print("wrote %s to %s" % (" ".join(written), args.outputs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
