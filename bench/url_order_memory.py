"""Memory of numbering the pages in natural URL order when an archive closes.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/url_order_memory.py [--pages 300000]

Each measurement runs in a fresh process: it creates an archive, inserts ``--pages`` generated
internal URLs (seeded; six sections, ~70 characters a URL) and then numbers them, either
(a) sorted in Python (all rows fetched, ``list.sort`` by ``natural_order_key``, one UPDATE a
row: what nitpicker did before 2026-11-30) or (b) ``ArchiveWriter.pages.set_url_order()`` (SQLite
sorts by the byte-encoded key, in temporary files). Printed: the growth of the process's peak
RSS (``ru_maxrss``) during the numbering, its seconds, and b/a.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTIONS = ("docs", "blog", "news", "products", "support", "guides")


def _measure(way: str, pages: int) -> dict[str, float]:
    sys.path.insert(0, str(ROOT))
    from nitpicker.archive.writer import ArchiveWriter
    from nitpicker.crawl.config import CrawlConfig
    from nitpicker.policy.urls import natural_order_key

    with tempfile.TemporaryDirectory() as tmp:
        config = CrawlConfig(roots=("https://www.example.com/",), output=f"{tmp}/a.nitpicker")
        writer = ArchiveWriter.create(config)
        rng = random.Random(1)
        urls = (f"https://www.example.com/{rng.choice(SECTIONS)}/{rng.choice(SECTIONS)}"
                f"-{i // 50}/page-{i}.html?ref={i % 7}" for i in range(pages))
        writer.conn.executemany("INSERT INTO pages (url) VALUES (?)", ((url,) for url in urls))
        writer.commit()
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.monotonic()
        if way == "a":
            rows = writer.conn.execute(
                "SELECT id, url FROM pages WHERE is_external = 0 AND redirect_dest_id IS NULL"
            ).fetchall()
            rows.sort(key=lambda r: natural_order_key(r[1]))
            writer.conn.executemany('UPDATE pages SET "order" = ? WHERE id = ?',
                                    [(n, pid) for n, (pid, _) in enumerate(rows, start=1)])
            writer.commit()
        else:
            writer.pages.set_url_order()
        seconds = time.monotonic() - started
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
        writer.close()
    return {"mb": grown / 1024, "seconds": seconds}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--pages", type=int, default=300_000)
    parser.add_argument("--_way", choices=("a", "b"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._way:
        print(json.dumps(_measure(args._way, args.pages)))
        return 0
    results = {}
    for way, name in (("a", "(a) sorted in Python"), ("b", "(b) set_url_order (SQLite)")):
        out = subprocess.run([sys.executable, __file__, "--pages", str(args.pages), "--_way", way],
                             capture_output=True, text=True, check=True)
        results[way] = json.loads(out.stdout)
        print(f"{name:<30} {args.pages} pages: peak RSS +{results[way]['mb']:.0f} MB, "
              f"{results[way]['seconds']:.1f} s", flush=True)
    a, b = results["a"], results["b"]
    print(f"b/a: peak RSS growth {b['mb'] / a['mb']:.2f}, seconds {b['seconds'] / a['seconds']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
