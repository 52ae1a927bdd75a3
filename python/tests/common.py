"""Shared helpers of the sluice package tests (run by ctest, see
python/tests/CMakeLists.txt or `python3 -m unittest discover python/tests`)."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

import sluice  # noqa: E402
from sluice.torch_layer import PARAMETERS  # noqa: E402


def torch_layer(embed=16, heads=2, ffn=32, activation="gelu",
                norm_first=False, dtype=torch.float32, seed=0):
    """A dropout-free nn.TransformerEncoderLayer with random weights (biases
    and norms too, so that every gradient is exercised)."""
    torch.manual_seed(seed)
    layer = nn.TransformerEncoderLayer(
        embed, heads, dim_feedforward=ffn, dropout=0.0,
        activation=activation, batch_first=True, norm_first=norm_first,
        layer_norm_eps=1e-5)
    with torch.no_grad():
        for p in layer.parameters():
            if p.dim() == 1:
                p.normal_(0.0, 0.3)
        layer.norm1.weight.add_(1.0)
        layer.norm2.weight.add_(1.0)
    return layer.to(dtype)


def torch_gradients(layer):
    """Sluice's canonical name -> the gradient of a TransformerEncoderLayer's
    parameter (Q/K/V split from in_proj)."""
    attn = layer.self_attn
    e = attn.embed_dim
    gw, gb = attn.in_proj_weight.grad, attn.in_proj_bias.grad
    grads = {}
    for index, part in enumerate("qkv"):
        grads["w" + part] = gw[index * e:(index + 1) * e]
        grads["b" + part] = gb[index * e:(index + 1) * e]
    grads.update(wo=attn.out_proj.weight.grad, bo=attn.out_proj.bias.grad,
                 ln1_scale=layer.norm1.weight.grad,
                 ln1_bias=layer.norm1.bias.grad, w1=layer.linear1.weight.grad,
                 b1=layer.linear1.bias.grad, w2=layer.linear2.weight.grad,
                 b2=layer.linear2.bias.grad, ln2_scale=layer.norm2.weight.grad,
                 ln2_bias=layer.norm2.bias.grad)
    return grads


def relative_error(a, b):
    """max|a - b| / max(max|b|, 1e-3)."""
    scale = max(float(b.abs().max()), 1e-3)
    return float((a - b).abs().max()) / scale
