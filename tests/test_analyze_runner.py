"""nitpicker.analyze.runner with a store double: the pool's bounds, retries, Ctrl-C."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from nitpicker.analyze.plugin import Findings, PageValue, Snapshot
from nitpicker.analyze.runner import PluginRun, analyze_plugin


class Store:
    """What the runner asks of an :class:`~nitpicker.archive.analysis_store.AnalysisStore`,
    counting the snapshots it hands out."""

    def __init__(self, pages: int) -> None:
        self.pages = pages
        self.handed_out = 0
        self.recorded: list[int] = []
        self.errors: list[tuple[int, str]] = []
        self.ended: tuple[str, dict[str, Any]] | None = None

    def pending_count(self, key: Any, *, force: bool) -> int:
        return self.pages

    def snapshot_count(self) -> int:
        return self.pages

    def start_run(self, key: Any, settings: Any, headers: Any) -> int:
        return 1

    def commit(self) -> None: ...

    def maybe_commit(self) -> None: ...

    def end_run(self, run_id: int, outcome: str, **counts: Any) -> None:
        self.ended = (outcome, counts)

    def pending_snapshots(self, key: Any, *, force: bool, batch: int = 50
                          ) -> Iterator[Snapshot]:
        for page_id in range(1, self.pages + 1):
            self.handed_out += 1
            yield Snapshot(page_id, f"http://site.example/{page_id}", "<p>x</p>")

    def record(self, key: Any, run_id: int, item: Snapshot, findings: Any,
               phase: str = "page") -> None:
        self.recorded.append(item.page_id)

    def record_error(self, key: Any, run_id: int, item: Snapshot, message: str,
                     phase: str = "page") -> None:
        self.errors.append((item.page_id, message))


class Progress:
    def __init__(self) -> None:
        self.advanced = 0

    def start(self, name: str, label: str, total: int) -> None: ...

    def advance(self, name: str, findings: int, error: bool) -> None:
        self.advanced += 1

    def finish(self, name: str) -> None: ...


class Measuring:
    """Records how many calls run at once and how many snapshots are out of the store and not
    yet recorded when a call starts."""

    label = "measuring"
    version = "1"

    def __init__(self, store: Store, concurrency: int, fail: set[int] | None = None,
                 flaky: set[int] | None = None, odd: set[int] | None = None) -> None:
        self.headers = {"n": "N"}
        self.store = store
        self.concurrency = concurrency
        self.fail = fail or set()
        self.flaky = set(flaky or ())
        self.odd = odd or set()
        self.running = 0
        self.most_running = 0
        self.most_in_flight = 0
        self.calls: list[int] = []
        self.closed = False
        self._mutex = threading.Lock()

    def open(self) -> None: ...

    def close(self) -> None:
        self.closed = True

    def each_page(self, snapshot: Snapshot) -> Findings:
        with self._mutex:
            self.calls.append(snapshot.page_id)
            self.running += 1
            self.most_running = max(self.most_running, self.running)
            in_flight = (self.store.handed_out - len(self.store.recorded)
                         - len(self.store.errors))
            self.most_in_flight = max(self.most_in_flight, in_flight)
        try:
            time.sleep(0.005)
            if snapshot.page_id in self.fail:
                raise ValueError(f"page {snapshot.page_id} is unreadable")
            if snapshot.page_id in self.flaky:
                with self._mutex:
                    self.flaky.discard(snapshot.page_id)
                raise ConnectionError("engine died")
            if snapshot.page_id in self.odd:
                return Findings(values={"n": PageValue(object())})  # type: ignore[arg-type]
            return Findings(values={"n": PageValue(snapshot.page_id)})
        finally:
            with self._mutex:
                self.running -= 1


@pytest.mark.parametrize("concurrency", [1, 3])
def test_the_pool_and_the_snapshots_in_flight_are_bounded(concurrency: int) -> None:
    store = Store(60)
    plugin = Measuring(store, concurrency)
    summary = analyze_plugin(store, PluginRun("measuring", plugin, {}),  # type: ignore[arg-type]
                             force=False, progress=Progress())
    assert sorted(store.recorded) == list(range(1, 61))
    assert plugin.most_running == concurrency
    assert plugin.most_in_flight <= 2 * concurrency  # never the whole archive
    assert (summary.outcome, summary.done, summary.values, summary.errors) == (
        "finished", 60, 60, 0)
    assert store.ended == ("finished", {"done": 60, "skipped": 0, "errors": 0, "detail": None})


def test_a_failure_is_retried_once_then_recorded() -> None:
    store = Store(10)
    plugin = Measuring(store, 2, fail={4}, flaky={7})
    summary = analyze_plugin(store, PluginRun("measuring", plugin, {}),  # type: ignore[arg-type]
                             force=False, progress=Progress())
    assert plugin.calls.count(4) == 2 and plugin.calls.count(7) == 2
    assert store.errors == [(4, "ValueError: page 4 is unreadable")]
    assert 7 in store.recorded and 4 not in store.recorded
    assert (summary.done, summary.errors, summary.values) == (10, 1, 9)


def test_an_answer_outside_the_contract_is_a_plugin_error_for_its_page() -> None:
    store = Store(4)
    plugin = Measuring(store, 1, odd={2})
    summary = analyze_plugin(store, PluginRun("measuring", plugin, {}),  # type: ignore[arg-type]
                             force=False, progress=Progress())
    message = ("each_page returned the value 'n': object (a value is a string, number, boolean "
               "or None; a note a string or None)")
    assert store.errors == [(2, message)]
    assert (summary.done, summary.errors) == (4, 1)


def test_ctrl_c_keeps_what_finished_and_closes_the_plugin() -> None:
    store = Store(50)
    progress = Progress()

    class Interrupting(Progress):
        def advance(self, name: str, findings: int, error: bool) -> None:
            super().advance(name, findings, error)
            if self.advanced == 5:
                raise KeyboardInterrupt

    plugin = Measuring(store, 2)
    progress = Interrupting()
    with pytest.raises(KeyboardInterrupt):
        analyze_plugin(store, PluginRun("measuring", plugin, {}),  # type: ignore[arg-type]
                       force=False, progress=progress)
    assert plugin.closed
    assert store.ended is not None and store.ended[0] == "interrupted"
    assert 5 <= len(store.recorded) < 50
    assert store.handed_out <= len(store.recorded) + 2 * 2 + 1
