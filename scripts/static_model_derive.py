#!/usr/bin/env python3
"""Write what toolctl derives from the distilled model (assets/static-model/):

- assets/static-model/vocab.tsv: tokenizer.json's WordPiece vocabulary as `token<TAB>id`
  lines sorted by the token's UTF-8 bytes, which the binary holds instead of tokenizer.json
  (a binary search over it needs no parsing when a process starts);
- fixtures/static-model/vectors.json: Python model2vec's vectors of a few texts, which the
  Rust embedding must reproduce.

    ~/.cache/toolctl-bench/venv-distil/bin/python scripts/static_model_derive.py

It runs in the venv scripts/distil_model.py makes (model2vec 0.10.0). The texts cover what the
tokenizer does: lower-casing, accents, punctuation, CJK ideographs, words split into pieces,
words it does not know, control characters and a text past the length model2vec keeps.
"""

import json
from pathlib import Path

from model2vec import StaticModel

ROOT = Path(__file__).resolve().parent.parent
TEXTS = [
    "read a file",
    "Get the current weather forecast for Paris",
    "Crème brûlée recipes — naïve café façade",
    "send_email(to, subject): Send an e-mail; returns {id, status}!",
    "北京 weather 天气 forecast",
    "hyperparameteroptimization and xylophonist",
    "tab\tnew\nline\u0000null\u200bzero-width",
    "ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ",
    "math.factorial: compute the factorial of n",
    "a" * 120 + " longword",
    " ".join(["convert currency between dollars and euros"] * 120),
    "",
    "🙂 ☃ ∑",
]


def write_vocab() -> None:
    folder = ROOT / "assets" / "static-model"
    vocab = json.loads((folder / "tokenizer.json").read_text())["model"]["vocab"]
    if any("\t" in token or "\n" in token for token in vocab):
        raise SystemExit("a token holds a tab or a newline: vocab.tsv cannot hold it")
    lines = sorted(vocab.items(), key=lambda item: item[0].encode())
    (folder / "vocab.tsv").write_text("".join(f"{token}\t{i}\n" for token, i in lines))
    print(f"wrote {folder / 'vocab.tsv'} ({len(lines)} tokens)")


def main() -> None:
    write_vocab()
    model = StaticModel.from_pretrained(str(ROOT / "assets" / "static-model"))
    vectors = model.encode(TEXTS)
    out = {
        "model2vec": "0.10.0",
        "texts": [{"text": t, "vector": [round(float(x), 7) for x in v]} for t, v in zip(TEXTS, vectors)],
    }
    path = ROOT / "fixtures" / "static-model" / "vectors.json"
    path.write_text(json.dumps(out, ensure_ascii=False, indent=0) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
