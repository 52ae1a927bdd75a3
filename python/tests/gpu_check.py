#!/usr/bin/env python3
"""The CUDA path of the sluice package on a GPU machine without a Sluice
build (docs/Python.md, "On a GPU machine").

  gpu_check.py --prepare DIR      (here: sluicec + nvcc) compiles the check's
                                  layers for sm_90 into DIR/<name>/
  gpu_check.py DIR [--device cpu] (there: torch + a GPU) runs each layer
                                  from DIR on cuda (or the CPU modules with
                                  --device cpu) against torch's on the same
                                  device: y and every gradient, on the
                                  default stream and on a side stream; then
                                  a 4-layer stack whose contexts share one
                                  scratch region (a training step on each
                                  stream) and the device memory its
                                  contexts take, shared against unshared

Prints one line per layer; exits 1 when an error exceeds its tolerance.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from common import PARAMETERS, torch, torch_gradients, torch_layer  # noqa
import sluice  # noqa: E402

# name -> (torch dtype, tolerance: max error / max|torch|).
LAYERS = {"gpu_check_f32": (torch.float32, 1e-4),
          "gpu_check_f16": (torch.float16, 3e-2)}
BATCH, SEQ = 4, 32


def layer_and_spec(name, dtype):
    layer = torch_layer(embed=64, heads=4, ffn=256)
    spec = sluice.spec_from_torch(layer, BATCH, SEQ, dtype=dtype, name=name,
                                  target="sm_90")
    return layer, spec


def prepare(directory):
    for name, (dtype, _) in LAYERS.items():
        _, spec = layer_and_spec(name, dtype)
        compiled = sluice.compile_spec(spec, cpu=True, cuda=True,
                                       cuda_arch="sm_90")
        target = os.path.join(directory, name)
        if os.path.exists(target):
            continue
        os.makedirs(directory, exist_ok=True)
        import shutil
        shutil.copytree(compiled.directory, target)
        print("prepared", target)


def check(directory, device):
    failed = False
    for name, (dtype, tolerance) in LAYERS.items():
        reference, spec = layer_and_spec(name, dtype)
        # torch runs in f32 on the same values (weights rounded to dtype).
        with torch.no_grad():
            for p in reference.parameters():
                p.copy_(p.to(dtype).float())
        reference = reference.to(device=device)
        ours = sluice.EncoderLayer(
            spec, device=device, dtype=dtype,
            parameters={n: getattr(reference_params(reference), n).to(dtype)
                        for n in PARAMETERS},
            compiled=os.path.join(directory, name))
        for stream_name in ("default", "side"):
            stream = (torch.cuda.Stream() if device == "cuda" and
                      stream_name == "side" else None)
            with (torch.cuda.stream(stream) if stream is not None
                  else _Nothing()):
                errors = run_once(ours, reference, dtype, device)
            if device == "cuda":
                torch.cuda.synchronize()
            worst = max(errors.values())
            status = "ok" if worst < tolerance else "FAIL"
            failed |= worst >= tolerance
            print("%s %s stream=%s: max error %.3g (tolerance %.0e) %s" %
                  (name, device, stream_name, worst, tolerance, status))
            if worst >= tolerance:
                print("  " + ", ".join("%s %.3g" % kv for kv in
                                       sorted(errors.items())))
    return 1 if failed else 0


def check_stack(directory, device, layers=4):
    """A stack of `layers` f32 layers (one module, one shared scratch) against
    torch's, one training step on the default stream, then one on a side
    stream (the scratch's last user was the default stream: the module
    orders the two). Prints the errors and the contexts' memory."""
    name = "gpu_check_f32"
    dtype, tolerance = LAYERS[name]
    references, ours = [], []
    for index in range(layers):
        reference, spec = layer_and_spec(name, dtype)
        with torch.no_grad():
            for p in reference.parameters():
                p.add_(0.02 * (index + 1) * torch.randn_like(p))
        reference = reference.to(device=device)
        references.append(reference)
        ours.append(sluice.EncoderLayer(
            spec, device=device, dtype=dtype,
            parameters={n: getattr(reference_params(reference), n)
                        for n in PARAMETERS},
            compiled=os.path.join(directory, name)))
    failed = False
    for stream_name in ("default", "side"):
        stream = (torch.cuda.Stream() if device == "cuda" and
                  stream_name == "side" else None)
        if stream is not None:
            stream.wait_stream(torch.cuda.current_stream())
        with (torch.cuda.stream(stream) if stream is not None
              else _Nothing()):
            errors = run_stack_once(ours, references, device)
        if device == "cuda":
            torch.cuda.synchronize()
        worst = max(errors.values())
        failed |= worst >= tolerance
        print("stack of %d %s stream=%s: max error %.3g (tolerance %.0e) %s"
              % (layers, device, stream_name, worst, tolerance,
                 "ok" if worst < tolerance else "FAIL"))
    module = ours[0]._runner(True).module
    print("stack contexts: %d x saved %d + scratch %d = %d bytes (each with "
          "its own scratch: %d)" % (
              layers, module.saved_bytes, module.scratch_bytes,
              layers * module.saved_bytes + module.scratch_bytes,
              layers * (module.saved_bytes + module.scratch_bytes)))
    if device == "cuda":
        measure_contexts(module, layers)
    return failed


def measure_contexts(module, layers):
    """The device memory `layers` new contexts take (cudaMemGetInfo), on the
    shared scratch and each with its own."""
    from sluice._module import Context
    for shared in (True, False):
        torch.cuda.synchronize()
        before = torch.cuda.mem_get_info()[0]
        contexts = [Context(module, module.scratch() if shared else None)
                    for _ in range(layers)]
        torch.cuda.synchronize()
        used = before - torch.cuda.mem_get_info()[0]
        print("measured: %d contexts %s take %d bytes of device memory" % (
            layers, "on one shared scratch" if shared else
            "with their own scratch", used))
        del contexts


def run_stack_once(ours, references, device):
    generator = torch.Generator().manual_seed(9)
    x = torch.randn(BATCH, SEQ, 64, generator=generator).to(device)
    dy = torch.randn(BATCH, SEQ, 64, generator=generator).to(device)
    for layer in ours + references:
        layer.zero_grad()
    xs, xt = x.clone().requires_grad_(), x.clone().requires_grad_()
    y, yt = xs, xt
    for layer, reference in zip(ours, references):
        y, yt = layer(y), reference(yt)
    (y * dy).sum().backward()
    (yt * dy).sum().backward()

    def error(got, want):
        scale = max(float(want.abs().max()), 1e-3)
        return float((got - want).abs().max()) / scale

    errors = {"y": error(y, yt), "d_x": error(xs.grad, xt.grad)}
    for index, (layer, reference) in enumerate(zip(ours, references)):
        expected = torch_gradients(reference)
        for name in ("w1", "wq", "ln1_scale", "b2"):
            errors["%d.d_%s" % (index, name)] = error(
                getattr(layer, name).grad, expected[name])
    return errors


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *args):
        return False


def reference_params(layer):
    class Params:
        pass
    params = Params()
    from sluice.torch_layer import _parameters_from_torch
    for name, value in _parameters_from_torch(layer).items():
        setattr(params, name, value)
    return params


def run_once(ours, reference, dtype, device):
    generator = torch.Generator().manual_seed(5)
    x = torch.randn(BATCH, SEQ, 64, generator=generator).to(device, dtype)
    dy = torch.randn(BATCH, SEQ, 64, generator=generator).to(device, dtype)
    ours.zero_grad()
    reference.zero_grad()
    xs = x.clone().requires_grad_()
    xt = x.float().requires_grad_()
    y, yt = ours(xs), reference(xt)
    (y.float() * dy.float()).sum().backward()
    (yt.float() * dy.float()).sum().backward()
    expected = torch_gradients(reference)

    def error(got, want, scale=None):
        scale = scale or max(float(want.float().abs().max()), 1e-3)
        return float((got.float() - want.float()).abs().max()) / scale

    errors = {"y": error(y, yt), "d_x": error(xs.grad, xt.grad)}
    for name in PARAMETERS:
        scale = (max(float(expected["bv"].float().abs().max()), 1e-3)
                 if name == "bk" else None)
        errors["d_" + name] = error(getattr(ours, name).grad,
                                    expected[name], scale)
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("directory")
    parser.add_argument("--prepare", action="store_true")
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    args = parser.parse_args()
    if args.prepare:
        prepare(args.directory)
        return 0
    failed = check(args.directory, args.device)
    failed |= check_stack(args.directory, args.device)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
