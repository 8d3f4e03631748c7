"""``nitpicker query FILE match-urls --urls FILE`` (``nitpicker/query/url_match.py``): each
listed URL matched against the archive, as listed or normalised, the unmatched ones listed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nitpicker.query import match_urls, open_archive, url_match
from tests.helpers import run


@pytest.fixture(scope="module")
def crawled(site: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    directory = tmp_path_factory.mktemp("match-urls")
    done = run("crawl", site.url("/redirect/"), "--retry", "0", "-o", "site", "--silent",
               cwd=directory)
    assert done.returncode == 0, done.stderr
    return directory / "site.nitpicker", site.url("/redirect/")


def _query(archive: Path, lines: list[str], *flags: str) -> tuple[int, Any, str]:
    urls = archive.parent / "urls.txt"
    urls.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = run("query", archive.name, "match-urls", "--urls", "urls.txt", *flags,
               cwd=archive.parent)
    return done.returncode, json.loads(done.stdout) if done.stdout else None, done.stderr


def test_each_url_is_matched_as_listed_or_normalised(crawled: tuple[Path, str]) -> None:
    archive, base = crawled
    assert "//localhost:" in base
    shouting = base.replace("localhost", "LOCALHOST") + "dest"
    lines = ["# CMS export", base + "dest", "", shouting, base + "start", base + "gone",
             "not a url", base + "dest  # again", "ftp://example.com/"]
    code, answer, err = _query(archive, lines)
    assert code == 0, err
    by_url = {item["url"]: item for item in answer["items"]}
    assert list(by_url) == [base + "dest", shouting, base + "start", base + "gone",
                            "not a url", "ftp://example.com/"]
    assert answer["listed"] == answer["total"] == 6
    assert (answer["matched"], answer["unmatched"]) == (3, 3)
    dest = by_url[base + "dest"]
    assert dest["matched"] and dest["match"] == "exact" and dest["status"] == 200
    assert dest["archived_url"] == base + "dest" and isinstance(dest["page_id"], int)
    assert dest["content_type"] == "text/html" and dest["redirect_to"] is None
    assert by_url[shouting]["match"] == "normalized"
    assert by_url[shouting]["normalized"] == base + "dest"
    assert by_url[shouting]["page_id"] == dest["page_id"]
    start = by_url[base + "start"]
    assert start["status"] == 301 and start["redirect_to"] == base + "dest"
    for missing in (base + "gone", "not a url", "ftp://example.com/"):
        item = by_url[missing]
        assert not item["matched"] and item["match"] is None and item["page_id"] is None
    assert by_url[base + "gone"]["normalized"] == base + "gone"
    assert by_url["not a url"]["normalized"] is None


def test_unmatched_only_and_paging(crawled: tuple[Path, str]) -> None:
    archive, base = crawled
    lines = [base + "dest", base + "gone-1", base + "start", base + "gone-2", base + "gone-3"]
    code, answer, err = _query(archive, lines, "--unmatched-only", "--limit", "2",
                               "--offset", "1")
    assert code == 0, err
    assert [item["url"] for item in answer["items"]] == [base + "gone-2", base + "gone-3"]
    assert (answer["total"], answer["listed"], answer["matched"], answer["unmatched"],
            answer["offset"], answer["limit"]) == (3, 5, 2, 3, 1, 2)


@pytest.mark.parametrize(("args", "message"), [
    (("--urls", "absent.txt"), ("Error: Cannot read --urls file: absent.txt (No such file or "
                               "directory)")),
    (("--urls", "empty.txt"), "Error: No URLs found in --urls file: empty.txt"),
    (("--urls", "/dev/zero"), ("Error: --urls file /dev/zero, line 1: longer than 16,384 bytes "
                              "(the longest line a URL file may have)")),
    (("--urls", "empty.txt", "--url", "x"), ("Error: --url does not apply to the match-urls "
                                            "sub-command")),
    ((), "Error: --urls is required for the match-urls sub-command"),
    (("--urls", "one.txt", "--limit", "-1"), ("Error: Invalid --limit: -1. Must be between 0 "
                                             "and 9223372036854775807")),
])
def test_bad_input_is_one_line(crawled: tuple[Path, str], args: tuple[str, ...],
                               message: str) -> None:
    archive, base = crawled
    (archive.parent / "empty.txt").write_text("# nothing\n\n")
    (archive.parent / "one.txt").write_text(base + "\n")
    done = run("query", archive.name, "match-urls", *args, cwd=archive.parent)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [message] and not done.stdout


def test_the_library_batches_the_lookups(crawled: tuple[Path, str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    archive, base = crawled
    monkeypatch.setattr(url_match, "_BATCH", 2)
    listed = [base + name for name in ("", "start", "gone", "dest", "middle")]
    conn = open_archive(archive)
    try:
        answer = match_urls(conn, listed)
        with pytest.raises(ValueError, match="Invalid offset"):
            match_urls(conn, listed, offset=-1)
    finally:
        conn.close()
    assert [item["matched"] for item in answer["items"]] == [True, True, False, True, True]
