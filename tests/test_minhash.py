"""Content hashes, MinHash signatures and banding (``nitpicker/policy/minhash.py``)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from nitpicker.policy.minhash import band_keys, band_shape, fingerprint, tokens
from nitpicker.policy.near_duplicate import PERMUTATIONS, check_threshold, similarity


def _text(seed: int, words: int = 400) -> list[str]:
    chooser = random.Random(seed)
    return [f"w{chooser.randrange(5000)}" for _ in range(words)]


def _jaccard(first: list[str], second: list[str]) -> float:
    def grams(words: list[str]) -> set[tuple[str, ...]]:
        return {tuple(words[i:i + 3]) for i in range(len(words) - 2)}
    a, b = grams(first), grams(second)
    return len(a & b) / len(a | b)


@pytest.mark.parametrize(("text", "expected"), [
    ("Hello, World!", ["hello", "world"]),
    ("snake_case and kebab-case", ["snake", "case", "and", "kebab", "case"]),
    ("日本語のテキスト text", ["日", "本", "語", "の", "テ", "キ", "ス", "ト", "text"]),
    ("", []),
])
def test_tokens(text: str, expected: list[str]) -> None:
    assert tokens(text) == expected


def test_the_fingerprint_is_the_same_on_every_run() -> None:
    """Fixed values: a change of the hash functions would make an archive's signatures
    incomparable with the next crawl's."""
    found = fingerprint("The quick brown fox jumps over the lazy dog")
    assert found.words == 9
    assert found.content_hash == fingerprint(
        "the QUICK brown fox, jumps over the lazy dog.").content_hash
    assert found.minhash is not None and len(found.minhash) == PERMUTATIONS * 4
    assert np.frombuffer(found.minhash, dtype="<u4")[:3].tolist() == [
        2211608041, 1878750387, 3191874802]
    assert fingerprint("  ,. ") == fingerprint("")
    assert fingerprint("").content_hash is None


@pytest.mark.parametrize("changed", [1, 10, 60, 200])
def test_the_signatures_estimate_the_jaccard_similarity(changed: int) -> None:
    first = _text(1)
    second = first[:]
    for position in random.Random(changed).sample(range(len(first)), changed):
        second[position] = "other"
    a, b = fingerprint(" ".join(first)).minhash, fingerprint(" ".join(second)).minhash
    assert a is not None and b is not None
    assert similarity(a, b) == pytest.approx(_jaccard(first, second), abs=0.12)


def test_a_long_text_is_signed_in_chunks_like_a_short_one() -> None:
    words = _text(2, 12_000)
    whole = fingerprint(" ".join(words)).minhash
    assert whole is not None
    assert similarity(whole, whole) == 1.0
    assert similarity(whole, fingerprint(" ".join(words[:6000])).minhash or b"") > 0.3


@pytest.mark.parametrize(("threshold", "shape"), [(0.9, (14, 9)), (0.7, (32, 4)),
                                                  (0.5, (42, 3)), (1.0, (2, 64))])
def test_band_shape(threshold: float, shape: tuple[int, int]) -> None:
    assert band_shape(threshold) == shape


@pytest.mark.parametrize("value", [0.0, -0.5, 1.01, float("nan")])
def test_check_threshold_refuses(value: float) -> None:
    with pytest.raises(ValueError, match="^--x must be above 0 and at most 1, got "):
        check_threshold(value, "--x")


def test_band_keys_meet_only_for_equal_bands() -> None:
    signatures = np.zeros((3, PERMUTATIONS), dtype=np.uint32)
    signatures[1, :] = 0
    signatures[1, 9] = 7  # band 1 of (14, 9) differs
    signatures[2, :] = 1
    keys = band_keys(signatures, 14, 9)
    assert keys.shape == (3, 14)
    assert keys[0, 0] == keys[1, 0] and keys[0, 1] != keys[1, 1]
    assert not set(keys[2].tolist()) & set(keys[0].tolist())
    assert len(set(keys[0].tolist())) == 14  # each band its own key
