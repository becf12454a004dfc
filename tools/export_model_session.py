#!/usr/bin/env python3
"""Bring a PyTorch attention layer into Attention Lab: writes a session JSON plus .npy files.

The weights come from one of:
  --demo SEED                 a fresh torch.nn.MultiheadAttention, seeded (needs --embed-dim, --num-heads)
  --state-dict FILE.pt        a saved state_dict; --arch says which layout:
        mha   nn.MultiheadAttention.state_dict(): in_proj_weight (3E x E, torch layout),
              in_proj_bias, out_proj.weight, out_proj.bias        (needs --embed-dim, --num-heads)
        bert  BertModel / BertForX: [bert.]encoder.layer.N.attention.self.{query,key,value}
              and .attention.output.dense (nn.Linear, torch layout; --layer N)
        gpt2  GPT2Model / GPT2LMHeadModel: [transformer.]h.N.attn.c_attn (Conv1D: E x 3E, math
              layout, Q|K|V fused) and .attn.c_proj (Conv1D, math); causal (--layer N)
  --hf-model DIR              a Hugging Face BERT or GPT-2 model folder (needs the `transformers`
                              package, imported only for this option); its state_dict and config
                              then go through the bert / gpt2 path above.
The hidden states (the layer's input X) are --hidden FILE.npy ((L, E) or (B, L, E)), or seeded
random numbers (--seed, --batch, --seq-len).

Only the attention itself is exported: softmax(QK^T/sqrt(d_k))V per head and the output
projection. BERT's residual + LayerNorm after attention.output.dense and GPT-2's residual are
not part of the session, and dropout is off (eval mode).

    /usr/bin/python3 tools/export_model_session.py --demo 0 --embed-dim 8 --num-heads 2 --out my_layer
    attention-lab my_layer/session.json

(On Debian, python3-torch and python3-numpy belong to /usr/bin/python3; a pyenv or venv python3
earlier on PATH may not have them.)
"""
import argparse
import json
import os
import sys


def fail(message):
    print("export_model_session: error: " + message, file=sys.stderr)
    sys.exit(1)


try:
    import numpy as np
    import torch
except ImportError as e:
    fail("%s is missing for %s (Debian: apt-get install python3-torch python3-numpy, then run "
         "this script with /usr/bin/python3)" % (e.name, sys.executable))


def find_key(state, suffix):
    """The state_dict key ending in `suffix` (models wrap layers in bert./transformer. prefixes)."""
    matches = [k for k in state if k == suffix or k.endswith("." + suffix)]
    if not matches:
        fail("the state_dict has no '%s' (keys look like: %s)" % (suffix, ", ".join(list(state)[:6])))
    if len(matches) > 1:
        fail("several keys end in '%s': %s" % (suffix, ", ".join(matches)))
    return state[matches[0]]


def check_shape(name, tensor, shape):
    if tuple(tensor.shape) != tuple(shape):
        fail("%s has shape %s but embed_dim %d needs %s" % (name, tuple(tensor.shape), shape[-1], tuple(shape)))


def from_mha(state, embed_dim):
    """nn.MultiheadAttention: fused in_proj (3E x E, torch layout, rows Q|K|V)."""
    if "in_proj_weight" not in state:
        fail("this state_dict has no in_proj_weight: an nn.MultiheadAttention with kdim/vdim different "
             "from embed_dim keeps separate q/k/v_proj_weight, which Attention Lab's self attention does not use")
    e = embed_dim
    check_shape("in_proj_weight", state["in_proj_weight"], (3 * e, e))
    check_shape("out_proj.weight", state["out_proj.weight"], (e, e))
    weights = {"w_qkv": state["in_proj_weight"], "w_o": state["out_proj.weight"]}
    if state.get("in_proj_bias") is not None:
        weights["b_qkv"] = state["in_proj_bias"]
    if state.get("out_proj.bias") is not None:
        weights["b_o"] = state["out_proj.bias"]
    return weights, "torch", False


def from_bert(state, layer, embed_dim):
    """BERT: separate nn.Linear query/key/value and attention.output.dense (torch layout)."""
    prefix = "encoder.layer.%d.attention." % layer
    weights = {}
    for ours, theirs in (("q", "self.query"), ("k", "self.key"), ("v", "self.value"), ("o", "output.dense")):
        w = find_key(state, prefix + theirs + ".weight")
        check_shape(prefix + theirs + ".weight", w, (embed_dim, embed_dim))
        weights["w_" + ours] = w
        weights["b_" + ours] = find_key(state, prefix + theirs + ".bias")
    return weights, "torch", False


def from_gpt2(state, layer, embed_dim):
    """GPT-2: Conv1D stores (in, out) and computes x @ W + b, i.e. math layout; c_attn is Q|K|V fused."""
    prefix = "h.%d.attn." % layer
    w_qkv = find_key(state, prefix + "c_attn.weight")
    check_shape(prefix + "c_attn.weight", w_qkv, (embed_dim, 3 * embed_dim))
    w_o = find_key(state, prefix + "c_proj.weight")
    check_shape(prefix + "c_proj.weight", w_o, (embed_dim, embed_dim))
    weights = {"w_qkv": w_qkv, "b_qkv": find_key(state, prefix + "c_attn.bias"),
               "w_o": w_o, "b_o": find_key(state, prefix + "c_proj.bias")}
    return weights, "math", True


def load_hf_model(folder):
    """(state_dict, arch, embed_dim, num_heads) of a local Hugging Face BERT or GPT-2 folder."""
    try:
        import transformers  # only this option needs it
    except ImportError:
        fail("--hf-model needs the `transformers` package (pip install transformers); alternatively save "
             "the model's state_dict with torch.save(model.state_dict(), 'model.pt') where transformers is "
             "installed and pass --state-dict model.pt --arch bert|gpt2 --embed-dim E --num-heads H")
    model = transformers.AutoModel.from_pretrained(folder)
    config = model.config
    if config.model_type == "bert":
        return model.state_dict(), "bert", config.hidden_size, config.num_attention_heads
    if config.model_type == "gpt2":
        return model.state_dict(), "gpt2", config.n_embd, config.n_head
    fail("model type '%s' is not supported (BERT and GPT-2 are)" % config.model_type)


def hidden_states(args, embed_dim):
    if args.hidden:
        x = np.load(args.hidden)
        if x.ndim == 2:
            x = x[None]
        if x.ndim != 3 or x.shape[-1] != embed_dim:
            fail("%s has shape %s; the layer needs (L, %d) or (B, L, %d)" % (args.hidden, x.shape, embed_dim, embed_dim))
        return torch.from_numpy(np.asarray(x, dtype=np.float32))
    generator = torch.Generator().manual_seed(args.seed)
    return torch.randn(args.batch, args.seq_len, embed_dim, generator=generator)


def save_npy(folder, name, tensor):
    array = np.ascontiguousarray(tensor.detach().cpu().numpy().astype("<f4"))
    np.save(os.path.join(folder, name + ".npy"), array)
    return {"npy": name + ".npy"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--demo", type=int, metavar="SEED", help="a fresh nn.MultiheadAttention seeded with SEED")
    source.add_argument("--state-dict", metavar="FILE.pt", help="a saved state_dict (see --arch)")
    source.add_argument("--hf-model", metavar="DIR", help="a local Hugging Face BERT or GPT-2 folder")
    parser.add_argument("--arch", choices=["mha", "bert", "gpt2"], default="mha", help="layout of --state-dict")
    parser.add_argument("--layer", type=int, default=0, help="which transformer layer (bert, gpt2)")
    parser.add_argument("--embed-dim", type=int, help="d_model (E)")
    parser.add_argument("--num-heads", type=int, help="number of heads")
    parser.add_argument("--hidden", metavar="FILE.npy", help="hidden states: (L, E) or (B, L, E)")
    parser.add_argument("--seed", type=int, default=0, help="seed of random hidden states")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seq-len", type=int, default=6)
    parser.add_argument("--causal", action="store_true", help="causal mask (always on for gpt2)")
    parser.add_argument("--tokens", help="comma-separated labels of the positions")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for session.json and the .npy files")
    args = parser.parse_args()

    if args.hf_model:
        state, arch, embed_dim, num_heads = load_hf_model(args.hf_model)
    else:
        arch, embed_dim, num_heads = args.arch, args.embed_dim, args.num_heads
        if not embed_dim or not num_heads:
            fail("--embed-dim and --num-heads are needed with --demo and --state-dict")
        if embed_dim % num_heads:
            fail("--num-heads %d does not divide --embed-dim %d" % (num_heads, embed_dim))
        if args.demo is not None:
            torch.manual_seed(args.demo)
            state = torch.nn.MultiheadAttention(embed_dim, num_heads, batch_first=True).state_dict()
        else:
            state = torch.load(args.state_dict, map_location="cpu")
            if not isinstance(state, dict):  # a whole pickled module
                state = state.state_dict()
    if arch == "mha":
        weights, layout, causal = from_mha(state, embed_dim)
    elif arch == "bert":
        weights, layout, causal = from_bert(state, args.layer, embed_dim)
    else:
        weights, layout, causal = from_gpt2(state, args.layer, embed_dim)
    causal = causal or args.causal

    x = hidden_states(args, embed_dim)
    os.makedirs(args.out, exist_ok=True)
    session = {
        "format": "attention-lab/session",
        "version": 1,
        "description": "exported by tools/export_model_session.py (%s%s)" % (
            arch, "" if arch == "mha" else ", layer %d" % args.layer),
        "config": {"mode": "projection", "attention": "self", "d_model": embed_dim, "num_heads": num_heads,
                   "bias": any(k.startswith("b_") for k in weights), "scale": "sqrt_dk",
                   "mask": {"causal": causal}, "mask_fill": "-inf",
                   "dropout": {"p": 0, "training": False, "seed": 0}},
        "x": save_npy(args.out, "x", x),
        "weights": dict({"layout": layout}, **{k: save_npy(args.out, k, v) for k, v in weights.items()}),
    }
    if args.tokens:
        tokens = args.tokens.split(",")
        if len(tokens) != x.shape[1]:
            fail("--tokens has %d labels but the hidden states have %d positions" % (len(tokens), x.shape[1]))
        session["tokens"] = tokens
    path = os.path.join(args.out, "session.json")
    with open(path, "w") as f:
        json.dump(session, f, indent=2)
        f.write("\n")
    print(path)


if __name__ == "__main__":
    main()
