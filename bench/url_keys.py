"""URL keys on the hot path: ``parse_url`` and ``LinkResolver.resolve``, before and after.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/url_keys.py [--baseline REV] [--pages 200] [--repeat 11]

Every link a crawl finds goes through ``LinkResolver.resolve`` (a string join, then
``parse_url`` when the absolute URL is not in the resolver's cache). This script times both
on typical pages of ~150 hrefs (root-relative, relative, absolute, query, fragment, dot
segments, percent-encoded non-ASCII), against ``nitpicker/policy/urls.py`` as it was at ``--baseline``
(loaded from git into a module of its own), side by side in one process, alternated,
``--repeat`` times; the best (least disturbed) CPU µs per href of each (process time:
steadier than wall time on a shared machine), and the ratio after/before. The resolver's
cache is emptied before each page, so every href is parsed (the worst case: a site whose
links are all new). A second set of hrefs holds characters Scrapy percent-encodes
(``[ ] { } | ^``): the slow path, shown for scale.

Prints its figures; exits 0.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve()
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from nitpicker.policy import links
from nitpicker.policy import urls as current

BASE = "https://www.example.com/news/2026/article-1234.html"


def typical_page(n: int) -> list[str]:
    """~150 hrefs as a CMS page has them (navigation, article links, pagination, externals)."""
    hrefs = [f"/section-{i}/" for i in range(20)]
    hrefs += [f"/news/2026/article-{n * 100 + i}.html" for i in range(60)]
    hrefs += [f"article-{n * 100 + i}.html" for i in range(20)]
    hrefs += [f"https://partner{i}.example.org/landing?utm_source=site&id={n}" for i in range(10)]
    hrefs += [f"?page={i}" for i in range(10)]
    hrefs += [f"/news/2026/article-{n}.html#comment-{i}" for i in range(10)]
    hrefs += [f"../2025/archive-{i}.html" for i in range(10)]
    hrefs += [f"/tag/%E3%83%8B%E3%83%A5%E3%83%BC%E3%82%B9-{i}/" for i in range(10)]
    return hrefs


def special_page(n: int) -> list[str]:
    """150 hrefs each holding a character Scrapy percent-encodes."""
    return [f"/list?filter[tag]=t{n}-{i}&page[{i}]=1" if i % 2 else f"/item[{n}]-{i}|x.html"
            for i in range(150)]


def load_baseline(rev: str) -> ModuleType:
    source = subprocess.run(["git", "show", f"{rev}:nitpicker/policy/urls.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(source)
    spec = importlib.util.spec_from_file_location("urls_baseline", handle.name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def time_parse(parse: Any, urls: list[str]) -> float:
    """µs per ``parse_url`` call over ``urls`` (absolute)."""
    start = time.process_time()
    for url in urls:
        parse(url)
    return (time.process_time() - start) / len(urls) * 1e6


def time_resolve(parse: Any, pages: list[list[str]]) -> float:
    """µs per href through ``LinkResolver.resolve`` with ``parse`` as its ``parse_url``."""
    saved = links.parse_url
    links.parse_url = parse
    try:
        resolver = links.LinkResolver()
        total = 0
        start = time.process_time()
        for page in pages:
            resolver._cache.clear()
            for href in page:
                resolver.resolve(BASE, href)
            total += len(page)
        return (time.process_time() - start) / total * 1e6
    finally:
        links.parse_url = saved


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--baseline", default="34db29f",
                        help="git revision of nitpicker/policy/urls.py before (default: 34db29f)")
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=11)
    args = parser.parse_args()

    baseline = load_baseline(args.baseline)
    resolver = links.LinkResolver()
    sets = {
        "typical": [typical_page(n) for n in range(args.pages)],
        "special": [special_page(n) for n in range(args.pages)],
    }
    print(f"{args.pages} pages of ~150 hrefs; baseline urls.py at {args.baseline}; "
          f"best of {args.repeat}")
    print(f"{'hrefs':8} {'measure':22} {'before µs':>10} {'after µs':>10} {'after/before':>13}")
    for name, pages in sets.items():
        absolute = [resolver.absolute(BASE, href) for page in pages for href in page]
        for label in ("parse_url", "resolve (cache empty)"):
            before: list[float] = []
            after: list[float] = []
            for _ in range(args.repeat):
                for parse, results in ((baseline.parse_url, before), (current.parse_url, after)):
                    if label == "parse_url":
                        results.append(time_parse(parse, absolute))
                    else:
                        results.append(time_resolve(parse, pages))
            b, a = min(before), min(after)
            print(f"{name:8} {label:22} {b:10.3f} {a:10.3f} {a / b:13.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
