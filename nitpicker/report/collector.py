"""The cycle collector while a report is written: run less often, over fewer objects.

A report turns every row into a few new containers (the row SQLite answers, its values, its
marks) and frees them a chunk later. At Python's default thresholds that is a young-generation
collection every 700 of them and a full one every hundred of those, each full one walking every
object the process holds: the ~50,000 modules, classes and functions imported before the first
row, and the chunks still waiting to be sent. A Sheets report of 100,000 pages ran 5,273
collections, 1.4–1.7 s of its CPU (timed by ``gc.callbacks``).

While the report is written, the objects alive before it are frozen out of the collector's
reach (``gc.freeze``: they outlive the report anyway) and a young collection waits for 100,000
containers more than have been freed. The rows make few reference cycles, and a chunk's
containers are freed with the chunk, so the count rarely gets there (119 collections in the
whole process at 100,000 pages, start-up included: 0.05 s): memory is what the chunks hold,
as before.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["REPORT_THRESHOLDS", "collecting_less"]

REPORT_THRESHOLDS: Final = (100_000, 50, 100)
"""``gc.set_threshold`` while a report is written (Python's default: 700, 10, 10)."""


@contextmanager
def collecting_less() -> Iterator[None]:
    """Collect with :data:`REPORT_THRESHOLDS`, the objects alive on entry frozen; on exit the
    thresholds as they were and those objects collectable again."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*REPORT_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
