"""The markuplint worker keeps one engine per thread and lints page after page with it, in
``threads`` worker threads: the violations must be those of a fresh process per page."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from nitpicker_plugins import markuplint
from nitpicker_plugins._settings import SettingError

from nitpicker.analyze.plugin import Snapshot
from tests.helpers import ROOT

FIXTURES = ROOT / "fixtures" / "site" / "analyze"

VARIANTS = [
    # an unnamed button and image, an empty link, a heading skipped, a bad ARIA role
    """<!DOCTYPE html><html lang="ja"><head><meta charset="utf-8"><title>a</title></head>
<body><main><h1>A</h1><h4>skipped</h4><button></button><img src="a.png"><a href="/x"></a>
<div role="buton">b</div><table><tr><td>1</td></tr></table></main></body></html>""",
    # the same ids and elements as the fixture, in another order and place
    """<!DOCTYPE html><html><head><meta charset="utf-8"><title>b</title></head>
<body><p id="twice">two</p><ul><li>ok</li></ul><span><div>block in inline</div></span>
<p id="twice">again</p><input type="text"></body></html>""",
    # unclosed and stray end tags
    """<!DOCTYPE html><html lang="en"><head><title>c</title></head><body><p>open
<div>x</span></div><ul><p>not an item</p></ul></body></html>""",
]


def pages() -> list[Snapshot]:
    found = [Snapshot(1, "http://127.0.0.1:9/analyze/markuplint",
                      (FIXTURES / "markuplint.html").read_text("utf-8")),
             Snapshot(2, "http://127.0.0.1:9/analyze/clean",
                      (FIXTURES / "clean.html").read_text("utf-8"))]
    found += [Snapshot(3 + n, f"http://127.0.0.1:9/v/{n}/", html)
              for n, html in enumerate(VARIANTS)]
    return found


def violations(plugin: markuplint.MarkuplintPlugin, page: Snapshot) -> list[tuple[Any, ...]]:
    findings = plugin.each_page(page)
    return [(v.severity, v.rule, v.message, v.location) for v in findings.violations]


@pytest.mark.slow
def test_pages_linted_by_one_process_match_a_process_per_page() -> None:
    """Five different pages, twice over, through one plugin (2 threads, an engine kept in
    each) against each page linted by a fresh process of its own."""
    alone: list[list[tuple[Any, ...]]] = []
    for page in pages():
        fresh = markuplint.create({"threads": 1})
        try:
            alone.append(violations(fresh, page))
        finally:
            fresh.close()
    assert all(alone[n] for n in (0, 2, 3, 4))  # every page but the clean one has findings

    shared = markuplint.create({"threads": 2, "recycle": 0})
    shared.open()
    try:
        with ThreadPoolExecutor(shared.concurrency) as pool:
            batch = list(pool.map(lambda page: violations(shared, page), pages() * 2))
    finally:
        shared.close()
    assert batch == alone * 2


def test_one_thread_keeps_its_engine_too() -> None:
    plugin = markuplint.create({"threads": 1})
    try:
        first = [violations(plugin, page) for page in pages()]
        again = [violations(plugin, page) for page in reversed(pages())]
    finally:
        plugin.close()
    assert again == list(reversed(first))
    assert plugin.worker.starts == 1


def test_a_config_by_file_name_still_applies_per_page() -> None:
    """``overrides`` picks rules by the file's name: an engine per page, so each page gets
    its own (here: id-duplication off under /v/)."""
    config = {"rules": {"id-duplication": True},
              "overrides": {"**/v/**": {"rules": {"id-duplication": False}}}}
    plugin = markuplint.create({"config": config, "threads": 1})
    try:
        fixture, _, _, second, _ = (violations(plugin, page) for page in pages())
    finally:
        plugin.close()
    assert [rule for _, rule, _, _ in fixture] == ["id-duplication"]
    assert second == []


@pytest.mark.parametrize("threads", [0, 17, True, "2"])
def test_bad_threads_are_named(threads: object) -> None:
    with pytest.raises(SettingError, match="'threads'"):
        markuplint.create({"threads": threads})


def test_concurrency_follows_threads() -> None:
    # one page more than threads: it waits in the Node process for the first thread to be free
    assert markuplint.create({"threads": 3}).concurrency == 4
    assert markuplint.create({"threads": 3, "concurrency": 1}).concurrency == 1
