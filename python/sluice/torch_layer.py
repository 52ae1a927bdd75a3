"""Sluice encoder layers as torch.nn.Modules (docs/Python.md).

EncoderLayer holds the layer's weights as parameters with PyTorch's names
and shapes (nn.Linear's [out, in]) under Sluice's canonical names (wq, bq,
..., ln2_bias); its forward and backward run the compiled module inside a
torch.autograd.Function.
"""

import math
import threading

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ._compile import CompiledSpec, SluiceError, compile_spec, normalize_spec
from ._module import load_module
from ._reference import run_reference

__all__ = ["EncoderLayer", "from_torch_encoder", "spec_from_torch",
           "PARAMETERS"]

# Boundary inputs after x, in the module's order (docs/SpecFormat.md).
PARAMETERS = ("wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo", "ln1_scale",
              "ln1_bias", "w1", "b1", "w2", "b2", "ln2_scale", "ln2_bias")

_TORCH_TO_SPEC = {torch.float32: "f32", torch.float16: "f16",
                  torch.bfloat16: "bf16", torch.float64: "f32"}
_SPEC_TO_TORCH = {"f32": torch.float32, "f16": torch.float16,
                  "bf16": torch.bfloat16}
_CUDA_ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")


def _activation_of(layer):
    code = getattr(layer, "activation_relu_or_gelu", 0)
    if code == 1 or layer.activation is F.relu:
        return "relu"
    if code == 2 or layer.activation is F.gelu:
        return "gelu"
    raise SluiceError(
        "cannot tell the activation of %r (relu and gelu are recognized); "
        "pass activation='relu'|'gelu'|'gelu_tanh'" % (layer.activation,))


def spec_from_torch(layer, batch, seq, dtype=torch.float32, name=None,
                    **options):
    """The layer spec (a dict, docs/SpecFormat.md) of a
    torch.nn.TransformerEncoderLayer for inputs of `batch` x `seq`.
    `options` override or add spec fields (training, causal, dropout,
    activation, target, ...)."""
    if not isinstance(layer, nn.TransformerEncoderLayer):
        raise SluiceError("expected a torch.nn.TransformerEncoderLayer, got %s"
                          % type(layer).__name__)
    if dtype not in _TORCH_TO_SPEC:
        raise SluiceError("dtype %s is not supported; use torch.float32, "
                          "float16, bfloat16 or float64 (reference "
                          "interpreter)" % dtype)
    attn = layer.self_attn
    if not getattr(attn, "_qkv_same_embed_dim", True) or attn.in_proj_weight \
            is None:
        raise SluiceError("self_attn with separate kdim/vdim is not a Sluice "
                          "encoder layer")
    if attn.in_proj_bias is None or layer.linear1.bias is None:
        raise SluiceError("layers without biases are not supported")
    if abs(layer.norm1.eps - layer.norm2.eps) > 0:
        raise SluiceError("norm1.eps (%g) and norm2.eps (%g) differ" %
                          (layer.norm1.eps, layer.norm2.eps))
    embed, heads = attn.embed_dim, attn.num_heads
    p_attention = float(attn.dropout)
    p_residual = float(layer.dropout1.p)
    p_activation = float(layer.dropout.p)
    spec = {
        "name": name or "torch_encoder_b%d_s%d_e%d" % (batch, seq, embed),
        "norm": "pre" if layer.norm_first else "post",
        "dims": {"batch": int(batch), "seq": int(seq), "heads": int(heads),
                 "head_dim": embed // heads, "embed": int(embed),
                 "ffn": int(layer.linear1.out_features)},
        "dropout": {"attention": p_attention, "residual": p_residual,
                    "activation": p_activation},
        "layernorm_eps": float(layer.norm1.eps),
        "dtype": _TORCH_TO_SPEC[dtype],
        "training": True,
    }
    if "activation" not in options:
        spec["activation"] = _activation_of(layer)
    for key, value in options.items():
        spec[key] = value
    return spec


def _parameters_from_torch(layer):
    """name -> tensor (detached copies) of a TransformerEncoderLayer."""
    attn = layer.self_attn
    embed = attn.embed_dim
    w, b = attn.in_proj_weight.detach(), attn.in_proj_bias.detach()
    out = {}
    for index, part in enumerate("qkv"):
        rows = slice(index * embed, (index + 1) * embed)
        out["w" + part] = w[rows].clone()
        out["b" + part] = b[rows].clone()
    out["wo"] = attn.out_proj.weight.detach().clone()
    out["bo"] = attn.out_proj.bias.detach().clone()
    out["ln1_scale"] = layer.norm1.weight.detach().clone()
    out["ln1_bias"] = layer.norm1.bias.detach().clone()
    out["w1"] = layer.linear1.weight.detach().clone()
    out["b1"] = layer.linear1.bias.detach().clone()
    out["w2"] = layer.linear2.weight.detach().clone()
    out["b2"] = layer.linear2.bias.detach().clone()
    out["ln2_scale"] = layer.norm2.weight.detach().clone()
    out["ln2_bias"] = layer.norm2.bias.detach().clone()
    return out


def _shapes(spec):
    d = spec["dims"]
    embed, ffn = d["embed"], d.get("ffn", 4 * d["embed"])
    shapes = {"x": (d["batch"], d["seq"], embed)}
    for name in PARAMETERS:
        if name in ("w1",):
            shapes[name] = (ffn, embed)
        elif name == "w2":
            shapes[name] = (embed, ffn)
        elif name == "b1":
            shapes[name] = (ffn,)
        elif name.startswith("w"):
            shapes[name] = (embed, embed)
        else:
            shapes[name] = (embed,)
    return shapes


def _prebuilt(compiled, spec):
    """A CompiledSpec (or its directory) checked against `spec`: the layer's
    dims, dtype and training flag must be the ones it was compiled for."""
    if not isinstance(compiled, CompiledSpec):
        compiled = CompiledSpec(str(compiled), spec)
    built = compiled.report.get("spec", {})
    for field in ("dims", "dtype", "training", "norm", "causal",
                  "activation"):
        want = spec.get(field)
        got = built.get(field)
        if field == "dims" and isinstance(want, dict) and isinstance(got,
                                                                     dict):
            got = {k: got.get(k) for k in want}
        if want is not None and got is not None and want != got:
            raise SluiceError(
                "the prebuilt module in %s was compiled for %s=%s, the layer "
                "needs %s" % (compiled.directory, field, got, want))
    return compiled


class _ModuleRunner:
    """Runs a compiled CPU or CUDA module: phase 0 forward, phase 1
    backward, on torch tensors' memory."""

    def __init__(self, compiled, cuda):
        library = compiled.cuda_library if cuda else compiled.cpu_library
        if library is None:
            raise SluiceError("the %s module of '%s' was not built" %
                              ("CUDA" if cuda else "CPU", compiled.name))
        self.module = load_module(library, cuda=cuda)
        self.cuda = cuda
        self.has_backward = len(self.module.phases) > 1
        # The saved tensors live in the context's saved region until its
        # backward.
        self.reusable_state = False
        known = {"x", "y", "dy"} | set(PARAMETERS) | {
            "d_" + n for n in ("x",) + PARAMETERS}
        for phase in self.module.phases:
            for tensor in phase:
                if tensor.name not in known:
                    raise SluiceError(
                        "module '%s' tensor '%s' is not a tensor of an "
                        "encoder layer" % (self.module.name, tensor.name))

    def _stream(self, device):
        if not self.cuda:
            return None
        return torch.cuda.current_stream(device)

    def _pointers(self, phase, tensors):
        pointers = []
        for spec in self.module.phases[phase]:
            tensor = tensors[spec.name]
            if tensor.numel() != spec.numel:
                raise SluiceError(
                    "module '%s' expects %d elements for '%s', got %d" %
                    (self.module.name, spec.numel, spec.name, tensor.numel()))
            pointers.append(tensor.data_ptr())
        return pointers

    def forward(self, x, params, seed, keep):
        y = torch.empty_like(x)
        tensors = dict(zip(PARAMETERS, params))
        tensors.update(x=x, y=y)
        context = self.module.acquire(x.device if self.cuda else None)
        try:
            self.module.run(context, 0, self._pointers(0, tensors), seed,
                            self._stream(x.device))
        except BaseException:
            self.module.release(context)
            raise
        if not keep:
            self.module.release(context)
            context = None
        return y, context

    def backward(self, context, x, params, y, dy, seed):
        tensors = dict(zip(PARAMETERS, params))
        tensors.update(x=x, y=y, dy=dy, d_x=torch.empty_like(x))
        for name, p in zip(PARAMETERS, params):
            tensors["d_" + name] = torch.empty_like(p)
        try:
            self.module.run(context, 1, self._pointers(1, tensors), seed,
                            self._stream(x.device))
        finally:
            self.module.release(context)
        return [tensors["d_x"]] + [tensors["d_" + n] for n in PARAMETERS]

    def discard(self, context):
        if context is not None:
            self.module.release(context)


class _ReferenceRunner:
    """The f64 interpreter (sluicec run --backend reference)."""

    def __init__(self, compiled):
        self.spec_path = compiled.spec_path
        self.training = bool(compiled.spec.get("training", False))
        self.has_backward = self.training
        # The state is the inputs: any number of backwards (gradcheck).
        self.reusable_state = True

    def _inputs(self, x, params):
        inputs = {"x": x.detach().cpu().numpy()}
        for name, p in zip(PARAMETERS, params):
            inputs[name] = p.detach().cpu().numpy()
        return inputs

    def forward(self, x, params, seed, keep):
        inputs = self._inputs(x, params)
        if self.training:
            inputs["dy"] = np.zeros(x.shape)
        out = run_reference(self.spec_path, inputs, seed)
        return torch.from_numpy(out["y"]).to(x.dtype), (inputs if keep
                                                        else None)

    def backward(self, inputs, x, params, y, dy, seed):
        inputs = dict(inputs)
        inputs["dy"] = dy.detach().cpu().numpy()
        out = run_reference(self.spec_path, inputs, seed)
        return [torch.from_numpy(out["d_" + n]).to(x.dtype)
                for n in ("x",) + PARAMETERS]

    def discard(self, state):
        pass


class _LayerFunction(torch.autograd.Function):
    """y = layer(x; params) through a runner; one backward per forward."""

    @staticmethod
    def forward(ctx, runner, seed, keep, x, *params):
        # `keep`: a backward may follow (grad mode on and some input needs a
        # gradient); decided by the caller, since grad mode is off in here.
        if keep and not runner.has_backward:
            raise SluiceError(
                "this layer was compiled for inference (training=false): it "
                "has no backward; compile it with training=True to train")
        y, state = runner.forward(x, params, seed, keep)
        ctx.runner, ctx.seed, ctx.state = runner, seed, state
        if keep:
            ctx.save_for_backward(x, y, *params)
        return y

    @staticmethod
    def backward(ctx, dy):
        if ctx.state is None:
            raise SluiceError(
                "a Sluice layer runs one backward per forward (its saved "
                "tensors live in its context's saved region); do not call "
                "backward twice through it (retain_graph)")
        x, y, *params = ctx.saved_tensors
        state = ctx.state
        if not ctx.runner.reusable_state:
            ctx.state = None
        grads = ctx.runner.backward(state, x, params, y, dy.contiguous(),
                                    ctx.seed)
        return (None, None, None) + tuple(grads)


class EncoderLayer(nn.Module):
    """A transformer encoder layer compiled by Sluice.

    Build it with EncoderLayer.from_torch(torch_layer, batch=, seq=, ...)
    or EncoderLayer(spec, ...). Parameters use Sluice's canonical names in
    PyTorch's shapes (wq [E, E] is nn.Linear's [out, in]). forward(x) takes
    [batch, seq, embed] (or [seq, batch, embed] with batch_first=False) of
    the layer's dtype on its device."""

    def __init__(self, spec, device="cpu", dtype=None, parameters=None,
                 batch_first=True, sluicec=None, cache_dir=None,
                 compiled=None):
        super().__init__()
        spec = normalize_spec(spec)
        # A directory written by `sluicec --compile` for this spec: used
        # as is, without sluicec (a machine with a GPU but no Sluice build).
        self._prebuilt = compiled
        device = torch.device(device)
        if dtype is None:
            dtype = _SPEC_TO_TORCH.get(spec.get("dtype", "f32"))
        if dtype not in _TORCH_TO_SPEC:
            raise SluiceError("dtype %s is not supported; use torch.float32, "
                              "float16, bfloat16 or float64" % dtype)
        if dtype == torch.float64:
            if device.type != "cpu":
                raise SluiceError("float64 layers run on the reference "
                                  "interpreter, on the CPU only")
        elif spec.get("dtype", "f32") != _TORCH_TO_SPEC[dtype]:
            raise SluiceError("dtype %s does not match the spec's dtype '%s'"
                              % (dtype, spec.get("dtype", "f32")))
        if device.type not in ("cpu", "cuda"):
            raise SluiceError("device %s: Sluice modules run on 'cpu' or "
                              "'cuda'" % device)
        if device.type == "cuda" and "target" not in spec:
            major, minor = torch.cuda.get_device_capability(device)
            arch = "sm_%d%d" % (major, minor)
            spec["target"] = arch if arch in _CUDA_ARCHS else "sm_90"
        self.spec = spec
        self.dtype = dtype
        self.device = device
        self.batch_first = batch_first
        self._sluicec, self._cache_dir = sluicec, cache_dir
        self._runners = {}
        self._runners_lock = threading.Lock()
        self.shapes = _shapes(spec)
        # Compile now so that a bad spec fails here, not in forward.
        self._runner(bool(spec.get("training", False)))
        if parameters is None:
            parameters = self._initial_parameters()
        for name in PARAMETERS:
            if name not in parameters:
                raise SluiceError("parameter '%s' is missing" % name)
            value = torch.as_tensor(parameters[name])
            if tuple(value.shape) != self.shapes[name]:
                raise SluiceError("parameter '%s' has shape %s, the layer "
                                  "needs %s" % (name, tuple(value.shape),
                                                self.shapes[name]))
            self.register_parameter(name, nn.Parameter(
                value.detach().to(device=device, dtype=dtype).contiguous()))

    # -- construction ------------------------------------------------------

    @classmethod
    def from_torch(cls, layer, batch, seq, dtype=torch.float32, device="cpu",
                   name=None, sluicec=None, cache_dir=None, compiled=None,
                   **spec_options):
        """An EncoderLayer with `layer`'s weights (a
        torch.nn.TransformerEncoderLayer), compiled for inputs of `batch` x
        `seq`. `spec_options` are spec fields (training=False for an
        inference-only layer, causal=True, target='sm_90', ...)."""
        spec = spec_from_torch(layer, batch, seq, dtype=dtype, name=name,
                               **spec_options)
        return cls(spec, device=device, dtype=dtype,
                   parameters=_parameters_from_torch(layer),
                   batch_first=getattr(layer.self_attn, "batch_first", True),
                   sluicec=sluicec, cache_dir=cache_dir, compiled=compiled)

    def _initial_parameters(self):
        """nn.TransformerEncoderLayer's initialization for these dims."""
        d = self.spec["dims"]
        reference = nn.TransformerEncoderLayer(
            d["embed"], d["heads"], dim_feedforward=d.get("ffn",
                                                          4 * d["embed"]),
            batch_first=True)
        return _parameters_from_torch(reference)

    # -- modules -----------------------------------------------------------

    def _runner(self, training):
        """The runner for a training (forward + backward) or inference
        module, compiled on first use (cached by spec hash)."""
        with self._runners_lock:
            runner = self._runners.get(training)
            if runner is not None:
                return runner
            spec = dict(self.spec)
            spec["training"] = training
            reference = self.dtype == torch.float64
            cuda = self.device.type == "cuda"
            if self._prebuilt is not None:
                compiled = _prebuilt(self._prebuilt, spec)
            else:
                compiled = compile_spec(
                    spec, cpu=not cuda and not reference, cuda=cuda,
                    cuda_arch=spec.get("target"), sluicec=self._sluicec,
                    cache_dir=self._cache_dir)
            runner = (_ReferenceRunner(compiled) if reference else
                      _ModuleRunner(compiled, cuda))
            self._runners[training] = runner
            self.compiled = compiled
            return runner

    @property
    def report(self):
        """report.json of the compiled layer, as a dict."""
        return self.compiled.report

    # -- forward -----------------------------------------------------------

    def _check_input(self, x):
        if not isinstance(x, torch.Tensor):
            raise SluiceError("expected a torch.Tensor input, got %s" %
                              type(x).__name__)
        if x.dtype != self.dtype:
            raise SluiceError("input has dtype %s; this layer is compiled for "
                              "%s" % (x.dtype, self.dtype))
        if x.device.type != self.device.type:
            raise SluiceError("input is on %s; this layer runs on %s" %
                              (x.device, self.device))
        b, s, e = self.shapes["x"]
        want = (b, s, e) if self.batch_first else (s, b, e)
        if tuple(x.shape) != want:
            raise SluiceError(
                "input has shape %s; this layer is compiled for %s (batch=%d, "
                "seq=%d, embed=%d%s)" % (tuple(x.shape), want, b, s, e,
                                          "" if self.batch_first else
                                          ", batch_first=False"))
        for name in PARAMETERS:
            p = getattr(self, name)
            if p.dtype != self.dtype or p.device.type != self.device.type:
                raise SluiceError(
                    "parameter '%s' is %s on %s; the layer is compiled for %s "
                    "on %s" % (name, p.dtype, p.device, self.dtype,
                               self.device))

    def _seed(self):
        dropout = self.spec.get("dropout", {})
        probabilities = [dropout.get(k, 0.1) for k in
                         ("attention", "residual", "activation")] \
            if isinstance(dropout, dict) else []
        if self.training and any(probabilities):
            return int(torch.randint(0, 2 ** 62, (1,)).item())
        return 0

    def forward(self, src, src_mask=None, src_key_padding_mask=None,
                is_causal=None):
        if src_mask is not None or src_key_padding_mask is not None:
            raise SluiceError(
                "masks are compiled into a Sluice layer: build it with "
                "causal=True for a causal mask; padding masks are not "
                "supported")
        self._check_input(src)
        x = src if self.batch_first else src.transpose(0, 1)
        x = x.contiguous()
        dropout = self.spec.get("dropout")
        has_dropout = dropout is None or (isinstance(dropout, dict) and any(
            dropout.get(k, 0.1) for k in
            ("attention", "residual", "activation")))
        wants_grad = torch.is_grad_enabled() and (
            x.requires_grad or any(p.requires_grad for p in self.parameters()))
        trained = bool(self.spec.get("training", False))
        # Eval mode with dropout needs the inference module (no dropout).
        training_module = trained and (self.training or not has_dropout
                                       or wants_grad)
        runner = self._runner(training_module)
        params = [getattr(self, n) for n in PARAMETERS]
        y = _LayerFunction.apply(runner, self._seed(), wants_grad, x, *params)
        return y if self.batch_first else y.transpose(0, 1)

    def extra_repr(self):
        d = self.spec["dims"]
        return "batch=%d, seq=%d, heads=%d, embed=%d, ffn=%d, %s, %s" % (
            d["batch"], d["seq"], d["heads"], d["embed"],
            d.get("ffn", 4 * d["embed"]), self.dtype, self.device)


def from_torch_encoder(encoder, batch, seq, dtype=torch.float32,
                       device="cpu", **spec_options):
    """A torch.nn.TransformerEncoder (or any iterable of
    TransformerEncoderLayers) as an nn.Sequential of EncoderLayers. Layers
    with the same configuration share one compiled module (loaded once)."""
    layers = getattr(encoder, "layers", encoder)
    if getattr(encoder, "norm", None) is not None:
        raise SluiceError("TransformerEncoder(norm=...) is not supported: "
                          "apply the final norm yourself")
    return nn.Sequential(*[
        EncoderLayer.from_torch(layer, batch=batch, seq=seq, dtype=dtype,
                                device=device, **spec_options)
        for layer in layers])
