"""BFCL's development split (Berkeley Function Calling Leaderboard, Apache-2.0) as a toolctl
catalog: the second data set of bench/quality.py, beside NESTFUL (bench/nestful.py), and of
the quality test's BFCL fixture (bench/quality_fixture.py).

BFCL is installed from PyPI (`pip download bfcl-eval==2026.3.23 --no-deps`) into the same
cache folder as NESTFUL (`~/.cache/toolctl-bench/`, or `$TOOLCTL_BENCH_CACHE`), once; nothing
downloaded is committed. Only the question and answer files of the six non-live single-turn
categories are unpacked and read:

    simple_python      400 requests, 1 function each
    simple_java        100 requests, 1 function each
    simple_javascript   50 requests, 1 function each
    multiple           200 requests, 2-4 functions offered, 1 called
    parallel           200 requests, 1 function called several times
    parallel_multiple  200 requests, 2-4 functions offered, 1-4 called

The `live_*` categories (requests users sent, functions they wrote) are held out: this module
never unpacks them, so nothing here is developed or tuned on them.

A request is the text of its user turn; its relevant tools are the distinct function names of
its `ground_truth` in `possible_answer/` (in order). The catalog holds every distinct function
(by name) of the six categories' `function` lists, the first definition met (categories in the
order above) when a name is defined more than once (the same function with other argument
types, mostly). They are one bundle, `bfcl`. BFCL's parameter types (Python's `dict`, `float`,
`tuple`, Java's `String`, `HashMap`, `long`, `any`) are mapped to JSON Schema's (`any`: no
type). Names such as `math.factorial` or `flight_book` are not toolctl slugs: `_` becomes `-`
and `.` becomes `--` (`math--factorial`, `flight-book`), which the index reads as the same
words (a name that differs from an earlier one in case alone gets `-2`), and results are
scored by the original name. Tools are written as NESTFUL's are
(HTTP GET tools on an example host, `createdAt` spread over 2023; [`nestful.write_bundles`]).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import nestful

WHEEL = "bfcl-eval==2026.3.23"
WHEEL_FILE = "bfcl_eval-2026.3.23-py3-none-any.whl"
HOST = "api.bfcl.example"
BUNDLE = "bfcl"
NAMES = ["simple_python", "simple_java", "simple_javascript", "multiple", "parallel",
         "parallel_multiple"]
QUESTIONS = "bfcl_eval/data/BFCL_v4_{}.json"
ANSWERS = "bfcl_eval/data/possible_answer/BFCL_v4_{}.json"

# BFCL's types (Python, Java and JavaScript names) as JSON Schema's; `any` and an empty type
# become no type.
TYPES = {
    "dict": "object", "object": "object", "hashmap": "object", "map": "object",
    "float": "number", "double": "number", "number": "number",
    "integer": "integer", "int": "integer", "long": "integer",
    "string": "string", "char": "string",
    "boolean": "boolean", "bool": "boolean",
    "array": "array", "arraylist": "array", "list": "array", "tuple": "array",
    "any": None, "": None,
}


@dataclass
class Request:
    dataset: str  # the category
    index: int
    query: str
    relevant: list[str]  # function names, in the order of the answer, without repeats

    @property
    def relevant_keys(self) -> list[str]:
        return [f"{BUNDLE}/{n}" for n in self.relevant]


def data_dir() -> Path:
    """The six categories' files of the BFCL wheel, unpacked into the cache once."""
    out = nestful.CACHE / "bfcl"
    wanted = [f.format(n) for n in NAMES for f in (QUESTIONS, ANSWERS)]
    if all((out / w).is_file() for w in wanted):
        return out
    wheel = nestful.CACHE / "dl" / WHEEL_FILE
    if not wheel.is_file():
        print(f"downloading {WHEEL} into {wheel.parent}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "download", WHEEL, "--no-deps", "-q",
                        "-d", str(wheel.parent)], check=True)
    with zipfile.ZipFile(wheel) as z:
        z.extractall(out, wanted)
    return out


def slug_of(name: str) -> str:
    """A toolctl slug for a BFCL name: `.` → `--`, every other run of characters that are no
    letter or digit → `-`."""
    slug = re.sub(r"[^A-Za-z0-9.]+", "-", name).replace(".", "--").strip("-")
    return slug[:64].strip("-") or "tool"


def property_schema(spec) -> dict:
    """One BFCL parameter as JSON Schema: type, description, enum, default, items,
    properties, required, and the few numeric and format keywords it uses."""
    if not isinstance(spec, dict):
        return {}
    out: dict = {}
    kind = spec.get("type")
    kind = TYPES.get(kind.lower(), "string") if isinstance(kind, str) else None
    if kind:
        out["type"] = kind
    if isinstance(spec.get("description"), str) and spec["description"].strip():
        out["description"] = spec["description"].strip()
    if isinstance(spec.get("enum"), list) and spec["enum"]:
        out["enum"] = [str(v) for v in spec["enum"]] if kind == "string" else spec["enum"]
    if "default" in spec and spec["default"] is not None and kind is not None:
        default = spec["default"]
        matches = {"string": str, "boolean": bool, "integer": int, "number": (int, float),
                   "array": list, "object": dict}[kind]
        if kind == "string" and not isinstance(default, str):
            default = str(default)
        if isinstance(default, matches) and not (kind in ("integer", "number")
                                                 and isinstance(default, bool)):
            out["default"] = default
    for key in ("minimum", "maximum", "format"):
        if spec.get(key) is not None:
            out[key] = spec[key]
    if kind == "array" and isinstance(spec.get("items"), dict):
        out["items"] = property_schema(spec["items"])
    if isinstance(spec.get("properties"), dict):
        out["properties"] = {k: property_schema(v) for k, v in spec["properties"].items()}
        required = [r for r in spec.get("required") or [] if r in out["properties"]]
        if required:
            out["required"] = required
    return out


def arg_schema(parameters) -> dict:
    """JSON Schema for a function's `parameters` (a `dict` of `properties`)."""
    schema = property_schema(parameters if isinstance(parameters, dict) else {})
    schema["type"] = "object"
    schema.setdefault("properties", {})
    return schema


def lines(z: Path, name: str) -> list[dict]:
    return [json.loads(line) for line in (z / name).read_text().splitlines() if line.strip()]


def load(datasets: list[str] | None = None) -> nestful.Data:
    """The functions of all six categories (the catalog is the same whichever are asked for)
    and the requests of the categories named (all by default)."""
    root = data_dir()
    data = nestful.Data()
    slugs: dict[str, str] = {}  # name → slug
    folded: set[str] = set()
    for category in NAMES:
        questions = lines(root, QUESTIONS.format(category))
        answers = {a["id"]: a for a in lines(root, ANSWERS.format(category))}
        for i, q in enumerate(questions):
            for f in q["function"]:
                if f["name"] in slugs:
                    continue
                slug = slug_of(f["name"])
                # Names that differ in case alone (`calculate_BMI`, `calculate_bmi`) cannot be
                # two folders on every file system: the later one is numbered.
                base, n = slug, 1
                while slug.lower() in folded:
                    n += 1
                    slug = f"{base[:60]}-{n}"
                folded.add(slug.lower())
                slugs[f["name"]] = slug
                data.tools.append(nestful.Tool(BUNDLE, f["name"], slug,
                                               (f.get("description") or "").strip(),
                                               arg_schema(f.get("parameters"))))
            if datasets and category not in datasets:
                continue
            offered = {f["name"] for f in q["function"]}
            relevant: list[str] = []
            for call in answers[q["id"]]["ground_truth"]:
                for name in call:
                    if name not in relevant:
                        relevant.append(name)
            if any(n not in offered for n in relevant):
                raise SystemExit(f"error: bfcl {q['id']}: answers with a function not offered")
            text = " ".join(m["content"] for turn in q["question"] for m in turn
                            if m.get("role") == "user")
            data.requests.append(Request(category, i, " ".join(text.split()), relevant))
    return data


def write_bundles(catalog: Path, tools: list[nestful.Tool]) -> dict[str, str]:
    """Write `tools` into `catalog` as the bundle `bfcl`; ref → tool key, as
    [`nestful.write_bundles`]."""
    return nestful.write_bundles(catalog, tools, host=HOST,
                                 display="BFCL",
                                 about="Functions of BFCL's non-live single-turn categories "
                                       "(Berkeley Function Calling Leaderboard, Apache-2.0).")
