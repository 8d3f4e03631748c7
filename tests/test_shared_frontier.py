"""nitpicker.archive.shared_frontier / shared_writer: several workers leasing one archive's
frontier (``--workers N``), each through its own connection, as their processes do."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from nitpicker.archive import ArchiveWriter, shared_writer
from nitpicker.archive.frontier_store import DONE, LEASED, PENDING
from nitpicker.archive.shared_writer import BUSY_TIMEOUT_MS, GROUP_PAGES, SharedArchiveWriter
from nitpicker.items import PageItem
from tests.helpers import frontier_entry, frontier_states, writer_config

if TYPE_CHECKING:
    from collections.abc import Iterator

SITE = "http://example.com"


@pytest.fixture
def archive(tmp_path: Path) -> Iterator[Path]:
    """An archive made and held by the coordinator, with five pending rows."""
    coordinator = ArchiveWriter.create(writer_config(tmp_path))
    coordinator.frontier.add([frontier_entry(f"{SITE}/{n}", 1) for n in range(5)])
    coordinator.commit()
    yield coordinator.path
    with contextlib.suppress(sqlite3.ProgrammingError):
        coordinator.abandon()


def attach(path: Path, owner: str, lease_seconds: float = 60.0) -> SharedArchiveWriter:
    return SharedArchiveWriter.attach(path, owner=owner, lease_seconds=lease_seconds)


def page(frontier_id: int, path: str) -> PageItem:
    return PageItem(url=f"{SITE}/{path}", frontier_id=frontier_id, depth=1, is_external=False,
                    is_target=True, status=200)


def test_two_workers_lease_disjoint_rows_and_see_each_others_leases(archive: Path) -> None:
    one, two = attach(archive, "w1"), attach(archive, "w2")
    first = one.frontier.lease(3)
    second = two.frontier.lease(3)  # committed at once: the second sees the first's leases
    assert len(first) == 3 and len(second) == 2
    assert {row[0] for row in first}.isdisjoint(row[0] for row in second)
    conn = sqlite3.connect(archive)
    owners = dict(conn.execute("SELECT lease_owner, count(*) FROM frontier GROUP BY lease_owner"))
    assert owners == {"w1": 3, "w2": 2}
    assert two.frontier.has_outstanding()
    one.detach()
    two.detach()
    assert set(frontier_states(archive).values()) == {PENDING}  # each released its own


def test_an_expired_lease_is_taken_by_another_worker_and_the_late_page_dropped(
    archive: Path,
) -> None:
    dead = attach(archive, "dead", lease_seconds=0.2)
    rows = dead.frontier.lease(5)
    alive = attach(archive, "alive")
    assert alive.frontier.lease(5) == []  # leased by a worker that still lives
    time.sleep(0.3)
    taken = alive.frontier.lease(5)
    assert sorted(taken) == sorted(rows)
    # The first worker comes back late: its page is not recorded, the row stays the other's.
    frontier_id, url, _, _ = rows[0]
    assert dead.pages.record(page(frontier_id, url.rsplit("/", 1)[1]), []) == 0
    dead.commit()
    assert alive.pages.record(page(frontier_id, url.rsplit("/", 1)[1]), []) > 0
    alive.commit()
    conn = sqlite3.connect(archive)
    assert conn.execute("SELECT count(*) FROM pages WHERE scraped = 1").fetchone()[0] == 1
    assert conn.execute("SELECT state, lease_owner FROM frontier WHERE id = ?",
                        (frontier_id,)).fetchone() == (DONE, "alive")
    dead.detach()  # releases nothing of the other's
    assert frontier_states(archive)[url] == DONE
    assert list(frontier_states(archive).values()).count(LEASED) == 4
    alive.detach()


def test_renew_keeps_a_live_workers_rows(archive: Path) -> None:
    slow = attach(archive, "slow", lease_seconds=0.3)
    slow.frontier.lease(5)
    other = attach(archive, "other")
    for _ in range(3):
        time.sleep(0.15)
        assert slow.frontier.renew() == 5
        assert other.frontier.lease(5) == []
    slow.detach()
    other.detach()


def test_has_outstanding_is_false_only_when_every_row_is_done(archive: Path) -> None:
    worker = attach(archive, "w")
    rows = worker.frontier.lease(5)
    for frontier_id, url, _, _ in rows:
        assert worker.frontier.has_outstanding()
        worker.pages.record(page(frontier_id, url.rsplit("/", 1)[1]), [])
        worker.maybe_commit()
    assert not worker.frontier.has_outstanding()
    worker.detach()


def test_a_single_writer_records_without_a_lease_check(tmp_path: Path) -> None:
    writer = ArchiveWriter.create(writer_config(tmp_path))
    try:
        assert not writer.frontier.checks_leases
        assert writer.pages.record(page(12345, "x"), []) > 0  # no row 12345: recorded anyway
    finally:
        writer.abandon()


# -- the write lock between workers: polled for, grouped, never waited for by the reactor --------


def test_begin_waits_for_the_other_workers_write_and_keeps_the_busy_timeout(archive: Path) -> None:
    one, two = attach(archive, "w1"), attach(archive, "w2")
    one.begin()  # w1 holds the write lock
    released = threading.Timer(0.05, one.commit)
    released.start()
    two.begin()  # polls until w1's commit, then holds the lock itself
    released.join()
    assert two.conn.in_transaction and not one.conn.in_transaction
    two.frontier.lease(1)
    assert two.conn.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
    one.detach()
    two.detach()


def test_begin_gives_up_after_the_busy_timeout(archive: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shared_writer, "BUSY_TIMEOUT_MS", 30)
    one, two = attach(archive, "w1"), attach(archive, "w2")
    one.begin()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        two.begin()
    assert not two.conn.in_transaction
    assert two.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 30
    one.detach()
    two.detach()


def test_queued_writes_join_the_open_transaction(archive: Path) -> None:
    one = attach(archive, "w1")
    queued = [True]
    one.more_queued = lambda: queued[0]
    one.begin()
    one.dirty = 1
    one.maybe_commit()  # more writes queued, the group young and small: still open
    assert one.conn.in_transaction
    one.dirty = GROUP_PAGES
    one.maybe_commit()  # the group is full
    assert not one.conn.in_transaction
    one.begin()
    one.dirty = 1
    queued[0] = False
    one.maybe_commit()  # nothing queued behind it: committed at once
    assert not one.conn.in_transaction
    one.detach()


def test_a_group_is_as_old_as_its_lock_not_as_the_last_commit(archive: Path) -> None:
    # A worker that waited for the lock longer than GROUP_SECONDS still groups its queued
    # pages: it committed long ago, but got the lock just now.
    one = attach(archive, "w1")
    one.more_queued = lambda: True
    one._last_commit = time.monotonic() - 10 * shared_writer.GROUP_SECONDS
    one.begin()
    one.dirty = 1
    one.maybe_commit()
    assert one.conn.in_transaction
    one._locked_at -= 10 * shared_writer.GROUP_SECONDS  # the group has grown old
    one.maybe_commit()
    assert not one.conn.in_transaction
    one.detach()


def test_the_reactors_commit_does_not_wait_for_the_archive_thread(archive: Path) -> None:
    one = attach(archive, "w1")
    one.begin()
    held = threading.Event()
    done = threading.Event()

    def archive_thread() -> None:
        with one.mutex:
            held.set()
            done.wait(5)

    thread = threading.Thread(target=archive_thread)
    thread.start()
    held.wait(5)
    one.commit_unless_busy()  # returns at once: the archive thread commits after its write
    assert one.conn.in_transaction
    done.set()
    thread.join()
    one.commit_unless_busy()
    assert not one.conn.in_transaction
    one.detach()
