"""What near duplicates are, without the arithmetic that finds them: the signature's size, the
similarity threshold, and two signatures compared.

Kept apart from :mod:`nitpicker.policy.minhash` (the signatures themselves, over numpy) so
that what a crawl, the query library and the site checks need of it imports no numpy: the
crawl signs its pages in a child process (:mod:`nitpicker.archive.content_signer`) and starts
~12 MB smaller for it.
"""

from __future__ import annotations

from operator import eq
from typing import Final

__all__ = ["NEAR_DUPLICATE_THRESHOLD", "PERMUTATIONS", "check_threshold", "similarity"]

PERMUTATIONS: Final = 128
"""Positions of a signature (32 bits each, little-endian: 512 bytes)."""
NEAR_DUPLICATE_THRESHOLD: Final = 0.9
"""The estimated Jaccard similarity from which two pages' main contents are near duplicates."""


def similarity(first: bytes, second: bytes) -> float:
    """The estimated Jaccard similarity of two signatures' texts: the share of positions at
    which they agree."""
    agreeing: int = sum(map(eq, memoryview(first).cast("I"), memoryview(second).cast("I")))
    return agreeing / PERMUTATIONS


def check_threshold(value: float, name: str) -> float:
    """``value`` as a similarity threshold; ``ValueError`` naming ``name`` (the setting or
    option it came from) unless it is above 0 and at most 1."""
    if not 0 < value <= 1:  # NaN too
        raise ValueError(f"{name} must be above 0 and at most 1, got {value}")
    return float(value)
