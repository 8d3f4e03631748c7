"""The Node worker client (plugins/_node.py) with a small worker script of the tests' own
(speaking plugins/node/protocol.mjs): answers in any order, errors, a worker that died or
hung, and the markuplint plugin's worker killed between two pages."""

from __future__ import annotations

import os
import signal
import threading
import time
import urllib.request
from typing import TYPE_CHECKING

import pytest
from nitpicker_plugins import markuplint
from nitpicker_plugins._node import NODE_SCRIPTS, NodeWorker, NodeWorkerError, find_node_modules

from nitpicker.analyze.plugin import Snapshot

if TYPE_CHECKING:
    from pathlib import Path

    from fixtures.site import FixtureSite

#: echoes after `wait` ms; `fail` answers with an error; `exit` ends the process
ECHO = """
import { serve, settings } from %r;
const { prefix } = settings();
serve(async ({ text, wait = 0, fail, exit }) => {
  if (exit) { console.error('dying on request'); process.exit(3); }
  await new Promise((resolve) => setTimeout(resolve, wait));
  if (fail) throw new Error(`failed on ${text}`);
  return `${prefix}${text}`;
});
"""


@pytest.fixture
def echo(tmp_path: Path) -> Path:
    script = tmp_path / "echo-worker.mjs"
    script.write_text(ECHO % str(NODE_SCRIPTS / "protocol.mjs"))
    return script


def test_requests_in_flight_are_answered_each_to_its_caller(echo: Path) -> None:
    worker = NodeWorker(str(echo), {"prefix": "> "}, name="echo", timeout=60)
    answers: dict[str, str] = {}
    finished: list[str] = []

    def ask(text: str, wait: int) -> None:
        answers[text] = worker.request({"text": text, "wait": wait})
        finished.append(text)

    try:
        worker.request({"text": "warm-up"})  # started: what follows does not wait for Node
        slow = threading.Thread(target=ask, args=("slow", 5000))
        slow.start()
        time.sleep(0.3)
        ask("fast", 0)
        slow.join()
    finally:
        worker.close()
    assert answers == {"slow": "> slow", "fast": "> fast"}
    assert finished == ["fast", "slow"]  # not queued behind the slow one
    assert worker.starts == 1


def test_an_error_answer_raises_and_the_worker_lives_on(echo: Path) -> None:
    worker = NodeWorker(str(echo), {"prefix": ""}, name="echo", timeout=30)
    try:
        with pytest.raises(NodeWorkerError, match="failed on x"):
            worker.request({"text": "x", "fail": True})
        assert worker.request({"text": "y"}) == "y"
    finally:
        worker.close()
    assert worker.starts == 1


def test_a_worker_that_died_fails_its_request_and_the_next_one_starts_it(echo: Path) -> None:
    worker = NodeWorker(str(echo), {"prefix": ""}, name="echo", timeout=30)
    try:
        with pytest.raises(NodeWorkerError, match="exited with code 3: dying on request"):
            worker.request({"text": "x", "exit": True})
        assert worker.request({"text": "again"}) == "again"
    finally:
        worker.close()
    assert worker.starts == 2


#: a tool that takes `startup` ms to load before it serves (textlint's dictionaries)
SLOW_START = """
import { serve, settings } from %r;
const { startup } = settings();
await new Promise((resolve) => setTimeout(resolve, startup));
serve(async ({ text, wait = 0 }) => {
  await new Promise((resolve) => setTimeout(resolve, wait));
  return text;
});
"""


def test_the_start_up_is_not_counted_against_a_page_timeout(tmp_path: Path) -> None:
    """A process loading its tool for longer than the per-page timeout answers its first
    page (before: the first page timed out and killed every fresh process, so on a loaded
    machine textlint recorded every page as an error); a slow page after it still times
    out."""
    script = tmp_path / "slow-start.mjs"
    script.write_text(SLOW_START % str(NODE_SCRIPTS / "protocol.mjs"))
    worker = NodeWorker(str(script), {"startup": 4000}, name="slow", timeout=2)
    try:
        assert worker.request({"text": "first"}) == "first"
        with pytest.raises(NodeWorkerError, match="no answer in 2s"):
            worker.request({"text": "slow page", "wait": 30_000})
        assert worker.starts == 1
    finally:
        worker.close()


@pytest.mark.slow
def test_a_worker_that_hangs_is_killed_and_replaced(echo: Path) -> None:
    worker = NodeWorker(str(echo), {"prefix": ""}, name="echo", timeout=10)
    try:
        worker.request({"text": "started"})  # answered once: no start-up allowance left
        first = worker.pid
        with pytest.raises(NodeWorkerError, match="no answer in 10s"):
            worker.request({"text": "x", "wait": 60_000})
        assert worker.request({"text": "y"}) == "y"
        assert worker.pid != first
    finally:
        worker.close()


def test_a_worker_is_recycled_after_its_share_of_requests(echo: Path) -> None:
    """A fresh process replaces one that served ``recycle_after`` requests; a request still in
    flight on the old one is answered; the old one exits."""
    worker = NodeWorker(str(echo), {"prefix": ""}, name="echo", timeout=60, recycle_after=2)
    answers: list[str] = []
    try:
        assert worker.request({"text": "1"}) == "1"
        first = worker.pid
        slow = threading.Thread(
            target=lambda: answers.append(worker.request({"text": "slow", "wait": 3000})))
        slow.start()
        time.sleep(0.5)
        assert worker.request({"text": "3"}) == "3"  # served by a fresh process
        assert worker.pid != first
        slow.join()
        assert answers == ["slow"]
        assert worker.starts == 2
    finally:
        worker.close()
    assert first is not None
    with pytest.raises(ProcessLookupError):
        os.kill(first, 0)


def test_close_ends_the_process(echo: Path) -> None:
    worker = NodeWorker(str(echo), {"prefix": ""}, name="echo", timeout=30)
    worker.request({"text": "x"})
    pid = worker.pid
    assert pid is not None
    worker.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_script_away_from_the_checkout_finds_the_tools_in_node_modules(tmp_path: Path) -> None:
    """Installed outside the checkout, a worker's bare imports resolve from the node_modules
    directory the Python side found (``plugins/node/resolve.mjs``)."""
    script = tmp_path / "away-worker.mjs"
    script.write_text(
        f"import {{ MLEngine }} from 'markuplint';\n"
        f"import {{ serve }} from {str(NODE_SCRIPTS / 'protocol.mjs')!r};\n"
        "serve(async () => typeof MLEngine.fromCode);\n")
    alone = NodeWorker(str(script), {}, name="away", timeout=60)
    found = NodeWorker(str(script), {}, name="away", timeout=60,
                       node_modules=find_node_modules("markuplint"))
    try:
        with pytest.raises(NodeWorkerError, match="Cannot find package 'markuplint'"):
            alone.request({})
        assert found.request({}) == "function"
    finally:
        alone.close()
        found.close()


def test_killed_markuplint_worker_is_restarted_by_the_next_page(site: FixtureSite) -> None:
    url = site.url("/analyze/markuplint")
    with urllib.request.urlopen(url) as response:
        page = Snapshot(1, url, response.read().decode("utf-8"))
    plugin = markuplint.create({})
    try:
        plugin.open()
        first = plugin.each_page(page)
        pid = plugin.worker.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.5)  # the worker's reader sees the pipe close
        again = plugin.each_page(page)
        assert plugin.worker.starts == 2
        assert plugin.worker.pid != pid
    finally:
        plugin.close()
    assert again == first
