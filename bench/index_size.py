#!/usr/bin/env python3
"""Index size of format 7 against the layouts before it, emulated from the same rows:

- format 6: as format 7 without the `output` column (what a tool returns, its outputSchema's
  names and descriptions);
- format 5 (the first BM25F ranking): the name column held the slug and the display name
  as written, each followed by its camelCase words (`getWeather get Weather`), no `ident`
  column; argument values also held `default` and `examples` (not emulated: the generator
  writes few);
- format 4 (0940fe4, before BM25F): as format 5, with one `args` column for argument
  names and descriptions and no argument values.

    gen-catalog --tools 10000 --out C --seed 42 && toolctl --catalog C index rebuild
    python3 bench/index_size.py C/.toolctl/index.sqlite

The catalog must be where the index says (the names are read again from each tool.json).
Every copy is `optimize`d and vacuumed, so only the layout differs. Python 3 stdlib only.
"""
import json
import os
import re
import shutil
import sqlite3
import sys

TOKENIZER = "porter unicode61 remove_diacritics 2"


def camel(word: str) -> str | None:
    split = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", word)
    split = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", split)
    return split if split != word else None


def old_index_text(text: str) -> str:
    """Format 5's index_text: the text, then the camelCase words of each identifier."""
    out = text
    for word in re.split(r"[^\w]|_", text):
        if word and (words := camel(word)):
            out += " " + words
    return out


def vacuumed(path: str) -> int:
    c = sqlite3.connect(path)
    c.execute("INSERT INTO tool_fts(tool_fts) VALUES('optimize')")
    c.commit()
    c.execute("PRAGMA journal_mode=DELETE")
    c.execute("VACUUM")
    c.close()
    return os.path.getsize(path)


def relayout(path: str, columns: list[str], rows: list[tuple]) -> None:
    c = sqlite3.connect(path)
    c.executescript(
        "DROP TABLE tool_vocab; DROP TABLE tool_fts; "
        f"CREATE VIRTUAL TABLE tool_fts USING fts5({', '.join(columns)}, "
        f"tokenize = '{TOKENIZER}', prefix = '2 3'); "
        "CREATE VIRTUAL TABLE tool_vocab USING fts5vocab(tool_fts, 'row');")
    marks = ", ".join("?" * (len(columns) + 1))
    c.executemany(f"INSERT INTO tool_fts (rowid, {', '.join(columns)}) VALUES ({marks})", rows)
    c.commit()
    c.close()


def main() -> None:
    src = sys.argv[1]
    catalog = os.path.dirname(os.path.dirname(os.path.abspath(src)))
    c = sqlite3.connect(src)
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    rows = c.execute(
        "SELECT f.rowid, t.path, f.tags, f.args, f.arg_text, f.arg_values, f.description, f.bundle "
        "FROM tool_fts f JOIN tool t ON t.id = f.rowid").fetchall()
    v6 = c.execute(
        "SELECT rowid, name, tags, args, arg_text, arg_values, description, bundle, ident "
        "FROM tool_fts").fetchall()
    c.close()
    v5 = []
    for rowid, path, tags, args, arg_text, values, description, bundle in rows:
        if path.startswith("builtin:"):
            name = path.split(":", 1)[1]
            tool = {"slug": name, "displayName": name}
        else:
            with open(os.path.join(catalog, path), encoding="utf-8") as f:
                tool = json.load(f)
        name = f"{old_index_text(tool.get('slug', ''))} {old_index_text(tool.get('displayName', ''))}"
        v5.append((rowid, name, tags, args, arg_text, values, description, bundle))
    sizes = {}
    for fmt in ("7", "6", "5", "4"):
        copy = f"{src}.v{fmt}"
        shutil.copy(src, copy)
        if fmt == "6":
            relayout(copy, ["name", "tags", "args", "arg_text", "arg_values", "description", "bundle",
                            "ident"], v6)
        elif fmt == "5":
            relayout(copy, ["name", "tags", "args", "arg_text", "arg_values", "description", "bundle"], v5)
        elif fmt == "4":
            relayout(copy, ["name", "tags", "args", "description", "bundle"],
                     [(r[0], r[1], r[2], f"{r[3]} {r[4]}".strip(), r[6], r[7]) for r in v5])
        sizes[fmt] = vacuumed(copy)
        os.remove(copy)
    print(f"{src}: format 7 {sizes['7'] / 1e6:.1f} MB, format 6 (emulated) {sizes['6'] / 1e6:.1f} MB, "
          f"format 5 (emulated) {sizes['5'] / 1e6:.1f} MB, format 4 (emulated) {sizes['4'] / 1e6:.1f} MB; "
          f"7/6 {sizes['7'] / sizes['6']:.2f}, 7/4 {sizes['7'] / sizes['4']:.2f}")


if __name__ == "__main__":
    main()
