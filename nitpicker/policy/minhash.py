"""Near-duplicate content: a page's main text as a content hash and a MinHash signature, and the
banding that finds the pages whose signatures are alike (issue 30, item 3).

- **Tokens**: the text lower-cased; a run of letters or digits is a token, and so is each
  character of a script written without spaces (Han, kana), as ``main-contents`` counts words.
- **Shingles**: each run of :data:`SHINGLE` tokens (a text shorter than that: itself), hashed
  to 64 bits: each token's UTF-8 (its first 24 bytes) mixed by SplitMix64's finaliser, in
  numpy, the three combined and mixed again. The same on every machine and every run, unlike
  Python's ``hash``.
- **Signature**: one-permutation MinHash (Li, Owen, Zhang 2012) with densification
  (Shrivastava 2017): a shingle's low 7 bits choose one of :data:`PERMUTATIONS` bins, its high
  32 bits compete for the bin's minimum; an empty bin borrows its next filled bin's value,
  re-mixed by the distance. Two signatures agree at a position with (about) the probability
  that is the Jaccard similarity of the two shingle sets: the share of agreeing positions
  estimates it. One hash a shingle, not 128: a page's signature costs about a tenth of a
  millisecond. Stored as ``PERMUTATIONS × uint32`` little-endian bytes (512 bytes a page).
- **Content hash**: 64 bits of BLAKE2b over the normalised text (exact duplicates).
- **Banding** (LSH): the signature cut into ``bands`` bands of ``rows`` positions; pages that
  share one band's values are candidates, then kept when their estimated similarity reaches the
  threshold. :func:`band_shape` picks the most selective shape that still finds a pair at the
  threshold with probability ≥ 0.995.

Written here over numpy (a dependency already) rather than taken from datasketch: the
signature is a few lines of array code, and the archive, not a library object, holds it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from nitpicker.policy.near_duplicate import PERMUTATIONS

__all__ = [
    "SHINGLE",
    "ContentFingerprint",
    "band_keys",
    "band_shape",
    "fingerprint",
    "tokens",
]

SHINGLE: Final = 3
"""Tokens per shingle."""

_SEED_OFFSET: Final = np.uint64(0x9E3779B97F4A7C15)
"""What a densified bin adds per bin it borrows across (the golden ratio's 64 bits)."""
_P1: Final = np.uint64(0x100000001B3)
_P2: Final = np.uint64(0xC2B2AE3D27D4EB4F)
_EMPTY: Final = np.uint64(1 << 32)
_TOKEN_BYTES: Final = 24
"""Bytes of a token that count (a longer one is the same token as another that begins with
the same 24 bytes: rare in prose, and a near-duplicate estimate is no worse for it)."""
_BINS: Final = np.arange(PERMUTATIONS, dtype=np.int64)

_CJK: Final = ("\u3005\u3007\u3041-\u3096\u309d\u309e\u30a1-\u30fa\u30fc-\u30fe\u3400-\u4dbf"
               "\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9d\U00020000-\U0003134f")
_TOKEN: Final = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]+")
_ASCII: Final = bytes(c + 32 if 65 <= c <= 90 else c if 48 <= c <= 57 or 97 <= c <= 122
                      else 32 for c in range(256))
"""Letters lower-cased, digits kept, anything else a space: ASCII text's tokens in one
``bytes.translate`` (the regular expression gives the same tokens, many times slower)."""


def _tokens(text: str) -> list[bytes]:
    if text.isascii():
        return text.encode("ascii").translate(_ASCII).split()
    return [word.encode("utf-8", "surrogatepass") for word in _TOKEN.findall(text.lower())]


def tokens(text: str) -> list[str]:
    """The text's tokens, lower-cased."""
    return [word.decode("utf-8", "surrogatepass") for word in _tokens(text)]


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
    words = _tokens(text)
    if not words:
        return ContentFingerprint(0, None, None)
    digest = hashlib.blake2b(b" ".join(words), digest_size=8)
    return ContentFingerprint(len(words), int.from_bytes(digest.digest(), "big", signed=True),
                              _signature(words))


def _mix(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """SplitMix64's finaliser: every bit of the result depends on every bit of ``x``."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _shingles(words: list[bytes]) -> npt.NDArray[np.uint64]:
    """Each run of :data:`SHINGLE` tokens hashed to 64 bits (a shorter text: one shingle): a
    token is its first :data:`_TOKEN_BYTES` bytes, mixed as three 64-bit words."""
    if len(words) < SHINGLE:
        words = [*words, *([b""] * (SHINGLE - len(words)))]
    padded = np.frombuffer(np.array(words, dtype=f"S{_TOKEN_BYTES}").tobytes(), dtype="<u8")
    lanes = padded.reshape(len(words), _TOKEN_BYTES // 8)
    hashed = _mix(_mix(_mix(lanes[:, 0]) ^ lanes[:, 1]) ^ lanes[:, 2])
    grams = hashed[:-2] * _P1 + hashed[1:-1] * _P2 + hashed[2:]  # wraps mod 2**64
    return _mix(grams)


def _signature(words: list[bytes]) -> bytes:
    """One-permutation MinHash: each shingle's hash picks a bin (its low 7 bits) and competes
    with its high 32 bits for the bin's minimum; an empty bin borrows the next filled bin's
    value (to the right, around), shifted by how far it borrowed ("densification"), so two
    texts' signatures agree at a position with the probability of their Jaccard
    similarity."""
    hashed = _shingles(words)
    lowest = np.full(PERMUTATIONS, _EMPTY, dtype=np.uint64)
    np.minimum.at(lowest, (hashed & np.uint64(PERMUTATIONS - 1)).astype(np.intp),
                  hashed >> np.uint64(32))
    filled = np.flatnonzero(lowest != _EMPTY)
    if len(filled) < PERMUTATIONS:
        source = filled[np.searchsorted(filled, _BINS) % len(filled)]
        distance = ((source - _BINS) % PERMUTATIONS).astype(np.uint64)
        lowest = (_mix(lowest[source] + distance * _SEED_OFFSET) >> np.uint64(32)) * (
            distance > 0) + lowest * (distance == 0)
    return lowest.astype("<u4").tobytes()


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
