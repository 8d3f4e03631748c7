"""nitpicker.archive.run_log: run rows, lost runs and the trap cap's events in a real archive."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from nitpicker.archive import ArchiveWriter
from tests.helpers import writer_config


def _runs(path: Path) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            "SELECT id, kind, pid, status, stop_reason, pages_done, errors, error_code,"
            " error_detail, phase, ended_at IS NOT NULL FROM runs ORDER BY id").fetchall()
    finally:
        conn.close()



def test_start_and_end_are_committed_at_once(tmp_path: Path, writer: ArchiveWriter) -> None:
    path = Path(writer_config(tmp_path).output)
    run_id = writer.runs.start("crawl")
    assert run_id == writer.runs.run_id == 1
    # Another connection sees the row: it does not wait for the batch.
    assert _runs(path) == [(1, "crawl", os.getpid(), "running", None, 0, 0, None, None, None, 0)]
    writer.runs.end("failed", "failed", 7, 2, "disk_full", "database or disk is full", "crawl")
    assert _runs(path) == [(1, "crawl", os.getpid(), "failed", "failed", 7, 2, "disk_full",
                            "database or disk is full", "crawl", 1)]


@pytest.mark.integration  # starts a process
def test_mark_lost_fails_the_runs_of_dead_processes_only(
    tmp_path: Path, writer: ArchiveWriter
) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    alive = subprocess.Popen(["sleep", "60"])
    try:
        writer.conn.executemany(
            "INSERT INTO runs(kind, pid, started_at, status) VALUES ('crawl', ?, 't', 'running')",
            [(gone.pid,), (alive.pid,), (os.getpid(),)],
        )
        assert writer.runs.mark_lost() == 1
        assert writer.runs.mark_lost() == 0  # already marked
    finally:
        alive.kill()
        alive.wait()
    rows = writer.conn.execute(
        "SELECT pid, status, error_code, ended_at IS NOT NULL FROM runs ORDER BY id").fetchall()
    assert rows == [(gone.pid, "failed", "instance_lost", 1), (alive.pid, "running", None, 0),
                    (os.getpid(), "running", None, 0)]


def test_trap_events_belong_to_the_run_and_its_batch(writer: ArchiveWriter) -> None:
    writer.runs.start("crawl")
    writer.runs.record_trap_event("sig-a", "/list", 3, "http://example.com/list/1",
                                  "http://example.com/list/3")
    assert writer.conn.in_transaction  # written with the page that fired it
    writer.commit()
    row = writer.conn.execute(
        "SELECT run_id, signature, parent_path, count, first_url, last_url FROM trap_events"
    ).fetchone()
    assert row == (1, "sig-a", "/list", 3, "http://example.com/list/1",
                   "http://example.com/list/3")


def test_capped_signatures_of_every_run_each_once_in_firing_order(
    tmp_path: Path, writer: ArchiveWriter
) -> None:
    assert writer.runs.capped_signatures() == []
    writer.runs.start("crawl")
    for signature in ("sig-b", "sig-a", "sig-b"):  # a signature may fire in two runs
        writer.runs.record_trap_event(signature, "/p", 3, "http://example.com/p/1",
                                      "http://example.com/p/3")
    writer.runs.end("stopped", "shutdown", 3, 0)
    writer.close()

    again = ArchiveWriter.reopen(Path(writer_config(tmp_path).output))
    try:
        again.runs.start("resume")
        again.runs.record_trap_event("sig-c", "/q", 3, "http://example.com/q/1",
                                     "http://example.com/q/3")
        assert again.runs.capped_signatures() == ["sig-b", "sig-a", "sig-c"]
    finally:
        again.close()
