"""The analyze engines: a long-lived engine per plugin vs an engine started per snapshot.

For axe, markuplint and textlint, over generated snapshots:

(a) the naive baseline: a new browser page (axe: new context + page, axe injected, closed
    after) or a new Node process (markuplint, textlint: the plugin's own worker script,
    started for one snapshot and closed) per snapshot — the original's per-page workers;
(b) the plugin as the host drives it: its factory, ``open()``, ``each_page`` from a thread pool
    of its ``concurrency`` with at most that many snapshots in flight, ``close()``.

Prints pages/s of each, the ratio b/a, and the peak RSS of the whole process tree (this
process, Node, Chromium) over (b) when half and all the snapshots are done (1,000 and
2,000 with the default ``--pages 2000``). The baseline is
slow (textlint loads its dictionaries for every process), so it runs on a sample
(``--baseline``) — its pages/s do not depend on how many pages there are.

    .venv/bin/python bench/analyze_engines.py [--pages 2000] [--baseline 20] [--plugins axe,...]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Self

import psutil
from nitpicker_plugins import axe, markuplint, textlint
from nitpicker_plugins._node import NodeWorker, find_node_modules

from nitpicker.analyze.plugin import Snapshot
from nitpicker.render.chromium import CHROMIUM_ARGS, require_chromium

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

PLUGINS: dict[str, Any] = {"axe": axe, "markuplint": markuplint, "textlint": textlint}
WORKERS = {"markuplint": "markuplint-worker.mjs", "textlint": "textlint-worker.mjs"}

PARAGRAPHS = [
    "このページは株式会社サンプルの製品紹介です。私たちは、お客様に、より良い、体験を、届けます。",
    "朝は早く起きれる人が多いです。ﾃｽﾄ用の文章であり、内容に意味はない。",
    "Our products are built to last, and our support team answers within one business day.",
    "お問い合わせはフォームから受け付けています。webサイトとウェブサイトの表記が混在しています。",
]


def snapshot_html(n: int) -> str:
    """A page of a typical size with some findings for every tool (alt, link text, nesting,
    Japanese style); a different text per page."""
    paragraphs = "\n".join(f"<p>{PARAGRAPHS[(n + i) % len(PARAGRAPHS)]} ({n}-{i})</p>"
                           for i in range(12))
    nav = "\n".join(f'<li><a href="/p/{(n + i) % 5000}">ページ {i}</a></li>' for i in range(30))
    return f"""<!DOCTYPE html>
<html lang="ja">
<head><meta charset="utf-8"><title>製品ページ {n}</title>
<style>.faint {{ color: #aaa; background: #fff }}</style></head>
<body>
<header><nav><ul>{nav}</ul></nav></header>
<main>
<h1>製品 {n}</h1>
{paragraphs}
<p class="faint">小さな注意書き {n}</p>
<div><li>リストの外の項目</li></div>
<p><img src="/img/{n}.png" width="100" height="80"> <a href="/empty/{n}"></a></p>
<table><tr><td>価格</td><td>{n * 100}円</td></tr></table>
</main>
<footer><p>© サンプル</p></footer>
</body>
</html>"""


def snapshots(count: int, start: int = 0) -> Iterator[Snapshot]:
    for n in range(start, start + count):
        yield Snapshot(n, f"http://127.0.0.1:9/p/{n}", snapshot_html(n))


class TreeMemory:
    """Samples the RSS of this process and all its descendants every 0.2 s; keeps the peak."""

    def __init__(self) -> None:
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
        me = psutil.Process()
        total = 0
        for process in [me, *me.children(recursive=True)]:
            try:
                total += process.memory_info().rss
            except psutil.NoSuchProcess:
                continue
        self.peak = max(self.peak, total)
        return total

    def _sample(self) -> None:
        while not self._stop.wait(0.2):
            self.reading()


def run_plugin(name: str, pages: int, checkpoints: list[int]) -> tuple[float, dict[int, float]]:
    """(b): pages/s over ``pages`` snapshots, and the peak tree RSS (MB) at each checkpoint."""
    plugin = PLUGINS[name].create({})
    plugin.open()
    peaks: dict[int, float] = {}
    done = 0
    lock = threading.Lock()
    slots = threading.BoundedSemaphore(plugin.concurrency)

    def finished(_: object) -> None:
        nonlocal done
        slots.release()
        with lock:
            done += 1

    try:
        plugin.each_page(next(snapshots(1, start=10**6)))  # the engine is up before timing
        with TreeMemory() as memory, ThreadPoolExecutor(plugin.concurrency) as pool:
            started = time.monotonic()
            for snapshot in snapshots(pages):
                slots.acquire()
                pool.submit(plugin.each_page, snapshot).add_done_callback(finished)
                for checkpoint in checkpoints:
                    if checkpoint not in peaks and done >= checkpoint:
                        memory.reading()
                        peaks[checkpoint] = memory.peak / 2**20
            pool.shutdown(wait=True)
            elapsed = time.monotonic() - started
            memory.reading()
            for checkpoint in checkpoints:
                peaks.setdefault(checkpoint, memory.peak / 2**20)
    finally:
        plugin.close()
    return pages / elapsed, peaks


def naive_node(name: str, count: int) -> float:
    """(a) for a Node plugin: one process per snapshot."""
    settings: dict[str, Any] = (
        {"rules": textlint.DEFAULT_RULES} if name == "textlint" else {"config": None})
    started = time.monotonic()
    for snapshot in snapshots(count):
        worker = NodeWorker(WORKERS[name], settings, name=name, timeout=300)
        try:
            worker.request({"url": snapshot.url, "html": snapshot.html})
        finally:
            worker.close()
    return count / (time.monotonic() - started)


def naive_axe(count: int) -> float:
    """(a) for axe: one browser, a new context and page per snapshot (axe injected in each)."""
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
            return count / elapsed

    return asyncio.run(main())


BASELINES: dict[str, Callable[[int], float]] = {
    "axe": naive_axe,
    "markuplint": lambda count: naive_node("markuplint", count),
    "textlint": lambda count: naive_node("textlint", count),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000, help="snapshots for (b)")
    parser.add_argument("--baseline", type=int, default=20, help="snapshots for (a)")
    parser.add_argument("--plugins", default="axe,markuplint,textlint")
    args = parser.parse_args()
    checkpoints = sorted({args.pages // 2, args.pages})
    load = os.getloadavg()[0]
    print(f"{os.cpu_count()} CPUs, load average {load:.1f}; (b) over {args.pages} snapshots, "
          f"(a) over {args.baseline}")
    header = (f"{'plugin':<11} {'(a) p/s':>8} {'(b) p/s':>8} {'b/a':>6}  "
              + "  ".join(f"RSS@{c} MB" for c in checkpoints) + "  growth")
    print(header)
    for name in args.plugins.split(","):
        naive = BASELINES[name](args.baseline)
        rate, peaks = run_plugin(name, args.pages, checkpoints)
        first, last = peaks[checkpoints[0]], peaks[checkpoints[-1]]
        print(f"{name:<11} {naive:8.2f} {rate:8.2f} {rate / naive:6.1f}  "
              + "  ".join(f"{peaks[c]:>{len(f'RSS@{c} MB')}.0f}" for c in checkpoints)
              + f"  {100 * (last - first) / first:+.1f}%", flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
