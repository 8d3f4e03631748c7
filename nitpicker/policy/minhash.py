"""Near-duplicate content: a page's main text as a content hash and a MinHash signature, and the
banding that finds the pages whose signatures are alike (issue 30, item 3).

- **Tokens**: the text lower-cased; a run of letters or digits is a token, and so is each
  character of a script written without spaces (Han, kana), as ``main-contents`` counts words.
- **Shingles**: each run of :data:`SHINGLE` tokens (a text shorter than that: itself), hashed
  to 32 bits (CRC-32 of the tokens' UTF-8, joined by a space: the same on every machine and
  every run, unlike Python's ``hash``).
- **Signature**: :data:`PERMUTATIONS` minima, one per hash function ``h(x) = (a·x + b) mod
  2⁶⁴ >> 32`` (multiply-shift, ``a`` odd), the functions' ``a`` and ``b`` drawn once from a
  fixed seed. Two signatures agree at a position with the probability that is the Jaccard
  similarity of the two shingle sets: the share of agreeing positions estimates it. Stored as
  ``PERMUTATIONS × uint32`` little-endian bytes (512 bytes a page).
- **Content hash**: 64 bits of BLAKE2b over the normalised text (exact duplicates).
- **Banding** (LSH): the signature cut into ``bands`` bands of ``rows`` positions; pages that
  share one band's values are candidates, then kept when their estimated similarity reaches the
  threshold. :func:`band_shape` picks the most selective shape that still finds a pair at the
  threshold with probability ≥ 0.995.

Written here over numpy (a dependency already) rather than taken from datasketch: the
signature is a dozen lines of array code, and the archive, not a library object, holds it.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

__all__ = [
    "NEAR_DUPLICATE_THRESHOLD",
    "PERMUTATIONS",
    "SHINGLE",
    "ContentFingerprint",
    "band_keys",
    "band_shape",
    "check_threshold",
    "fingerprint",
    "similarity",
    "tokens",
]

PERMUTATIONS: Final = 128
NEAR_DUPLICATE_THRESHOLD: Final = 0.9
"""The estimated Jaccard similarity from which two pages' main contents are near duplicates."""
SHINGLE: Final = 3
"""Tokens per shingle."""
_CHUNK: Final = 4096
"""Shingles hashed at once (a long page's matrix stays small)."""

_rng = np.random.default_rng(0x6E69747069636B)  # a fixed seed: signatures compare across runs
_A: Final = (_rng.integers(0, 2**63, PERMUTATIONS, dtype=np.uint64) * np.uint64(2)
             + np.uint64(1))[:, None]
_B: Final = _rng.integers(0, 2**63, PERMUTATIONS, dtype=np.uint64)[:, None]

_TOKEN: Final = re.compile(
    "[\u3005\u3007\u3041-\u3096\u309d\u309e\u30a1-\u30fa\u30fc-\u30fe\u3400-\u4dbf"
    "\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9d\U00020000-\U0003134f]"
    "|[^\\W_\u3005\u3007\u3041-\u3096\u309d\u309e\u30a1-\u30fa\u30fc-\u30fe\u3400-\u4dbf"
    "\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9d\U00020000-\U0003134f]+")


def tokens(text: str) -> list[str]:
    """The text's tokens, lower-cased."""
    return _TOKEN.findall(text.lower())


@dataclass(frozen=True, slots=True)
class ContentFingerprint:
    """A text's tokens counted, its content hash and its signature."""

    words: int
    content_hash: int | None
    """A signed 64-bit hash of the tokens (``None``: no token): two texts that differ only in
    case, punctuation or spacing hash alike."""
    minhash: bytes | None
    """:data:`PERMUTATIONS` × uint32 little-endian (``None``: no token)."""


def fingerprint(text: str) -> ContentFingerprint:
    """The text's :class:`ContentFingerprint` (one tokenisation for all three)."""
    words = tokens(text)
    if not words:
        return ContentFingerprint(0, None, None)
    digest = hashlib.blake2b(" ".join(words).encode("utf-8", "surrogatepass"), digest_size=8)
    return ContentFingerprint(len(words), int.from_bytes(digest.digest(), "big", signed=True),
                              _signature(words))


def _shingles(words: list[str]) -> npt.NDArray[np.uint64]:
    if len(words) <= SHINGLE:
        grams = [" ".join(words)]
    else:
        grams = [" ".join(words[i:i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)]
    hashes = [zlib.crc32(gram.encode("utf-8", "surrogatepass")) for gram in grams]
    return np.unique(np.array(hashes, dtype=np.uint64))


def _signature(words: list[str]) -> bytes:
    shingles = _shingles(words)
    lowest = np.full(PERMUTATIONS, np.iinfo(np.uint32).max, dtype=np.uint64)
    for start in range(0, len(shingles), _CHUNK):
        chunk = shingles[None, start:start + _CHUNK]
        hashed = (_A * chunk + _B) >> np.uint64(32)  # wraps mod 2**64: multiply-shift
        np.minimum(lowest, hashed.min(axis=1), out=lowest)
    return lowest.astype("<u4").tobytes()


def similarity(first: bytes, second: bytes) -> float:
    """The estimated Jaccard similarity of two signatures' texts: the share of positions at
    which they agree."""
    a = np.frombuffer(first, dtype="<u4")
    b = np.frombuffer(second, dtype="<u4")
    return float(np.count_nonzero(a == b)) / PERMUTATIONS


def check_threshold(value: float, name: str) -> float:
    """``value`` as a similarity threshold; ``ValueError`` naming ``name`` (the setting or
    option it came from) unless it is above 0 and at most 1."""
    if not 0 < value <= 1:  # NaN too
        raise ValueError(f"{name} must be above 0 and at most 1, got {value}")
    return float(value)


def band_shape(threshold: float) -> tuple[int, int]:
    """``(bands, rows)`` for ``threshold``: the most rows a band (fewest chance pairs) such
    that a pair as similar as the threshold shares a band with probability ≥ 0.995."""
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    for rows in range(PERMUTATIONS // 2, 0, -1):
        bands = PERMUTATIONS // rows
        if 1 - (1 - threshold ** rows) ** bands >= 0.995:
            return bands, rows
    return PERMUTATIONS, 1


def band_keys(signatures: npt.NDArray[np.uint32], bands: int,
              rows: int) -> npt.NDArray[np.int64]:
    """One 64-bit key per band of each signature (``signatures``: pages × PERMUTATIONS):
    pages × bands, the band's number mixed in (two bands' keys never meet)."""
    pages = signatures.shape[0]
    cut = signatures[:, :bands * rows].astype(np.uint64).reshape(pages, bands, rows)
    key = np.full((pages, bands), 0xCBF29CE484222325, dtype=np.uint64)
    key ^= np.arange(bands, dtype=np.uint64)[None, :]
    prime = np.uint64(0x100000001B3)
    for column in range(rows):
        key = (key ^ cut[:, :, column]) * prime  # FNV-1a over the band's values
    return key.view(np.int64)
