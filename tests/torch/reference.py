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

    kv_heads = config.get("num_kv_heads") or heads
    kv_width = kv_heads * d_k
    positional = config.get("positional") or {"type": "none"}
    kind = positional.get("type", "none")
    extra = {}
    if mode == "direct":
        Q, K, V = (leaf(name, with_batch(as_tensor(session[name]), 3)) for name in "qkv")
    else:
        x_q = leaf("x_q" if cross else "x", with_batch(as_tensor(session["x_q" if cross else "x"]), 3))
        x_kv = leaf("x_kv", with_batch(as_tensor(session["x_kv"]), 3)) if cross else x_q
        if kind == "sinusoidal":  # the Annotated Transformer's table: sin on even, cos on odd columns
            x_q = x_q + sinusoidal_table(x_q.shape[1], d_model)
            x_kv = x_kv + sinusoidal_table(x_kv.shape[1], d_model) if cross else x_q
            extra["x_pos"] = x_q
            if cross:
                extra["x_kv_pos"] = x_kv
        if "w_qkv" in weights:
            w_qkv, b_qkv = weight("w_qkv"), bias("b_qkv")  # (d, d + 2·kv_width), Q then K then V
            blocks = [slice(0, d_model), slice(d_model, d_model + kv_width),
                      slice(d_model + kv_width, d_model + 2 * kv_width)]
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

    def heads_first(t, n):  # (B, L, n·d_k) -> (B, n, L, d_k)
        return t.reshape(t.shape[0], t.shape[1], n, d_k).permute(0, 2, 1, 3)
    q, k, v = heads_first(Q, heads), heads_first(K, kv_heads), heads_first(V, kv_heads)
    q_scored, k_scored = q, k
    if kind == "rope":
        base = float(positional.get("rope_base", 10000.0))
        style = positional.get("rope_style", "half")
        q_scored = extra["q_rot"] = rope(q, base, style)
        k_scored = extra["k_rot"] = rope(k, base, style)
    # HF's repeat_kv: query head h reads K/V head h // (heads / kv_heads).
    n_rep = heads // kv_heads
    k_scored = k_scored.repeat_interleave(n_rep, dim=1)
    v_read = v.repeat_interleave(n_rep, dim=1)

    scores = torch.einsum("bhqd,bhkd->bhqk", q_scored, k_scored)
    scale_spec = config.get("scale", "sqrt_dk")
    scale = 1.0 / math.sqrt(d_k) if scale_spec == "sqrt_dk" else (1.0 if scale_spec == "none" else float(scale_spec))
    scaled = scores * scale
    before_mask = scaled
    if kind == "alibi":
        i = torch.arange(len_q, dtype=torch.float64)[:, None]
        j = torch.arange(len_kv, dtype=torch.float64)[None, :]
        slopes = torch.tensor(alibi_slopes(heads), dtype=torch.float64)[:, None, None]
        # The stage is float32 in the code under test: round the bias as it does.
        bias_ = (-slopes * (i - j).abs()).float().double()
        before_mask = extra["biased"] = scaled + bias_

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
    if mask_spec.get("window"):
        attend &= window_attends(len_q, len_kv, mask_spec["window"], mask_spec.get("global_tokens") or [])
    fill_spec = config.get("mask_fill", "-inf")
    fill = -math.inf if fill_spec == "-inf" else float(fill_spec)
    # The fill is stored as float32 by the code under test: compare against that value.
    fill = float(torch.tensor(fill, dtype=torch.float32))
    masked = torch.where(attend[:, None], before_mask, torch.full_like(before_mask, fill))

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

    context = torch.einsum("bhqk,bhkd->bhqd", dropped, v_read)
    concat = context.permute(0, 2, 1, 3).reshape(batch, len_q, d_model)
    w_o = weight("w_o")
    if w_o is not None:
        output = torch.einsum("bld,de->ble", concat, w_o)
        b_o = bias("b_o")
        if b_o is not None:
            output = output + b_o
    else:
        output = concat
    result = {"q": q, "k": k, "v": v, "scores": scores, "scaled": scaled, "masked": masked,
              "weights": weights_, "dropped": dropped, "context": context, "concat": concat,
              "output": output}
    result.update(extra)
    return result


def sinusoidal_table(length, d_model):
    """(L, d_model): pe[p, 2i] = sin(p / 10000^(2i/d)), pe[p, 2i+1] = cos(same), as the Annotated Transformer."""
    position = torch.arange(length, dtype=torch.float64)[:, None]
    div = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * -(math.log(10000.0) / d_model))
    pe = torch.zeros(length, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * div)
    pe[:, 1::2] = torch.cos(position * div)[:, : d_model // 2]
    return pe


def rope(x, base, style):
    """x (B, n, L, d_k) rotated by position: HF Llama's rotate_half ("half") or GPT-J's rotate_every_two."""
    d_k, length = x.shape[-1], x.shape[-2]
    inv_freq = 1.0 / (base ** (torch.arange(0, d_k, 2, dtype=torch.float64) / d_k))
    freqs = torch.outer(torch.arange(length, dtype=torch.float64), inv_freq)  # (L, d_k/2)
    if style == "half":
        emb = torch.cat((freqs, freqs), dim=-1)
        rotated = torch.cat((-x[..., d_k // 2:], x[..., : d_k // 2]), dim=-1)
    else:
        emb = freqs.repeat_interleave(2, dim=-1)
        rotated = torch.stack((-x[..., 1::2], x[..., 0::2]), dim=-1).flatten(-2)
    return x * emb.cos() + rotated * emb.sin()


def alibi_slopes(n):
    """Press et al.'s get_slopes (attention_with_linear_biases)."""
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + alibi_slopes(2 * closest)[0::2][: n - closest]


def window_attends(len_q, len_kv, window, global_tokens):
    """(Lq, Lk) bool by explicit loops: |i - j| < window, or i or j a global token."""
    attend = torch.zeros(len_q, len_kv, dtype=torch.bool)
    for i in range(len_q):
        for j in range(len_kv):
            attend[i, j] = abs(i - j) < window or i in global_tokens or j in global_tokens
    return attend


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
