"""ArchiveWorker: write jobs run in order on their own thread; the first failure stops them."""

from __future__ import annotations

import os
import sys
import threading
import time

import pytest

from nitpicker.archive.worker import ArchiveWorker, yield_to_archive_thread


def test_jobs_run_in_order_on_another_thread_and_drain_waits_for_them() -> None:
    done: list[tuple[int, int]] = []
    errors: list[BaseException] = []
    worker = ArchiveWorker(errors.append)

    def job(n: int) -> None:
        time.sleep(0.001 if n % 7 else 0.01)
        done.append((n, threading.get_ident()))

    for n in range(50):
        worker.submit(job, n)
    assert worker.busy or len(done) == 50
    worker.drain()
    assert not worker.busy
    assert [n for n, _ in done] == list(range(50))
    assert {ident for _, ident in done} != {threading.get_ident()}
    worker.stop()
    assert errors == []


def test_a_failed_job_stops_the_later_ones_and_is_reported_once() -> None:
    ran: list[int] = []
    errors: list[BaseException] = []
    worker = ArchiveWorker(errors.append)

    def job(n: int) -> None:
        if n == 3:
            raise OSError("disk full")
        ran.append(n)

    for n in range(10):
        worker.submit(job, n)
    worker.drain()
    worker.submit(job, 99)  # after the failure: dropped
    worker.stop()
    assert ran == [0, 1, 2]
    assert len(errors) == 1 and str(errors[0]) == "disk full"
    assert worker.error is errors[0]


def test_a_full_queue_makes_submit_wait_instead_of_growing() -> None:
    gate = threading.Event()
    worker = ArchiveWorker(lambda exc: None, queue_size=2)
    worker.submit(gate.wait)  # taken by the thread, which then blocks
    time.sleep(0.05)
    worker.submit(lambda: None)
    worker.submit(lambda: None)  # the queue is full now
    third = threading.Thread(target=worker.submit, args=(lambda: None,))
    third.start()
    third.join(timeout=0.2)
    assert third.is_alive(), "submit returned although the queue was full"
    gate.set()
    third.join(timeout=5)
    assert not third.is_alive()
    worker.stop()
    assert not worker.busy


def test_a_full_queue_waits_until_half_of_it_has_run() -> None:
    """Not one job: the writer then runs in longer stretches between the reactor's."""
    gates = [threading.Event() for _ in range(5)]
    worker = ArchiveWorker(lambda exc: None, queue_size=4)
    worker.submit(gates[0].wait)  # taken by the thread, which then blocks
    time.sleep(0.05)
    for gate in gates[1:]:
        worker.submit(gate.wait)  # the queue is full now
    fifth = threading.Thread(target=worker.submit, args=(lambda: None,))
    fifth.start()
    gates[0].set()  # one job ran, the next runs: 3 queued, more than half of 4
    fifth.join(timeout=0.3)
    assert fifth.is_alive(), "submit returned as soon as one slot was free"
    gates[1].set()  # 2 queued: half
    fifth.join(timeout=5)
    assert not fifth.is_alive()
    for gate in gates:
        gate.set()
    worker.stop()
    assert worker.finished == worker.submitted == 6


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a nice value per thread: Linux")
def test_the_reactor_thread_yields_to_the_archive_thread_only() -> None:
    # Run in a thread of its own (the "reactor"), so that the test's own thread keeps its
    # priority; the "archive" thread was started before, as a worker's is.
    def niceness(tid: int) -> int:
        return os.getpriority(os.PRIO_PROCESS, tid)

    started = threading.Event()
    finish = threading.Event()
    tids: dict[str, int] = {}

    def archive() -> None:
        tids["archive"] = threading.get_native_id()
        started.set()
        finish.wait(10)

    def reactor() -> None:
        tids["before"] = niceness(threading.get_native_id())
        yield_to_archive_thread(3)
        tids["reactor"] = niceness(threading.get_native_id())
        tids["archive_after"] = niceness(tids["archive"])

    base = niceness(threading.get_native_id())
    archive_thread = threading.Thread(target=archive)
    archive_thread.start()
    started.wait(10)
    reactor_thread = threading.Thread(target=reactor)
    reactor_thread.start()
    reactor_thread.join()
    finish.set()
    archive_thread.join()
    assert tids["reactor"] == min(tids["before"] + 3, 19)
    assert tids["archive_after"] == base
    assert niceness(threading.get_native_id()) == base
