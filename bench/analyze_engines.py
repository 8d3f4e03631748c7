"""The analyze engines: ``nitpicker analyze`` against an engine started per snapshot.

For axe, markuplint and textlint, over a synthetic archive of generated snapshots (built by
this script: Japanese product pages of ~5 KB with navigation, text, links, images, a table,
and a few findings for every tool):

(a) the naive baseline: a new browser page per snapshot (axe: a new context and page in one
    Chromium, axe injected, closed after) or a new Node process per snapshot (markuplint,
    textlint: the plugin's own worker script, started for one snapshot and closed) — the
    original's per-page workers. It runs on a sample of the snapshots (``--baseline``) and
    its per-page rate is extrapolated to the archive: its cost per page does not depend on
    how many pages there are;
(b) the real command: ``nitpicker analyze FILE --plugin NAME --silent`` (this virtualenv's
    ``nitpicker``, a subprocess) on a fresh copy of the archive.

Prints pages/s of (a) and (b) (b: the command's wall time, start-up and engine start
included, and its steady rate between the two checkpoints), the ratio b/a, and the peak RSS
of the command's whole process tree (``nitpicker``, Playwright's driver, Chromium, Node),
sampled every 0.2 s, when half and all the snapshots are recorded (1,000 and 2,000 with the
default ``--pages 2000``; the archive's ``analyzed_pages`` rows, read-only, tell how far the
command is), and the growth between the two.

    .venv/bin/python bench/analyze_engines.py [--pages 2000] [--baseline 30]
        [--baseline textlint=5,axe=40] [--plugins axe,markuplint,textlint] [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import threading
import time
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

import psutil
from measuring import nitpicker_command
from nitpicker_plugins import axe, textlint
from nitpicker_plugins._node import NodeWorker, find_node_modules

from nitpicker.analyze.plugin import Snapshot
from nitpicker.archive.schema import migrate
from nitpicker.render.chromium import CHROMIUM_ARGS, require_chromium

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

WORKERS = {"markuplint": "markuplint-worker.mjs", "textlint": "textlint-worker.mjs"}
BASE = "https://shop.example.jp"
DEFAULT_BASELINE = 30

PARAGRAPHS = [
    "このページは株式会社サンプルの製品紹介です。私たちは、お客様に、より良い、体験を、届けます。",
    "朝は早く起きれる人が多いです。ﾃｽﾄ用の文章であり、内容に意味はない。",
    "Our products are built to last, and our support team answers within one business day.",
    "お問い合わせはフォームから受け付けています。webサイトとウェブサイトの表記が混在しています。",
    "新製品は来月発売予定です。詳しくは、販売店にお問い合わせください。",
    "配送料は全国一律です。ただし、離島など一部の地域では、追加料金が必要となる場合があります。",
    "This model ships with a two-year warranty; batteries and cables are covered for one year.",
]


def snapshot_html(n: int) -> str:
    """A product page of a typical size (~5 KB) with some findings for every tool (an image
    without alt, an empty link, low contrast, an ``li`` outside a list, Japanese style); a
    different text and different links on every page."""
    paragraphs = "\n".join(
        f'<p>{PARAGRAPHS[(n + i) % len(PARAGRAPHS)]} <a href="/p/{(n * 7 + i) % 5000}">'
        f"詳細 {i}</a> ({n}-{i})</p>" for i in range(12))
    nav = "\n".join(f'<li><a href="/c/{(n + i) % 40}/">カテゴリ {i}</a></li>' for i in range(20))
    images = "\n".join(
        f'<figure><img src="/img/{n}-{i}.jpg" width="320" height="240"'
        + ("" if (n + i) % 3 == 0 else f' alt="製品 {n} の写真 {i}"')
        + f"><figcaption>写真 {i}</figcaption></figure>" for i in range(3))
    return f"""<!DOCTYPE html>
<html lang="ja">
<head><meta charset="utf-8"><title>製品ページ {n} | サンプル</title>
<meta name="description" content="製品 {n} の紹介ページです。">
<link rel="canonical" href="{BASE}/p/{n}">
<style>.faint {{ color: #aaa; background: #fff }}</style></head>
<body>
<header><a href="/"><img src="/logo.png" alt="サンプル"></a>
<nav><ul>{nav}</ul></nav></header>
<main>
<h1>製品 {n}</h1>
{paragraphs}
{images}
<p class="faint">小さな注意書き {n}</p>
<div><li>リストの外の項目</li></div>
<p><a href="/empty/{n}"></a> <a href="https://example.com/{n}" target="_blank">外部リンク</a></p>
<table><tr><th>項目</th><th>値</th></tr><tr><td>価格</td><td>{n * 100}円</td></tr>
<tr><td>在庫</td><td>{"あり" if n % 2 else "なし"}</td></tr></table>
<form action="/cart"><input type="text" name="qty"><button>カートに入れる</button></form>
</main>
<footer><p>© サンプル</p><a href="#top">先頭へ</a></footer>
</body>
</html>"""


def snapshots(count: int) -> Iterator[Snapshot]:
    for n in range(count):
        yield Snapshot(n + 1, f"{BASE}/p/{n}", snapshot_html(n))


def build_archive(path: Path, pages: int) -> float:
    """A nitpicker archive of ``pages`` internal HTML pages, each with its snapshot; the mean
    snapshot size in KB."""
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn)
    conn.execute("BEGIN")
    conn.execute(
        "INSERT INTO info(id, version, name, base_url, roots, config, created_at)"
        " VALUES (1, 'bench', 'bench', ?, ?, '{}', '2026-12-01T00:00:00+00:00')",
        (f"{BASE}/", json.dumps([f"{BASE}/"])))
    size = 0
    for snapshot in snapshots(pages):
        conn.execute(
            "INSERT INTO pages(id, url, scraped, is_target, is_external, depth, status,"
            " status_text, content_type, title) VALUES (?, ?, 1, 1, 0, 1, 200, 'OK',"
            " 'text/html', ?)", (snapshot.page_id, snapshot.url, f"製品ページ {snapshot.page_id}"))
        data = snapshot.html.encode("utf-8")
        size += len(data)
        conn.execute("INSERT INTO snapshots(page_id, encoding, html) VALUES (?, 'zlib', ?)",
                     (snapshot.page_id, zlib.compress(data, 6)))
    conn.execute("COMMIT")
    conn.close()
    return size / pages / 1024


class TreeMemory:
    """Samples the RSS of a process and all its descendants every 0.2 s; keeps the peak."""

    def __init__(self, pid: int) -> None:
        self.root = psutil.Process(pid)
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def reading(self) -> int:
        try:
            processes = [self.root, *self.root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return 0
        total = 0
        for process in processes:
            try:
                total += process.memory_info().rss
            except (psutil.NoSuchProcess, psutil.ZombieProcess):
                continue
        self.peak = max(self.peak, total)
        return total

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            self.reading()


def analysed(archive: Path, plugin: str) -> tuple[int, int]:
    """Pages the plugin has recorded so far (committed), and how many of them failed."""
    try:
        conn = sqlite3.connect(f"{archive.resolve().as_uri()}?mode=ro", uri=True, timeout=5)
        try:
            row = conn.execute(
                "SELECT count(*), coalesce(sum(ok = 0), 0) FROM analyzed_pages"
                " WHERE plugin = ? AND phase = 'page'", (plugin,)).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:  # not migrated yet, or busy
        return 0, 0
    return int(row[0]), int(row[1])


class Command:
    """(b): one ``nitpicker analyze`` run, watched: peak tree RSS and time at each checkpoint."""

    def __init__(self, archive: Path, plugin: str, checkpoints: list[int], workdir: Path
                 ) -> None:
        self.archive = archive
        self.plugin = plugin
        self.checkpoints = checkpoints
        self.workdir = workdir
        self.peaks: dict[int, float] = {}
        self.times: dict[int, float] = {}
        self.elapsed = 0.0
        self.errors = 0
        self.done = 0
        self.stderr = ""
        self.returncode = 0

    def run(self) -> None:
        argv = [*nitpicker_command(), "analyze", str(self.archive), "--plugin", self.plugin,
                "--silent"]
        started = time.monotonic()
        with (self.workdir / f"{self.plugin}.stderr").open("w+") as log:
            process = subprocess.Popen(argv, cwd=self.workdir, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=log)
            with TreeMemory(process.pid) as memory:
                while process.poll() is None:
                    time.sleep(0.5)
                    self._checkpoint(memory, started)
                self.returncode = process.returncode
            self.elapsed = time.monotonic() - started
            self._checkpoint(memory, started)
            for checkpoint in self.checkpoints:  # the run ended before a checkpoint was seen
                self.peaks.setdefault(checkpoint, memory.peak / 2**20)
                self.times.setdefault(checkpoint, self.elapsed)
            log.seek(0)
            self.stderr = log.read()

    def _checkpoint(self, memory: TreeMemory, started: float) -> None:
        self.done, self.errors = analysed(self.archive, self.plugin)
        for checkpoint in self.checkpoints:
            if checkpoint not in self.peaks and self.done >= checkpoint:
                memory.reading()
                self.peaks[checkpoint] = memory.peak / 2**20
                self.times[checkpoint] = time.monotonic() - started
                print(f"  {self.plugin}: {self.done} pages recorded after "
                      f"{self.times[checkpoint]:.0f} s, peak RSS so far "
                      f"{self.peaks[checkpoint]:.0f} MB", flush=True)


def naive_node(name: str, count: int) -> float:
    """(a) for a Node plugin: one process per snapshot; seconds a page."""
    settings: dict[str, Any] = (
        {"rules": textlint.DEFAULT_RULES} if name == "textlint" else {"config": None})
    started = time.monotonic()
    for snapshot in snapshots(count):
        worker = NodeWorker(WORKERS[name], settings, name=name, timeout=600)
        try:
            worker.request({"url": snapshot.url, "html": snapshot.html})
        finally:
            worker.close()
    return (time.monotonic() - started) / count


def naive_axe(count: int) -> float:
    """(a) for axe: one browser, a new context and page per snapshot (axe injected in each);
    seconds a page."""
    from playwright.async_api import async_playwright

    source = (find_node_modules("axe-core") / "axe-core" / "axe.min.js").read_text("utf-8")

    async def main() -> float:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=require_chromium(),
                                                       args=CHROMIUM_ARGS)
            started = time.monotonic()
            for snapshot in snapshots(count):
                context = await browser.new_context()
                page = await context.new_page()
                await page.route("**/*", lambda route: route.abort())
                await page.set_content(snapshot.html, wait_until="load")
                await page.evaluate(source)
                await page.evaluate(axe.AUDIT, [None, None])
                await context.close()
            elapsed = time.monotonic() - started
            await browser.close()
            return elapsed / count

    return asyncio.run(main())


BASELINES: dict[str, Callable[[int], float]] = {
    "axe": naive_axe,
    "markuplint": lambda count: naive_node("markuplint", count),
    "textlint": lambda count: naive_node("textlint", count),
}


def baseline_sizes(text: str, plugins: list[str]) -> dict[str, int]:
    """``30`` (every plugin) or ``textlint=5,axe=40`` (the others: the default)."""
    if "=" not in text:
        return dict.fromkeys(plugins, int(text))
    sizes = dict.fromkeys(plugins, DEFAULT_BASELINE)
    for item in text.split(","):
        name, _, size = item.partition("=")
        sizes[name.strip()] = int(size)
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000, help="snapshots in the archive")
    parser.add_argument("--baseline", default=str(DEFAULT_BASELINE),
                        help="snapshots (a) runs on: N, or NAME=N,… per plugin")
    parser.add_argument("--plugins", default="axe,markuplint,textlint")
    parser.add_argument("--keep", type=Path, help="build the archive and logs in DIR, kept")
    args = parser.parse_args()
    plugins = args.plugins.split(",")
    sizes = baseline_sizes(args.baseline, plugins)
    checkpoints = sorted({args.pages // 2, args.pages})
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="nitpicker-analyze-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    source = workdir / "bench.nitpicker"
    source.unlink(missing_ok=True)
    kb = build_archive(source, args.pages)
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; archive of "
          f"{args.pages} snapshots ({kb:.1f} KB of HTML each); (b) `nitpicker analyze FILE "
          "--plugin NAME --silent` on a fresh copy; (a) on a sample of snapshots, its rate per "
          "page extrapolated to the archive", flush=True)
    header = (f"{'plugin':<11} {'(a) n':>5} {'(a) p/s':>8} {'(b) p/s':>8} {'b/a':>6} "
              f"{'steady':>7}  " + "  ".join(f"RSS@{c} MB" for c in checkpoints) + "  growth")
    print(header, flush=True)
    try:
        for name in plugins:
            per_page = BASELINES[name](sizes[name])
            print(f"  {name}: (a) {per_page:.2f} s a page over {sizes[name]} snapshots",
                  flush=True)
            copy = workdir / f"{name}.nitpicker"
            shutil.copyfile(source, copy)
            command = Command(copy, name, checkpoints, workdir)
            command.run()
            naive = 1 / per_page
            rate = args.pages / command.elapsed
            first, last = command.peaks[checkpoints[0]], command.peaks[checkpoints[-1]]
            span = command.times[checkpoints[-1]] - command.times[checkpoints[0]]
            steady = (checkpoints[-1] - checkpoints[0]) / span if span > 0 else 0.0
            print(f"{name:<11} {sizes[name]:>5} {naive:8.3f} {rate:8.2f} {rate / naive:6.1f} "
                  f"{steady:7.2f}  "
                  + "  ".join(f"{command.peaks[c]:>{len(f'RSS@{c} MB')}.0f}" for c in checkpoints)
                  + f"  {100 * (last - first) / first:+.1f}%", flush=True)
            print(f"  {name}: (a) {per_page:.2f} s a page, {per_page * args.pages / 60:.1f} min "
                  f"for the archive (extrapolated); (b) {command.elapsed / 60:.1f} min, exit "
                  f"{command.returncode}, {command.done} pages recorded, {command.errors} "
                  f"plugin errors; load average {os.getloadavg()[0]:.1f}", flush=True)
            if command.returncode != 0 or command.done != args.pages:
                print("  stderr: " + " | ".join(command.stderr.splitlines()[-5:]), flush=True)
            copy.unlink()
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
