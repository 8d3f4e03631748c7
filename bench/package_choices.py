"""itemadapter and sqlite-utils on the crawl's hot path, against what nitpicker does instead.

Run from the repository root with the project's virtualenv (``pip install -e '.[bench]'``):

    .venv/bin/python bench/package_choices.py [--repeat 7]

1. **Item access.** Per page the pipeline, the follow middleware and the archive writer read
   a few fields of each of its ~146 links (``LinkRecord``, a slots dataclass): timed as
   attribute reads, and as ``ItemAdapter`` reads (an adapter per item, as generic code
   writes it), in µs per page and ns per field read.
2. **Row writes.** One page's 146 anchors into the archive's ``anchors`` table, 200 pages in
   one transaction (WAL, ``synchronous=NORMAL``, the inbound index dropped as during a
   crawl): the writer's one ``INSERT … SELECT … FROM json_each(?)`` statement a page, and
   sqlite-utils' ``Table.insert_all``, in µs per page.

Best of ``--repeat`` (the least disturbed run: the machine is shared); prints the figures and
the ratios to nitpicker's way; exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from itemadapter import ItemAdapter
from sqlite_utils import Database

from nitpicker.archive.schema import migrate
from nitpicker.items import FollowMode, LinkRecord, PageItem

LINKS = 146
PAGES = 200
FIELDS = 3  # mode, key, url: what the pipeline reads of every link

_json_rows = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode


def _page() -> PageItem:
    page = PageItem(url="http://example.com/a", frontier_id=1, depth=1, is_external=False,
                    is_target=True)
    page.links = [LinkRecord(f"http://example.com/{i}", f"//example.com/{i}", "h", f"text {i}",
                             False, FollowMode.FULL) for i in range(LINKS)]
    return page


def item_access(repeat: int) -> None:
    page = _page()

    def attributes() -> None:
        for link in page.links:
            link.mode, link.key, link.url  # noqa: B018 (the reads are what is timed)

    def adapters() -> None:
        for link in ItemAdapter(page)["links"]:
            adapter = ItemAdapter(link)
            adapter["mode"], adapter["key"], adapter["url"]

    number = 200
    print(f"1. item access: {LINKS} links x {FIELDS} fields a page, best of {repeat}")
    best: dict[str, float] = {}
    for name, fn in (("attributes", attributes), ("ItemAdapter", adapters)):
        best[name] = min(timeit.repeat(fn, number=number, repeat=repeat)) / number
        per_read = best[name] / (LINKS * FIELDS) * 1e9
        print(f"   {name:12s} {best[name] * 1e6:8.1f} µs/page  {per_read:7.0f} ns/read")
    print(f"   ItemAdapter / attributes: {best['ItemAdapter'] / best['attributes']:.0f}x")


def _archive(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("INSERT INTO pages(id, url) VALUES (1, 'http://example.com/')")
    conn.execute("DROP INDEX IF EXISTS anchors_href_page")  # as while a crawl runs
    return conn


ROWS = [(1, f"http://example.com/{i}", "h", f"link text {i}") for i in range(LINKS)]


def _json_each(conn: sqlite3.Connection) -> None:
    for _ in range(PAGES):
        conn.execute("INSERT INTO anchors(page_id, href_id, hash, text)"
                     " SELECT ?, value ->> 0, value ->> 2, value ->> 3 FROM json_each(?)",
                     (1, _json_rows(ROWS)))


def _insert_all(conn: sqlite3.Connection) -> None:
    table = Database(conn)["anchors"]
    for _ in range(PAGES):
        table.insert_all(({"page_id": 1, "href_id": href, "hash": digest, "text": text}
                          for href, _, digest, text in ROWS), batch_size=LINKS)


def row_writes(repeat: int) -> None:
    ways: list[tuple[str, Callable[[sqlite3.Connection], None]]] = [
        ("json_each (the writer)", _json_each),
        ("sqlite-utils insert_all", _insert_all),
    ]
    print(f"2. row writes: {LINKS} anchors a page, {PAGES} pages a transaction, best of {repeat}")
    best: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        for run in range(repeat):
            for name, write in ways:  # alternated: a disturbance hits both alike
                conn = _archive(os.path.join(folder, f"{run}-{len(best)}-{write.__name__}.db"))
                start = time.perf_counter()
                conn.execute("BEGIN")
                write(conn)
                conn.execute("COMMIT")
                elapsed = (time.perf_counter() - start) / PAGES
                conn.close()
                best[name] = min(best.get(name, elapsed), elapsed)
    writer = best["json_each (the writer)"]
    for name, _ in ways:
        print(f"   {name:24s} {best[name] * 1e6:7.0f} µs/page  {best[name] / writer:5.2f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    item_access(args.repeat)
    row_writes(args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
