"""ArchiveWorker: write jobs run in order on their own thread; the first failure stops them."""

from __future__ import annotations

import threading
import time

from nitpicker.archive.worker import ArchiveWorker


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
