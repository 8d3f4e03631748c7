"""nitpicker.policy.shared_trapcap with nitpicker.archive.trap_counts: the trap cap of
``--workers N``, each worker's cap counting in one shared file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nitpicker.archive.trap_counts import TrapCounts
from nitpicker.policy.extract import PageMeta
from nitpicker.policy.shared_trapcap import SharedTrapCap

if TYPE_CHECKING:
    from pathlib import Path

HOST = "https://example.com"
CAP = 10


def trap_meta() -> PageMeta:
    """A page of a calendar trap: one title, og:url naming the parent list (threshold 3)."""
    return PageMeta(title="Archive", og_title="Archive", og_url=f"{HOST}/list/date/")


def test_two_workers_count_together_and_the_trap_fires_once(tmp_path: Path) -> None:
    path = tmp_path / "trap_counts.sqlite"
    one, two = SharedTrapCap(CAP, TrapCounts(path)), SharedTrapCap(CAP, TrapCounts(path))
    first = one.observe(f"{HOST}/list/date/2024/", trap_meta())
    second = two.observe(f"{HOST}/list/date/2025/", trap_meta())
    assert first is not None and second is not None
    assert (first.count, second.count) == (1, 2)  # one count for both workers
    assert not first.capped and not second.capped
    third = one.observe(f"{HOST}/list/date/2026/", trap_meta())  # ceil(0.3 × 10) = 3
    assert third is not None and third.capped and third.fired
    assert third.first_url == f"{HOST}/list/date/2024/"
    # The other worker never fires it again: it learns the signature is capped.
    later = two.observe(f"{HOST}/list/date/2027/", trap_meta())
    assert later is not None and later.capped and not later.fired
    assert two.is_capped(later.signature)
    assert one.fired + two.fired == 1


def test_two_workers_reaching_the_threshold_together_fire_once(tmp_path: Path) -> None:
    path = tmp_path / "trap_counts.sqlite"
    one, two = SharedTrapCap(CAP, TrapCounts(path)), SharedTrapCap(CAP, TrapCounts(path))
    one.observe(f"{HOST}/list/date/1/", trap_meta())
    one.observe(f"{HOST}/list/date/2/", trap_meta())
    verdicts = [cap.observe(f"{HOST}/list/date/{n}/", trap_meta()) for n, cap in ((3, one), (4, two))]
    assert [(v.capped, v.fired) for v in verdicts if v is not None] == [(True, True), (True, False)]
    assert verdicts[0] is not None
    assert TrapCounts(path).fire(verdicts[0].signature) is False  # nobody fires it again
