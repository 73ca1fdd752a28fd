#!/usr/bin/env python3
"""Index size of format 5 against format 4 (0940fe4: one `args` column for argument names and
descriptions, no argument values), the older layout emulated from the same rows.

    gen-catalog --tools 10000 --out C --seed 42 && toolctl --catalog C index rebuild
    python3 bench/index_size.py C/.toolctl/index.sqlite

Both copies are `optimize`d and vacuumed, so only the layout differs. Python 3 stdlib only.
"""
import os
import shutil
import sqlite3
import sys

src = sys.argv[1]
def vacuumed(path):
    c = sqlite3.connect(path); c.execute("PRAGMA journal_mode=DELETE"); c.execute("VACUUM"); c.close()
    return os.path.getsize(path)
new = src + ".v5"; old = src + ".v4"
c = sqlite3.connect(src); c.execute("PRAGMA wal_checkpoint(TRUNCATE)"); c.close()
shutil.copy(src, new); shutil.copy(src, old)
c = sqlite3.connect(old)
rows = c.execute("SELECT rowid, name, tags, args, arg_text, description, bundle FROM tool_fts").fetchall()
c.executescript("DROP TABLE tool_vocab; DROP TABLE tool_fts; CREATE VIRTUAL TABLE tool_fts USING fts5(name, tags, args, description, bundle, tokenize = 'porter unicode61 remove_diacritics 2', prefix = '2 3'); CREATE VIRTUAL TABLE tool_vocab USING fts5vocab(tool_fts, 'row');")
c.executemany("INSERT INTO tool_fts (rowid, name, tags, args, description, bundle) VALUES (?,?,?,?,?,?)",
              [(r[0], r[1], r[2], (r[3] + " " + r[4]).strip(), r[5], r[6]) for r in rows])
c.execute("INSERT INTO tool_fts(tool_fts) VALUES('optimize')"); c.commit(); c.close()
c = sqlite3.connect(new); c.execute("INSERT INTO tool_fts(tool_fts) VALUES('optimize')"); c.commit(); c.close()
a, b = vacuumed(new), vacuumed(old)
print(f"{src}: format 5 {a/1e6:.1f} MB, format 4 (emulated) {b/1e6:.1f} MB, ratio {a/b:.2f}")
