"""A stored snapshot read back (nitpicker/query/snapshot_encoding.py): what a crawl writes now
(Zstandard), what earlier crawls wrote (zlib), and plain UTF-8; a corrupt blob raises one of
``DecodeError``."""

from __future__ import annotations

import zlib

import pytest

from nitpicker.archive import snapshots
from nitpicker.query.snapshot_encoding import DecodeError, decode

HTML = "<!doctype html><title>Ünïcode page</title>" + "<p>words</p>" * 200


def test_what_a_crawl_stores_is_zstandard_and_reads_back() -> None:
    blob = snapshots.compress(HTML)
    assert snapshots.ENCODING == "zstd"
    assert blob.startswith(b"\x28\xb5\x2f\xfd"), "a Zstandard frame"
    assert len(blob) < len(HTML.encode()) // 4
    assert decode(snapshots.ENCODING, blob).decode() == HTML


def test_earlier_zlib_and_plain_snapshots_read_back() -> None:
    data = HTML.encode()
    assert decode("zlib", zlib.compress(data, 1)) == data
    assert decode("identity", data) == data


@pytest.mark.parametrize("encoding", ["zstd", "zlib"])
def test_a_corrupt_blob_raises_a_decode_error(encoding: str) -> None:
    with pytest.raises(DecodeError):
        decode(encoding, b"\x28\xb5\x2f\xfd not really compressed")
