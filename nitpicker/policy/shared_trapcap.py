"""SharedTrapCap: the trap cap of one worker of ``--workers N``, counting with all the others.

The policy is :class:`~nitpicker.policy.trapcap.TrapCap`'s (signals, thresholds, ``is_trap``);
the counts are not this worker's but every worker's together, kept by an injected
:class:`SharedCounts` (the archive layer's
:class:`~nitpicker.archive.trap_counts.TrapCounts`). A signature is capped once, whichever worker
sees the page that reaches its threshold; that worker's verdict is the one that ``fired`` (and
records the trap event), and every worker caps the signature's links from then on. The memory
layers of the single-process cap (age window, buckets, LRU) do not apply: the counts live in the
shared file, not in memory; only the capped signatures are kept here.
"""

from __future__ import annotations

from typing import Any, Protocol

from nitpicker.policy.signature import page_signature
from nitpicker.policy.trapcap import TrapCap, TrapMeta, Verdict

__all__ = ["SharedCounts", "SharedTrapCap"]


class SharedCounts(Protocol):
    """Page counts per signature that several processes add to."""

    def count(self, signature: str, url: str) -> tuple[int, bool, str]:
        """One more page: (the count of all, capped already, the first page's URL)."""
        ...

    def fire(self, signature: str) -> bool:
        """Cap the signature; ``True`` for the one caller that capped it."""
        ...


class SharedTrapCap(TrapCap):
    """Counts pages per meta signature across workers; caps each trap once."""

    def __init__(self, cap: int, counts: SharedCounts, **kwargs: Any) -> None:
        super().__init__(cap, **kwargs)
        self.counts = counts

    def observe(self, url: str, meta: TrapMeta) -> Verdict | None:
        signature = page_signature(url, meta)
        if signature is None:
            return None
        self.observed += 1
        if self.is_capped(signature):
            return Verdict(signature, url, capped=True, fired=False, count=None, threshold=None)
        count, capped, first_url = self.counts.count(signature, url)
        if capped:  # another worker capped it
            self.immunise(signature)
            return Verdict(signature, url, capped=True, fired=False, count=None, threshold=None)
        threshold = None
        if count >= self.min_threshold():
            threshold = self.threshold(self.signals(url, meta))
        if threshold is not None and self.is_trap(count, threshold):
            fired = self.counts.fire(signature)
            self.immunise(signature)
            self.fired += fired
            return Verdict(signature, url, capped=True, fired=fired, count=count,
                           threshold=threshold, first_url=first_url)
        return Verdict(signature, url, capped=False, fired=False, count=count,
                       threshold=threshold)
