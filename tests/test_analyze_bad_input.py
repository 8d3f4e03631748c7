"""``nitpicker analyze`` on archives and configs that are not what they should be: a snapshot
that cannot be read, a page nested deeper than lxml's default limit, a config that disables
every plugin or names one twice, a timeout that is not a number of seconds.

Each test runs the command in a subprocess on a copy of one crawl of ``/contents/`` (five
pages), altered with plain SQL where the test needs a page the fixture site does not have.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import pytest_twisted

from nitpicker.archive import snapshots
from tests.helpers import ROOT, crawl

if TYPE_CHECKING:
    from collections.abc import Iterator

    from fixtures.site import FixtureSite


@pytest_twisted.async_fixture(scope="module")
async def crawled(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    archive = await crawl(tmp_path_factory.mktemp("analyze-bad-input"), [site.url("/contents/")])
    archive.conn.close()
    return archive.path


@pytest.fixture
def archive(crawled: Path, tmp_path: Path) -> Path:
    """A fresh copy of the crawled archive, in the test's own directory (its cwd)."""
    copy = tmp_path / "site.nitpicker"
    shutil.copyfile(crawled, copy)
    return copy


def nitpicker(*args: str, cwd: Path, env: dict[str, str] | None = None,
              timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nitpicker.cli", *args], cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300", **(env or {})},
        capture_output=True, text=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL)


def fingerprint(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def replace_snapshot(archive: Path, path: str, html: bytes, encoding: str = "zlib") -> str:
    """Store ``html`` (as is: the caller compresses) as the snapshot of the page at ``path``;
    the page's URL."""
    conn = sqlite3.connect(archive)
    try:
        url, page_id = conn.execute("SELECT url, id FROM pages WHERE url LIKE ?",
                                    (f"%{path}",)).fetchone()
        conn.execute("UPDATE snapshots SET encoding = ?, html = ? WHERE page_id = ?",
                     (encoding, html, page_id))
        conn.commit()
    finally:
        conn.close()
    return str(url)


def rows(archive: Path, sql: str, *params: object) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(archive)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


# -- a snapshot that cannot be read ------------------------------------------------------------


@pytest.mark.parametrize(("encoding", "blob", "error"), [
    # a zlib header, then bytes that are no deflate stream
    ("zlib", b"\x78\x9c\x01\x02\x03\x04\x05", "zlib.error: Error -"),
    ("zlib", b"not compressed at all", "zlib.error: Error -"),
    ("zlib", zlib.compress(b"<html>cut short</html>")[:-6], "zlib.error: Error -"),  # truncated
    ("zstd", snapshots.compress("<html>cut short</html>")[:-6], "zstd.ZstdError: "),
], ids=["garbage", "plain", "truncated", "zstd-truncated"])
def test_a_corrupt_snapshot_is_that_pages_error_and_the_run_goes_on(
        archive: Path, encoding: str, blob: bytes, error: str) -> None:
    """The blob fails decompression: one page error for that page, recorded and counted in the
    summary; the four other pages are analysed, the command ends normally (exit 0, as for any
    page error)."""
    url = replace_snapshot(archive, "/contents/keywords", blob, encoding)
    done = nitpicker("analyze", str(archive), "--plugin", "main-contents", "--plugin", "search",
                     "--search-keywords", "nitpicker", cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "main-contents: 5 pages, 0 violations, 44 values, 1 errors" in done.stderr
    assert "search: 5 pages, 0 violations, 4 values, 1 errors" in done.stderr
    assert "2 page error(s)" in done.stderr
    errors = rows(archive, "SELECT plugin, url, message FROM plugin_errors ORDER BY plugin")
    assert [(plugin, page) for plugin, page, _ in errors] == [("main-contents", url),
                                                              ("search", url)]
    for _, _, message in errors:
        assert str(message).startswith("the snapshot cannot be read: ")
        assert error in str(message)
    assert rows(archive, "SELECT outcome, pages_done, errors FROM analysis_runs") == [
        ("finished", 5, 1), ("finished", 5, 1)]


# -- pages nested deeper than lxml's default limit (255 levels) ---------------------------------


def nested(depth: int, inner: str) -> bytes:
    html = ("<!doctype html><html lang='en'><head><title>Deep</title></head><body>"
            + "<div>" * depth + inner + "</div>" * depth + "</body></html>")
    return zlib.compress(html.encode())


def test_a_page_nested_400_deep_is_searched_and_its_main_content_found(archive: Path) -> None:
    """lxml's default parser drops everything past 255 levels, in silence: the keyword and the
    ``<main>`` inside 400 ``<div>`` would count 0 and "no main content"."""
    url = replace_snapshot(archive, "/contents/keywords", nested(
        400, "<main><h2>Deep</h2><p>nitpicker nitpicker nitpicker</p><img src=a.png alt=a></main>"))
    done = nitpicker("analyze", str(archive), "--plugin", "main-contents", "--plugin", "search",
                     "--search-keywords", "nitpicker", cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    values = {(plugin, key): value for plugin, key, value in rows(
        archive, "SELECT v.plugin, v.key, v.value FROM page_values v JOIN pages p"
                 " ON p.id = v.page_id WHERE p.url = ?", url)}
    assert values[("search", "keyword:nitpicker")] == "3"
    assert values[("main-contents", "element")] == '"main"'
    assert values[("main-contents", "headings")] == "1"
    assert values[("main-contents", "images")] == "1"
    assert rows(archive, "SELECT count(*) FROM plugin_errors") == [(0,)]


def test_a_page_nested_past_the_parsers_limit_is_a_page_error_saying_so(archive: Path) -> None:
    """Past 2,048 levels (libxml2's limit even for huge trees) the content is not parsed: a
    page error saying why, not 0 hits."""
    url = replace_snapshot(archive, "/contents/keywords", nested(3000, "<main>nitpicker</main>"))
    done = nitpicker("analyze", str(archive), "--plugin", "search", "--search-keywords",
                     "nitpicker", cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    assert "search: 5 pages, 0 violations, 4 values, 1 errors" in done.stderr
    assert rows(archive, "SELECT url, message FROM plugin_errors") == [(
        url, ("DocumentTooDeepError: the page is nested deeper than 2048 elements: what is "
             "deeper cannot be parsed"))]


# -- the config ---------------------------------------------------------------------------------

#: the Node plugins cannot be made (no tools there): a config that runs them fails fast
NO_NODE_TOOLS = {"NITPICKER_NODE_MODULES": "/nonexistent"}


@pytest.mark.parametrize(("name", "text"), [
    ("nitpicker.toml", "[plugins]\nanalyze = false\n"),
    ("pyproject.toml", "[tool.nitpicker.plugins]\nanalyze = false\n"),
    (".nitpickerrc", '{"plugins": {"analyze": false}}'),
])
def test_plugins_analyze_false_runs_none(archive: Path, name: str, text: str) -> None:
    """``false`` for the whole table means what it means for one plugin: none runs (it used to
    run all six, Lighthouse included). With nothing named on the command line that is the
    "no plugins to run" error; ``--plugin`` still runs the one it names."""
    (archive.parent / name).write_text(text)
    before = fingerprint(archive)
    for flags in ((), ("--all",)):
        done = nitpicker("analyze", str(archive), *flags, cwd=archive.parent, env=NO_NODE_TOOLS)
        assert done.returncode == 1
        assert done.stderr.splitlines() == [
            ("Error: No plugins to run: the config enables none and --plugin names none "
            f"({archive.parent / name})")]
        assert fingerprint(archive) == before
    done = nitpicker("analyze", str(archive), "--plugin", "main-contents", cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    assert rows(archive, "SELECT DISTINCT plugin FROM analysis_runs") == [("main-contents",)]


@pytest.mark.parametrize(("text", "message"), [
    ("[plugins]\nanalyze = true\n",
     "nitpicker.toml:2: plugins.analyze must be a table (an object) or false, not true"),
    ("[plugins]\nanalyze = 0\n",
     "nitpicker.toml:2: plugins.analyze must be a table (an object) or false, not 0"),
    ('[plugins]\nanalyze = ""\n',
     'nitpicker.toml:2: plugins.analyze must be a table (an object) or false, not ""'),
])
def test_plugins_analyze_neither_a_table_nor_false_is_bad_input(
        archive: Path, text: str, message: str) -> None:
    (archive.parent / "nitpicker.toml").write_text(text)
    before = fingerprint(archive)
    done = nitpicker("analyze", str(archive), cwd=archive.parent, env=NO_NODE_TOOLS)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"Error: {archive.parent / message}"]
    assert fingerprint(archive) == before


@pytest.mark.parametrize(("text", "message"), [
    (('[plugins.analyze]\nsearch = { keywords = ["nitpicker"] }\n'
     '"@nitpicker/analyze-search" = true\n'),
     ("nitpicker.toml:3: plugin search is named twice, as 'search' and "
     "'@nitpicker/analyze-search': keep one")),
    (('[plugins.analyze."@nitpicker/analyze-main-contents"]\nmainContentSelector = "#x"\n'
     '[plugins.analyze.main-contents]\n'),
     ("nitpicker.toml:3: plugin main-contents is named twice, as "
     "'@nitpicker/analyze-main-contents' and 'main-contents': keep one")),
])
def test_a_plugin_named_twice_is_bad_input_naming_both(archive: Path, text: str,
                                                       message: str) -> None:
    """Ours and the original's name for one plugin: the second used to replace the first's
    settings in silence (search ran with no keywords)."""
    (archive.parent / "nitpicker.toml").write_text(text)
    before = fingerprint(archive)
    done = nitpicker("analyze", str(archive), "--all", cwd=archive.parent)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [f"Error: {archive.parent / message}"]
    assert fingerprint(archive) == before


# -- timeouts ----------------------------------------------------------------------------------


@pytest.mark.parametrize("plugin", ["axe", "lighthouse", "markuplint", "textlint"])
@pytest.mark.parametrize(("value", "shown"), [
    ("nan", "nan"), ("inf", "inf"), ("-inf", "-inf"), ("0", "0"), ("-5", "-5"),
    ("1e300", "1e+300"), ("86401", "86401"),
])
def test_a_timeout_that_is_no_number_of_seconds_is_bad_input(
        archive: Path, plugin: str, value: str, shown: str) -> None:
    """TOML spells ``nan`` and ``inf``: every page then failed (or none ended) and the command
    exited 0. One line naming the setting, the value and where to fix it; nothing runs."""
    (archive.parent / "nitpicker.toml").write_text(
        f"[plugins.analyze.main-contents]\n[plugins.analyze.{plugin}]\ntimeout = {value}\n")
    before = fingerprint(archive)
    done = nitpicker("analyze", str(archive), "--all", cwd=archive.parent)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        (f"Error: plugin {plugin}: setting 'timeout' must be a number of seconds > 0 and at most "
        f"86400, got {shown}; fix it in nitpicker.toml (plugins.analyze.{plugin}.timeout)")]
    assert fingerprint(archive) == before


def test_a_timeout_in_a_json_config_may_not_be_nan_either(archive: Path) -> None:
    """Python's JSON reader takes ``NaN`` and ``Infinity`` too."""
    (archive.parent / ".nitpickerrc").write_text(
        '{"plugins": {"analyze": {"markuplint": {"timeout": Infinity}}}}')
    done = nitpicker("analyze", str(archive), "--all", cwd=archive.parent)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        ("Error: plugin markuplint: setting 'timeout' must be a number of seconds > 0 and at "
        "most 86400, got inf; fix it in .nitpickerrc (plugins.analyze.markuplint.timeout)")]


def test_a_config_object_holding_nan_is_bad_input(archive: Path) -> None:
    """NaN is no JSON: the Node tool would not read the config it was handed."""
    (archive.parent / "nitpicker.toml").write_text(
        "[plugins.analyze.markuplint.config.rules]\nx = nan\n")
    done = nitpicker("analyze", str(archive), "--all", cwd=archive.parent)
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert line.startswith("Error: plugin markuplint: setting 'config' is not plain data: ")
    assert line.endswith("; fix it in nitpicker.toml (plugins.analyze.markuplint.config)")


# -- a full disk ---------------------------------------------------------------------------------

#: keywords enough for the analysis to need far more room than the disk has left
KEYWORDS = [f"--search-keywords=word{n}" for n in range(400)]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs mounted for the test (needs root: skipped otherwise)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def crawl_tables(archive: Path) -> list[tuple[object, ...]]:
    """What the crawl recorded: every page and snapshot row."""
    return rows(archive, "SELECT * FROM pages ORDER BY id") + rows(
        archive, "SELECT page_id, encoding, html FROM snapshots ORDER BY page_id")


@pytest.mark.parametrize("room", [0, 4096, 16384, 65536, 131072],
                         ids=lambda room: f"{room // 1024}KiB-free")
def test_a_full_disk_is_one_line_and_the_archive_intact(crawled: Path, small_disk: Path,
                                                       room: int) -> None:
    """A real full disk, from the lock file (no room) through the migration to the analysis
    itself: one ``Error:`` line saying the disk is full, exit 1, no lock left, the crawl's rows
    as they were and the file sound; with room again, the same command finishes the work."""
    archive = small_disk / "site.nitpicker"
    shutil.copyfile(crawled, archive)
    before = crawl_tables(archive)
    filler = small_disk / "filler"
    free = os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize
    filler.write_bytes(b"\0" * max(0, free - room))
    done = nitpicker("analyze", str(archive), "--plugin", "search", *KEYWORDS, cwd=small_disk)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1].startswith(
        f"Error: {archive}: the disk is full (")
    assert done.stderr.splitlines()[-1].endswith(
        "): the page analyses committed before are kept; free some space and run the same "
        "command again")
    assert "Traceback" not in done.stderr
    assert [line for line in done.stderr.splitlines() if "Error" in line or "WARNING" in line
            ] == done.stderr.splitlines()[-1:]
    assert not Path(f"{archive}.lock").exists()
    filler.unlink()
    assert rows(archive, "PRAGMA integrity_check") == [("ok",)]
    assert crawl_tables(archive) == before
    again = nitpicker("analyze", str(archive), "--plugin", "search", *KEYWORDS, cwd=small_disk)
    assert again.returncode == 0, again.stderr
    assert rows(archive, "SELECT count(DISTINCT page_id), count(*) FROM page_values") == [
        (5, 5 * 400)]
    assert not Path(f"{archive}-wal").exists()
