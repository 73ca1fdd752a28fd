#!/usr/bin/env python3
"""Write fixtures/static-model/vectors.json: Python model2vec's vectors of a few texts under
the built-in model (assets/static-model/), which the Rust embedding must reproduce.

    ~/.cache/toolctl-bench/venv-distil/bin/python scripts/static_model_vectors.py

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


def main() -> None:
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
