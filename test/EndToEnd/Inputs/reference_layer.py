"""An independent numpy implementation of Sluice's encoder layer.

The oracle of the end-to-end tests (docs/Testing.md): the forward pass and a
hand-derived backward pass of the layer defined in docs/SpecFormat.md, and
the dropout masks of docs/Interpreter.md (Philox-4x32-10, bit-exact). It
shares no code with Sluice and uses no autodiff library: every gradient below
is written out by hand. Everything is computed in float64.

Tensors use PyTorch shapes: x [B, S, E]; wq, wk, wv, wo [E, E] (nn.Linear,
[out, in]; the projection's output feature h * P + p); biases and layernorm
parameters [E]; w1 [U, E]; b1 [U]; w2 [E, U]; b2 [E].
"""

import json
import math
import os

import numpy as np

# The boundary inputs of the layer, in the graph's argument order.
PARAMETERS = ["x", "wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo",
              "ln1_scale", "ln1_bias", "w1", "b1", "w2", "b2",
              "ln2_scale", "ln2_bias"]

# ---------------------------------------------------------------------------
# Philox-4x32-10 and the dropout draw
# ---------------------------------------------------------------------------

_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_W0 = 0x9E3779B9
_W1 = 0xBB67AE85
_LO = np.uint64(0xFFFFFFFF)
_32 = np.uint64(32)


def philox4x32_10(counter, key):
    """Philox-4x32-10 of `counter` (four arrays of 32-bit words, any common
    shape) under `key` (two ints). Returns four uint64 arrays of 32-bit
    words."""
    c0, c1, c2, c3 = (np.asarray(c, dtype=np.uint64) & _LO for c in counter)
    k0, k1 = int(key[0]) & 0xFFFFFFFF, int(key[1]) & 0xFFFFFFFF
    for rnd in range(10):
        if rnd > 0:
            k0 = (k0 + _W0) & 0xFFFFFFFF
            k1 = (k1 + _W1) & 0xFFFFFFFF
        p0 = _M0 * c0          # 32 x 32 -> 64 bits: never wraps in uint64
        p1 = _M1 * c2
        c0, c1, c2, c3 = ((p1 >> _32) ^ c1 ^ np.uint64(k0), p1 & _LO,
                          (p0 >> _32) ^ c3 ^ np.uint64(k1), p0 & _LO)
    return c0, c1, c2, c3


# Random123's known-answer vectors (kat_vectors, philox4x32 10).
PHILOX_KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
    ((0xffffffff,) * 4, (0xffffffff,) * 2,
     (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344),
     (0xa4093822, 0x299f31d0),
     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1)),
]


def check_philox():
    """Raises if the numpy Philox disagrees with a known-answer vector."""
    for counter, key, expected in PHILOX_KAT:
        out = tuple(int(w) for w in philox4x32_10(counter, key))
        if out != expected:
            raise AssertionError("philox4x32_10(%s, %s) = %s, expected %s" % (
                [hex(c) for c in counter], [hex(k) for k in key],
                [hex(w) for w in out], [hex(w) for w in expected]))


def dropout_threshold(probability):
    """The integer keep threshold of Philox.h: min(ceil(p * 2^32), 2^32 - 1)."""
    return min(int(math.ceil(probability * 4294967296.0)), 0xFFFFFFFF)


def dropout_words(seed, stream, element):
    """The 32-bit draw of each `element` (a uint64 array): word element % 4
    of the Philox block of counter element / 4."""
    element = np.asarray(element, dtype=np.uint64)
    block = element >> np.uint64(2)
    out = philox4x32_10((block & _LO, block >> _32,
                         np.full_like(block, stream & 0xFFFFFFFF),
                         np.zeros_like(block)),
                        (seed & 0xFFFFFFFF, seed >> 32))
    word = (element & np.uint64(3)).astype(np.int64)
    return np.choose(word, out)


def dropout_mask(seed, stream, probability, names, shape):
    """The 0/1 keep-mask of a tensor whose axes are the named dimensions
    `names` (in the array's axis order, the layout: the last is innermost)
    with sizes `shape`. The element index is row-major over the dimensions
    sorted by name, the innermost one moved last (DropoutOrder.h)."""
    last = len(names) - 1
    order = sorted(range(last), key=lambda a: names[a]) + [last]
    sorted_shape = [shape[a] for a in order]
    index = np.arange(int(np.prod(shape)), dtype=np.uint64)
    index = index.reshape(sorted_shape)
    # Axis a of the array is axis order.index(a) of the sorted index.
    index = np.transpose(index, [order.index(a) for a in range(len(names))])
    keep = dropout_words(seed, stream, index) >= dropout_threshold(probability)
    return keep.astype(np.float64)


# ---------------------------------------------------------------------------
# The spec
# ---------------------------------------------------------------------------

class Spec:
    """The fields of a layer spec that change the numbers, with the
    defaults of docs/SpecFormat.md."""

    def __init__(self, path):
        with open(path) as f:
            data = json.load(f)
        dims = data["dims"]
        self.batch = dims["batch"]
        self.seq = dims["seq"]
        self.heads = dims["heads"]
        self.embed = dims["embed"]
        self.head_dim = dims.get("head_dim", self.embed // self.heads)
        # Grouped-query attention: K and V project to kv_heads heads (only
        # shapes() knows it; run_layer computes multi-head attention).
        self.kv_heads = dims.get("kv_heads", self.heads)
        self.ffn = dims.get("ffn", 4 * self.embed)
        self.norm = data.get("norm", "post")
        self.causal = data.get("causal", False)
        self.activation = data.get("activation", "gelu")
        dropout = data.get("dropout", {})
        self.p_attention = dropout.get("attention", 0.1)
        self.p_residual = dropout.get("residual", 0.1)
        self.p_activation = dropout.get("activation", 0.1)
        self.eps = data.get("layernorm_eps", 1e-5)
        self.training = data.get("training", False)
        self.dtype = data.get("dtype", "f32")

    def shapes(self):
        """Every boundary input's PyTorch shape (dy too when training)."""
        B, S, E, U = self.batch, self.seq, self.embed, self.ffn
        shapes = {"x": (B, S, E)}
        KV = self.kv_heads * self.head_dim
        for n in ["wq", "wk", "wv", "wo"]:
            shapes[n] = (KV, E) if n in ("wk", "wv") else (E, E)
        for n in ["bq", "bk", "bv", "bo", "b2", "ln1_scale", "ln1_bias",
                  "ln2_scale", "ln2_bias"]:
            shapes[n] = (KV,) if n in ("bk", "bv") else (E,)
        shapes["w1"] = (U, E)
        shapes["b1"] = (U,)
        shapes["w2"] = (E, U)
        if self.training:
            shapes["dy"] = (B, S, E)
        return shapes


# ---------------------------------------------------------------------------
# Building blocks: forward returns (result, cache); backward takes the
# cotangent and the cache.
# ---------------------------------------------------------------------------

def linear(t, w, b):
    """t [..., in] @ w[out, in]^T + b[out]."""
    return t @ w.T + b, t


def linear_backward(dy, t, w):
    """Returns d_t, d_w, d_b."""
    dt = dy @ w
    dw = dy.reshape(-1, dy.shape[-1]).T @ t.reshape(-1, t.shape[-1])
    db = dy.reshape(-1, dy.shape[-1]).sum(axis=0)
    return dt, dw, db


def layernorm(t, scale, bias, eps):
    mean = t.mean(axis=-1, keepdims=True)
    centered = t - mean
    var = (centered * centered).mean(axis=-1, keepdims=True)  # biased
    rstd = 1.0 / np.sqrt(var + eps)
    xhat = centered * rstd
    return xhat * scale + bias, (xhat, rstd, scale)


def layernorm_backward(dy, cache):
    """Returns d_t, d_scale, d_bias."""
    xhat, rstd, scale = cache
    dxhat = dy * scale
    dt = rstd * (dxhat - dxhat.mean(axis=-1, keepdims=True)
                 - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))
    flat = dy.reshape(-1, dy.shape[-1])
    dscale = (flat * xhat.reshape(flat.shape)).sum(axis=0)
    dbias = flat.sum(axis=0)
    return dt, dscale, dbias


_erf = np.vectorize(math.erf, otypes=[np.float64])
_GELU_TANH_C = math.sqrt(2.0 / math.pi)


def activation(kind, t):
    if kind == "relu":
        return np.maximum(t, 0.0)
    if kind == "gelu":
        return 0.5 * t * (1.0 + _erf(t / math.sqrt(2.0)))
    if kind == "gelu_tanh":
        return 0.5 * t * (1.0 + np.tanh(_GELU_TANH_C *
                                        (t + 0.044715 * t ** 3)))
    raise ValueError("unknown activation " + kind)


def activation_derivative(kind, t):
    if kind == "relu":
        return (t > 0).astype(np.float64)
    if kind == "gelu":
        cdf = 0.5 * (1.0 + _erf(t / math.sqrt(2.0)))
        pdf = np.exp(-0.5 * t * t) / math.sqrt(2.0 * math.pi)
        return cdf + t * pdf
    if kind == "gelu_tanh":
        th = np.tanh(_GELU_TANH_C * (t + 0.044715 * t ** 3))
        return (0.5 * (1.0 + th) + 0.5 * t * (1.0 - th * th) * _GELU_TANH_C
                * (1.0 + 3.0 * 0.044715 * t * t))
    raise ValueError("unknown activation " + kind)


class Layer:
    """One encoder layer of `spec` with dropout seed `seed`."""

    def __init__(self, spec, seed):
        self.spec = spec
        self.seed = seed
        B, S, H, P, E, U = (spec.batch, spec.seq, spec.heads, spec.head_dim,
                            spec.embed, spec.ffn)
        on = spec.training

        def scaled_mask(p, stream, names, shape):
            # drop_s(t, p) = t * mask / (1 - p): the identity when off.
            if not on or p <= 0.0:
                return None
            return dropout_mask(seed, stream, p, names, shape) / (1.0 - p)

        # Attention probabilities [b, h, j, k]; FFN activation [b, j, u];
        # the two residual-branch outputs [b, j, i].
        self.m_attn = scaled_mask(spec.p_attention, 0, "bhjk", (B, H, S, S))
        self.m_out = scaled_mask(spec.p_residual, 1, "bji", (B, S, E))
        self.m_act = scaled_mask(spec.p_activation, 2, "bju", (B, S, U))
        self.m_ffn = scaled_mask(spec.p_residual, 3, "bji", (B, S, E))

    @staticmethod
    def _drop(t, mask):
        return t if mask is None else t * mask

    # -- attention ----------------------------------------------------------

    def attention(self, t, w):
        s = self.spec
        B, S, H, P = s.batch, s.seq, s.heads, s.head_dim
        q, _ = linear(t, w["wq"], w["bq"])
        k, _ = linear(t, w["wk"], w["bk"])
        v, _ = linear(t, w["wv"], w["bv"])
        q4 = q.reshape(B, S, H, P)
        k4 = k.reshape(B, S, H, P)
        v4 = v.reshape(B, S, H, P)
        scale = 1.0 / math.sqrt(P)
        scores = np.einsum("bjhp,bkhp->bhjk", q4, k4) * scale
        if s.causal:
            later = np.triu(np.ones((S, S), dtype=bool), 1)  # k > j
            scores = np.where(later, -np.inf, scores)
        smax = scores.max(axis=-1, keepdims=True)
        e = np.exp(scores - smax)
        probs = e / e.sum(axis=-1, keepdims=True)
        dprobs = self._drop(probs, self.m_attn)
        ctx = np.einsum("bhjk,bkhp->bjhp", dprobs, v4).reshape(B, S, H * P)
        o, _ = linear(ctx, w["wo"], w["bo"])
        out = self._drop(o, self.m_out)
        return out, (t, q4, k4, v4, probs, dprobs, ctx)

    def attention_backward(self, dout, cache, w, grads):
        s = self.spec
        B, S, H, P = s.batch, s.seq, s.heads, s.head_dim
        t, q4, k4, v4, probs, dprobs, ctx = cache
        do = self._drop(dout, self.m_out)
        dctx, dwo, dbo = linear_backward(do, ctx, w["wo"])
        grads["wo"] += dwo
        grads["bo"] += dbo
        dctx4 = dctx.reshape(B, S, H, P)
        ddprobs = np.einsum("bjhp,bkhp->bhjk", dctx4, v4)
        dv4 = np.einsum("bhjk,bjhp->bkhp", dprobs, dctx4)
        dprobs_ = self._drop(ddprobs, self.m_attn)
        # Softmax over k: ds = a * (da - sum_k da * a).
        dscores = probs * (dprobs_ - (dprobs_ * probs).sum(axis=-1,
                                                           keepdims=True))
        # The causal mask's gradient is zero where it wrote -inf (a = 0).
        dscores = dscores / math.sqrt(P)
        dq4 = np.einsum("bhjk,bkhp->bjhp", dscores, k4)
        dk4 = np.einsum("bhjk,bjhp->bkhp", dscores, q4)
        dt = np.zeros_like(t)
        for name, d4 in (("q", dq4), ("k", dk4), ("v", dv4)):
            dproj = d4.reshape(B, S, H * P)
            d, dw_, db_ = linear_backward(dproj, t, w["w" + name])
            dt += d
            grads["w" + name] += dw_
            grads["b" + name] += db_
        return dt

    # -- feed-forward -------------------------------------------------------

    def feed_forward(self, t, w):
        f, _ = linear(t, w["w1"], w["b1"])
        a = activation(self.spec.activation, f)
        da = self._drop(a, self.m_act)
        g, _ = linear(da, w["w2"], w["b2"])
        return self._drop(g, self.m_ffn), (t, f, da)

    def feed_forward_backward(self, dout, cache, w, grads):
        t, f, da = cache
        dg = self._drop(dout, self.m_ffn)
        dda, dw2, db2 = linear_backward(dg, da, w["w2"])
        grads["w2"] += dw2
        grads["b2"] += db2
        dact = self._drop(dda, self.m_act)
        df = dact * activation_derivative(self.spec.activation, f)
        dt, dw1, db1 = linear_backward(df, t, w["w1"])
        grads["w1"] += dw1
        grads["b1"] += db1
        return dt

    # -- the layer ----------------------------------------------------------

    def forward(self, w):
        """y, and the cache for backward."""
        s = self.spec
        x = w["x"]
        if s.norm == "post":
            # x1 = ln1(x + drop(attn(x))); y = ln2(x1 + drop(ffn(x1)))
            a, ca = self.attention(x, w)
            x1, c1 = layernorm(x + a, w["ln1_scale"], w["ln1_bias"], s.eps)
            f, cf = self.feed_forward(x1, w)
            y, c2 = layernorm(x1 + f, w["ln2_scale"], w["ln2_bias"], s.eps)
            return y, (ca, c1, cf, c2)
        # r = x + drop(attn(ln1(x))); y = r + drop(ffn(ln2(r)))
        h, c1 = layernorm(x, w["ln1_scale"], w["ln1_bias"], s.eps)
        a, ca = self.attention(h, w)
        r = x + a
        h2, c2 = layernorm(r, w["ln2_scale"], w["ln2_bias"], s.eps)
        f, cf = self.feed_forward(h2, w)
        return r + f, (ca, c1, cf, c2)

    def backward(self, w, dy, cache):
        """The gradient of sum(y * dy) with respect to every parameter."""
        s = self.spec
        ca, c1, cf, c2 = cache
        grads = {n: np.zeros_like(w[n]) for n in PARAMETERS}
        if s.norm == "post":
            dr2, grads["ln2_scale"], grads["ln2_bias"] = \
                layernorm_backward(dy, c2)
            dx1 = dr2 + self.feed_forward_backward(dr2, cf, w, grads)
            dr1, grads["ln1_scale"], grads["ln1_bias"] = \
                layernorm_backward(dx1, c1)
            grads["x"] = dr1 + self.attention_backward(dr1, ca, w, grads)
            return grads
        dh2 = self.feed_forward_backward(dy, cf, w, grads)
        dr, grads["ln2_scale"], grads["ln2_bias"] = layernorm_backward(dh2, c2)
        dr = dr + dy
        dh = self.attention_backward(dr, ca, w, grads)
        dx, grads["ln1_scale"], grads["ln1_bias"] = layernorm_backward(dh, c1)
        grads["x"] = dr + dx
        return grads


def run_layer(spec, inputs, seed):
    """{'y': ..., 'd_<name>': ...}: the outputs `sluicec run` writes."""
    if spec.kv_heads != spec.heads:
        raise ValueError("reference_layer computes multi-head attention only "
                         "(kv_heads %d != heads %d)" % (spec.kv_heads, spec.heads))
    w = {n: np.asarray(a, dtype=np.float64) for n, a in inputs.items()}
    layer = Layer(spec, seed)
    y, cache = layer.forward(w)
    outputs = {"y": y}
    if spec.training:
        grads = layer.backward(w, w["dy"], cache)
        for n in PARAMETERS:
            outputs["d_" + n] = grads[n]
    return outputs


def finite_difference_check(spec, inputs, seed, step=1e-6, samples=6,
                            rng=None, floor=1e-2):
    """Central differences of sum(y * dy) against the hand-written
    backward, at a few random elements of every parameter. Returns the
    worst relative error |fd - analytic| / max(max|analytic|, floor) (the
    floor for d_bk, which is zero in exact arithmetic)."""
    rng = rng or np.random.default_rng(0)
    w = {n: np.asarray(a, dtype=np.float64).copy() for n, a in inputs.items()}
    layer = Layer(spec, seed)
    dy = w["dy"]
    y, cache = layer.forward(w)
    grads = layer.backward(w, dy, cache)
    worst = 0.0
    report = {}
    for n in PARAMETERS:
        flat = w[n].reshape(-1)
        scale = max(np.abs(grads[n]).max(), floor)
        err = 0.0
        for idx in rng.choice(flat.size, size=min(samples, flat.size),
                              replace=False):
            old = flat[idx]
            flat[idx] = old + step
            plus = (layer.forward(w)[0] * dy).sum()
            flat[idx] = old - step
            minus = (layer.forward(w)[0] * dy).sum()
            flat[idx] = old
            fd = (plus - minus) / (2 * step)
            err = max(err, abs(fd - grads[n].reshape(-1)[idx]) / scale)
        report[n] = err
        worst = max(worst, err)
    return worst, report
