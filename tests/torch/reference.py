"""An independent PyTorch reference for every stage of an Attention Lab session.

Written apart from both the C++ core and the exporter's script: it reads the session
dict itself, computes in float64 (so float32 round-off in the code under test is the
only difference), uses einsum instead of matmul/view, and its own max-subtracted
softmax instead of torch.softmax. Only the dropout keep decisions have to follow the
core's documented counter-based generator (al::dropout_keeps), ported below.
"""
import math

import torch

MASK64 = (1 << 64) - 1


def splitmix64(x):
    """al::splitmix64 (core/base/random.cpp)."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def uniform01(seed, counter):
    """al::uniform01: 53 random bits of splitmix64(splitmix64(seed) ^ counter), in [0, 1)."""
    return (splitmix64(splitmix64(seed) ^ counter) >> 11) * 2.0**-53


def dropout_keeps(seed, p, flat_index):
    """al::dropout_keeps: a weight survives when its uniform draw is at least p."""
    return uniform01(seed, flat_index) >= p


def as_tensor(value):
    """Nested lists (with "NaN", "Infinity", "-Infinity" strings) -> float64 tensor."""
    def number(v):
        if isinstance(v, list):
            return [number(x) for x in v]
        if isinstance(v, str):
            return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[v]
        return float(v)
    return torch.tensor(number(value), dtype=torch.float64)


def with_batch(t, rank):
    """The format's shorthand: (L, d) means (1, L, d), (Lk) key padding means (1, Lk)."""
    while t.dim() < rank:
        t = t.unsqueeze(0)
    return t


def stages(session, leaf=None, absent_rows_attend_nothing=False):
    """Every stage of the session dict, as float64 tensors in trace shapes.

    leaf(name, tensor) -> tensor, when given, sees every input and weight under the
    session's own name (inputs as (B, L, d), weights in math layout) before use: the gradient test makes
    them autograd leaves there. absent_rows_attend_nothing: a query whose every key
    is masked with -inf gets weights 0 instead of NaN (the backward's convention)."""
    leaf = leaf or (lambda name, t: t)
    config = session["config"]
    mode = config.get("mode", "projection")
    cross = config.get("attention", "self") == "cross"
    d_model = config["d_model"]
    heads = config["num_heads"]
    d_k = d_model // heads
    use_bias = config.get("bias", True)
    weights = session.get("weights", {})
    torch_layout = weights.get("layout", "math") == "torch"

    def weight(name):
        """Math layout (in, out): y = x @ W."""
        if name not in weights:
            return None
        w = as_tensor(weights[name])
        return leaf(name, (w.t() if torch_layout else w).contiguous())

    def bias(name):
        return leaf(name, as_tensor(weights[name])) if use_bias and name in weights else None

    if mode == "direct":
        Q, K, V = (leaf(name, with_batch(as_tensor(session[name]), 3)) for name in "qkv")
    else:
        x_q = leaf("x_q" if cross else "x", with_batch(as_tensor(session["x_q" if cross else "x"]), 3))
        x_kv = leaf("x_kv", with_batch(as_tensor(session["x_kv"]), 3)) if cross else x_q
        if "w_qkv" in weights:
            w_qkv, b_qkv = weight("w_qkv"), bias("b_qkv")  # (d, 3d), (3d)
            blocks = [slice(i * d_model, (i + 1) * d_model) for i in range(3)]
            wq, wk, wv = (w_qkv[:, s] for s in blocks)
            bq, bk, bv = (b_qkv[s] if b_qkv is not None else None for s in blocks)
        else:
            wq, wk, wv = weight("w_q"), weight("w_k"), weight("w_v")
            bq, bk, bv = bias("b_q"), bias("b_k"), bias("b_v")

        def project(x, w, b):
            y = torch.einsum("bld,de->ble", x, w)
            return y + b if b is not None else y
        Q, K, V = project(x_q, wq, bq), project(x_kv, wk, bk), project(x_kv, wv, bv)

    batch, len_q, len_kv = Q.shape[0], Q.shape[1], K.shape[1]

    def heads_first(t):  # (B, L, d_model) -> (B, h, L, d_k)
        return t.reshape(t.shape[0], t.shape[1], heads, d_k).permute(0, 2, 1, 3)
    q, k, v = heads_first(Q), heads_first(K), heads_first(V)

    scores = torch.einsum("bhqd,bhkd->bhqk", q, k)
    scale_spec = config.get("scale", "sqrt_dk")
    scale = 1.0 / math.sqrt(d_k) if scale_spec == "sqrt_dk" else (1.0 if scale_spec == "none" else float(scale_spec))
    scaled = scores * scale

    mask_spec = config.get("mask") or {}
    attend = torch.ones(batch, len_q, len_kv, dtype=torch.bool)
    if mask_spec.get("causal"):
        i = torch.arange(len_q)[:, None]
        j = torch.arange(len_kv)[None, :]
        attend &= j <= i
    if mask_spec.get("key_padding") is not None:
        attend &= with_batch(as_tensor(mask_spec["key_padding"]), 2)[:, None, :] != 0
    if mask_spec.get("custom") is not None:
        attend &= with_batch(as_tensor(mask_spec["custom"]), 3) != 0
    fill_spec = config.get("mask_fill", "-inf")
    fill = -math.inf if fill_spec == "-inf" else float(fill_spec)
    # The fill is stored as float32 by the code under test: compare against that value.
    fill = float(torch.tensor(fill, dtype=torch.float32))
    masked = torch.where(attend[:, None], scaled, torch.full_like(scaled, fill))

    # Softmax written out: subtract the row max, exp, divide by the sum. A row of
    # -inf gives (-inf) - (-inf) = NaN everywhere, as PyTorch does (unless those
    # rows attend nothing: then their softmax runs on zeros and is replaced by 0).
    absent = (~attend.any(dim=-1))[:, None, :, None] if absent_rows_attend_nothing and fill == -math.inf else None
    softmax_in = masked if absent is None else torch.where(absent, torch.zeros_like(masked), masked)
    row_max = softmax_in.max(dim=-1, keepdim=True).values
    exps = torch.exp(softmax_in - row_max)
    weights_ = exps / exps.sum(dim=-1, keepdim=True)
    if absent is not None:
        weights_ = torch.where(absent, torch.zeros_like(weights_), weights_)

    dropout = config.get("dropout") or {}
    p = float(dropout.get("p", 0.0))
    if dropout.get("training") and p > 0:
        seed = int(dropout.get("seed", 0))
        n = batch * heads * len_q * len_kv
        keep = torch.tensor([1.0 if dropout_keeps(seed, p, i) else 0.0 for i in range(n)],
                            dtype=torch.float64).reshape(weights_.shape)
        # PyTorch's inverted dropout multiplies (so a NaN weight stays NaN even where dropped).
        dropped = weights_ * keep / (1.0 - p)
    else:
        dropped = weights_

    context = torch.einsum("bhqk,bhkd->bhqd", dropped, v)
    concat = context.permute(0, 2, 1, 3).reshape(batch, len_q, d_model)
    w_o = weight("w_o")
    if w_o is not None:
        output = torch.einsum("bld,de->ble", concat, w_o)
        b_o = bias("b_o")
        if b_o is not None:
            output = output + b_o
    else:
        output = concat
    return {"q": q, "k": k, "v": v, "scores": scores, "scaled": scaled, "masked": masked,
            "weights": weights_, "dropped": dropped, "context": context, "concat": concat,
            "output": output}


def compare(name, actual, expected, tolerance=1e-5):
    """None if `actual` (any tensor or nested lists) agrees with `expected`: same shape,
    NaN in the same places, equal infinities, and |a - e| <= tolerance * max(1, |e|)
    elsewhere. Otherwise a message naming the first bad cell."""
    a = actual if isinstance(actual, torch.Tensor) else as_tensor(actual)
    e = expected if isinstance(expected, torch.Tensor) else as_tensor(expected)
    a, e = a.double(), e.double()
    if tuple(a.shape) != tuple(e.shape):
        return "%s: shape %s, expected %s" % (name, tuple(a.shape), tuple(e.shape))
    nan_a, nan_e = torch.isnan(a), torch.isnan(e)
    if not torch.equal(nan_a, nan_e):
        cell = tuple(torch.nonzero(nan_a != nan_e)[0].tolist())
        return "%s%s: NaN mismatch, got %s, expected %s" % (name, cell, a[cell].item(), e[cell].item())
    inf_a, inf_e = torch.isinf(a), torch.isinf(e)
    bad_inf = (inf_a != inf_e) | (inf_e & (a != e))
    if bad_inf.any():
        cell = tuple(torch.nonzero(bad_inf)[0].tolist())
        return "%s%s: got %s, expected %s" % (name, cell, a[cell].item(), e[cell].item())
    finite = ~(nan_e | inf_e)
    error = torch.where(finite, (a - e).abs() / e.abs().clamp(min=1.0), torch.zeros_like(a))
    if error.numel() and error.max() > tolerance:
        cell = tuple(torch.nonzero(error == error.max())[0].tolist())
        return "%s%s: got %.9g, expected %.9g (error %.3g > %.0e)" % (
            name, cell, a[cell].item(), e[cell].item(), error[cell].item(), tolerance)
    return None


def max_error(actual, expected):
    """The largest scaled difference over finite cells (for the summary line)."""
    a = (actual if isinstance(actual, torch.Tensor) else as_tensor(actual)).double()
    e = (expected if isinstance(expected, torch.Tensor) else as_tensor(expected)).double()
    finite = torch.isfinite(e) & torch.isfinite(a)
    if not finite.any():
        return 0.0
    return ((a - e).abs() / e.abs().clamp(min=1.0))[finite].max().item()
