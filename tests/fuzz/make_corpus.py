#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus: small valid and broken sessions, .npy files and CSVs.

Standard library only (any python3). The output is committed; rerun after changing it:
    python3 tests/fuzz/make_corpus.py
corpus/session/ also gets a copy of every preset; session_files/ holds the .npy/.csv
files that the sessions refer to (the fuzz harness resolves references there).
"""
import json
import pathlib
import shutil
import struct

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def npy(shape, values, descr="<f4", fortran=False, version=(1, 0), pad=True):
    """A .npy file as numpy writes it (header padded to 64 bytes, ending in newline)."""
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (descr, fortran, dims)
    size_bytes = 2 if version[0] == 1 else 4
    if pad:
        total = 6 + 2 + size_bytes + len(header) + 1
        header += " " * ((64 - total % 64) % 64)
    header += "\n"
    fmt = {"<f4": "<f", "<f8": "<d", ">f4": ">f", ">f8": ">d", "<i4": "<i", "|u1": "<B"}[descr]
    body = b"".join(struct.pack(fmt, v) for v in values)
    length = struct.pack("<H" if size_bytes == 2 else "<I", len(header))
    return b"\x93NUMPY" + bytes(version) + length + header.encode("latin1") + body


def session(**fields):
    out = {"format": "attention-lab/session", "version": 1}
    out.update(fields)
    return json.dumps(out, indent=1).encode()


def identity(n, scale=1.0):
    return [[scale if i == j else 0.0 for j in range(n)] for i in range(n)]


def seq(rows, cols, start=0.0):
    return [[round(start + 0.1 * (r * cols + c), 2) for c in range(cols)] for r in range(rows)]


def write(folder, name, data):
    path = HERE / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())


def main():
    for folder in ("corpus", "session_files"):
        shutil.rmtree(HERE / folder, ignore_errors=True)

    # Files that sessions refer to: {"npy": "x.npy"} etc.
    write("session_files", "x.npy", npy((1, 3, 4), [0.1 * i for i in range(12)]))
    write("session_files", "w4.npy", npy((4, 4), [float(i == j) for i in range(4) for j in range(4)]))
    write("session_files", "w4.f8.npy", npy((4, 4), [0.5 * (i == j) for i in range(4) for j in range(4)], "<f8"))
    write("session_files", "qkv_torch.npy", npy((12, 4), [0.01 * i for i in range(48)]))
    write("session_files", "bias4.npy", npy((4,), [0.0, 0.1, 0.2, 0.3]))
    write("session_files", "w4.csv", "# numpy.savetxt header\n1,0,0,0\n0,1,0,0\n0,0,1,0\n0,0,0,1\n")
    write("session_files", "mask3.csv", "1,0,0\n1,1,0\n1,1,1\n")
    write("session_files", "big_endian.npy", npy((4, 4), [1.0] * 16, ">f4"))

    for preset in sorted((ROOT / "assets" / "presets").glob("*.json")):
        write("corpus/session", "preset-" + preset.name, preset.read_bytes())

    x = seq(3, 4)
    w = identity(4, 0.5)
    weights = {"w_q": w, "w_k": w, "w_v": w, "w_o": w}
    write("corpus/session", "minimal.json", session(x=x, weights=weights))
    # Today's attention (issue 14): grouped-query K/V (4 x 2 weights: 2 heads of d_k 2 share one K/V head),
    # RoPE, ALiBi, sinusoidal positions, windows and global tokens.
    narrow = [[0.5, 0.0], [0.0, 0.5], [0.1, 0.2], [0.3, 0.0]]
    write("corpus/session", "modern-gqa-rope-window.json", session(
        config={"num_heads": 2, "num_kv_heads": 1, "positional": {"type": "rope", "rope_style": "interleaved"},
                "mask": {"causal": True, "window": 2, "global_tokens": [0]}},
        x=x, weights={"w_q": w, "w_k": narrow, "w_v": narrow, "w_o": w}))
    write("corpus/session", "modern-alibi.json", session(
        config={"num_heads": 2, "positional": {"type": "alibi"}, "mask": {"causal": True}}, x=x, weights=weights))
    write("corpus/session", "modern-sinusoidal-window.json", session(
        config={"num_heads": 1, "positional": {"type": "sinusoidal"}, "mask": {"window": 1}}, x=x, weights=weights))
    write("corpus/session", "files.json", session(
        config={"num_heads": 2, "mask": {"custom": {"csv": "mask3.csv"}}},
        x={"npy": "x.npy"},
        weights={"w_q": {"npy": "w4.npy"}, "w_k": {"csv": "w4.csv"}, "w_v": {"npy": "w4.f8.npy"},
                 "w_o": {"npy": "w4.npy"}, "b_q": {"npy": "bias4.npy"}}))
    write("corpus/session", "fused_torch.json", session(
        config={"num_heads": 2, "bias": False, "mask": {"causal": True}},
        x={"npy": "x.npy"}, weights={"layout": "torch", "w_qkv": {"npy": "qkv_torch.npy"}, "w_o": w}))
    write("corpus/session", "direct.json", session(
        config={"mode": "direct", "scale": 0.5, "mask_fill": -1e-20,
                "mask": {"key_padding": [1, 1, 0]}}, q=x, k=x, v=x, tokens=["a", "b", "c"]))
    write("corpus/session", "cross.json", session(
        config={"attention": "cross", "num_heads": 4, "dropout": {"p": 0.5, "training": True, "seed": 7}},
        x_q=seq(2, 4), x_kv=[seq(3, 4), seq(3, 4, 1.0)][:1], weights=weights,
        tokens=["q0", "q1"], tokens_kv=["k0", "k1", "k2"]))
    write("corpus/session", "random.json", session(
        config={"num_heads": 2, "mask_fill": "-inf"},
        x={"random": {"shape": [2, 3, 4], "seed": 1}},
        weights={"w_q": {"random": {"shape": [4, 4], "std": 0.5}}, "w_k": w, "w_v": w, "w_o": w}))
    write("corpus/session", "special_values.json", session(
        config={"mode": "direct", "mask": {"custom": [[True, False, True], [1, 1, 0], [0, 0, 0]]}},
        q=[["NaN", 1, 2, 3], ["Infinity", 0, 0, 0], ["-Infinity", -0.0, 1e-45, 3.4e38]], k=x, v=x))
    # Broken ones: each is refused with a message, none may crash.
    write("corpus/session", "bad-json.json", b'{"format": "attention-lab/session", "version": 1, "x": [[1, 2,]]}')
    write("corpus/session", "bad-version.json", session(version=2, x=x))
    write("corpus/session", "bad-duplicate-key.json",
          b'{"format": "attention-lab/session", "version": 1, "x": [[1]], "x": [[2]]}')
    write("corpus/session", "bad-ragged.json", session(x=[[1, 2, 3, 4], [1, 2]], weights=weights))
    write("corpus/session", "bad-escape.json", session(x={"npy": "../x.npy"}, weights=weights))
    write("corpus/session", "bad-big-endian.json", session(x=x, weights=dict(weights, w_q={"npy": "big_endian.npy"})))
    write("corpus/session", "bad-heads.json", session(config={"num_heads": 3}, x=x, weights=weights))
    write("corpus/session", "bad-mask-shape.json",
          session(config={"mask": {"key_padding": [1, 1, 1, 1, 1, 1, 1, 1, 1]}}, x=x, weights=weights))
    write("corpus/session", "bad-huge-random.json", session(x={"random": {"shape": [1000000, 1000000, 4]}}))
    write("corpus/session", "bad-deep.json", session(x=[[[[[1]]]]]))

    write("corpus/npy", "f4-2d.npy", npy((2, 3), [1, 2, 3, 4, 5, 6]))
    write("corpus/npy", "f8-1d.npy", npy((3,), [0.5, -1e300, 1e-300], "<f8"))
    write("corpus/npy", "v2.npy", npy((1, 2), [1, 2], version=(2, 0)))
    write("corpus/npy", "v3-unpadded.npy", npy((2, 1), [1, 2], version=(3, 0), pad=False))
    write("corpus/npy", "empty.npy", npy((0, 4), []))
    write("corpus/npy", "bad-big-endian.npy", npy((2,), [1, 2], ">f8"))
    write("corpus/npy", "bad-fortran.npy", npy((2, 2), [1, 2, 3, 4], fortran=True))
    write("corpus/npy", "bad-int.npy", npy((2,), [1, 2], "<i4"))
    write("corpus/npy", "bad-scalar.npy", npy((), [1.0]))
    write("corpus/npy", "bad-truncated.npy", npy((4, 4), [1.0] * 16)[:-5])
    write("corpus/npy", "bad-version.npy", npy((1,), [1.0], version=(9, 0)))

    write("corpus/csv", "simple.csv", "1,2,3\n4,5,6\n")
    write("corpus/csv", "special.csv", "NaN, inf ,-inf\n+1e-3,\"2\",-0\r\n")
    write("corpus/csv", "header-blank.csv", "# a header\n\n0.5\n\n1e38\n")
    write("corpus/csv", "huge.csv", "1e400,-1e400,1e-400\n")
    write("corpus/csv", "bad-ragged.csv", "1,2\n3\n")
    write("corpus/csv", "bad-word.csv", "1,two\n")
    write("corpus/csv", "bad-empty.csv", "# nothing\n")


if __name__ == "__main__":
    main()
