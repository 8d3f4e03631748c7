"""The ``nitpicker crawl`` command in a subprocess: exit codes, output naming, bad input."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from nitpicker.crawl.config import validate_url
from tests.helpers import count, run

if TYPE_CHECKING:
    from fixtures.site import FixtureSite

INTEGER_MAX = str(2**63 - 1)


@pytest.mark.smoke
def test_clean_crawl_exits_0_with_default_name_and_summary(site: FixtureSite, tmp_path: Path) -> None:
    result = run("crawl", site.url("/recursive/"), "--retry", "0", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    archives = list(tmp_path.glob("*.nitpicker"))
    assert len(archives) == 1
    assert archives[0].name.startswith("localhost-")
    assert len(archives[0].stem.split("-")[-1]) == 17  # YYYYMMDDHHmmssSSS
    assert "4 pages in scope" in result.stderr
    assert count(archives[0], "SELECT count(*) FROM pages WHERE is_target = 1") == 4
    assert not list(tmp_path.glob("*.lock")) and not list(tmp_path.glob("*-wal"))


def test_output_name_gets_suffix_and_silent_prints_nothing(site: FixtureSite, tmp_path: Path) -> None:
    result = run("crawl", site.url("/about"), "-o", "my-report", "--silent", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "" and result.stdout == ""
    assert [p.name for p in tmp_path.glob("*.nitpicker")] == ["my-report.nitpicker"]
    conn = sqlite3.connect(tmp_path / "my-report.nitpicker")
    assert conn.execute("SELECT name FROM info").fetchone()[0] == "my-report"


def test_in_scope_error_exits_1(site: FixtureSite, tmp_path: Path) -> None:
    result = run("crawl", site.url("/errors/reset"), "--retry", "0", "-o", "x", cwd=tmp_path)
    assert result.returncode == 1
    assert "1 internal" in result.stderr


def test_only_external_errors_exit_2_or_1_with_strict(site: FixtureSite, tmp_path: Path) -> None:
    # /errors/ links to a refused external URL and to /errors/reset; exclude the reset page.
    args = ("crawl", site.url("/errors/"), "--retry", "0", "--exclude", "/errors/reset")
    result = run(*args, "-o", "a", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "1 external" in result.stderr
    strict = run(*args, "-o", "b", "--strict", cwd=tmp_path)
    assert strict.returncode == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["not a url"], 'Invalid URL: "not a url"'),
        (["ftp://example.com/"], 'Invalid URL: "ftp://example.com/"'),
        ([], "Give a URL to crawl"),
        (["http://localhost:1/", "-o", "missing-dir/out"], "Output directory does not exist"),
        (["http://localhost:1/a", "http://localhost:1/b", "--single"],
         "--single cannot be combined with multiple positional URLs"),
        (["--resume", "x.nitpicker", "-o", "y"], "--output flag is not supported with --resume"),
        (["--resume", "absent.nitpicker"], "Archive not found"),
        (["--list-file", "absent.txt"], "Cannot read list file"),
        (["http://localhost:1/", "--parallels", "0"], "--parallels must be at least 1"),
        (["http://localhost:1/", "--exclude-keyword", "/x/q"], "unsupported regex flag"),
        (["http://localhost:1/", "-o", "missing-dir/"], "Output directory does not exist"),
        # usage errors: one line and exit 1 (Typer printed a usage box and exited 2)
        (["http://localhost:1/", "-P", "abc"],
         "Invalid value for '--parallels' / '-P': 'abc'. Input should be a valid integer"),
        (["http://localhost:1/", "--max-duration", "soon"],
         "Invalid value for '--max-duration': 'soon'. Input should be a valid number"),
        (["http://localhost:1/", "--bogus"], "No such option: --bogus"),
        # integers out of range: 64 bits and more were accepted (-I hung, --retry retried forever)
        *[(["http://localhost:1/", flag, str(value)], f"{name} must be at most {high}, got {value}")
          for flag, name, high in (("-P", "--parallels", "1000"), ("-I", "--interval", "3600000"),
                                   ("--retry", "--retry", INTEGER_MAX),
                                   *((flag, flag, INTEGER_MAX) for flag in (
                                       "--max-pages", "--dedupe-cap", "--dedupe-age-window",
                                       "--dedupe-map-cap", "--max-excluded-depth",
                                       "--image-file-size-threshold")))
          for value in (2**64,)],
        (["http://localhost:1/", "-P", "1001"], "--parallels must be at most 1000, got 1001"),
        (["http://localhost:1/", "-I", "3600001"], "--interval must be at most 3600000, got 3600001"),
        (["http://localhost:1/", "--dedupe-age-window", "0"],
         "--dedupe-age-window must be at least 1, got 0"),
        # the original's remaining crawl flags: counts, 0 and up
        (["http://localhost:1/", "--max-excluded-depth", "-1"],
         "--max-excluded-depth must not be negative, got -1"),
        (["http://localhost:1/", "--image-file-size-threshold", "-5"],
         "--image-file-size-threshold must not be negative, got -5"),
        (["http://localhost:1/", "--image-file-size-threshold", "1MB"],
         "Invalid value for '--image-file-size-threshold': '1MB'. Input should be a valid integer"),
        (["http://localhost:1/", "--max-excluded-depth", "ten"],
         "Invalid value for '--max-excluded-depth': 'ten'. Input should be a valid integer"),
        # not a number, infinite or not positive: was silently read as "no limit"
        *[(["http://localhost:1/", flag, value],
           f"{flag} must be a number above 0 and at most {high}, got {value}")
          for flag, high in (("--max-duration", "315360000"), ("--max-archive-mb", "1000000000"))
          for value in ("nan", "inf", "-inf", "-1.0", "0.0")],
    ],
)
def test_bad_input_is_one_line_and_exit_1(args: list[str], message: str, tmp_path: Path) -> None:
    result = run("crawl", *args, cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ") and message in lines[0]
    assert not list(tmp_path.glob("*.nitpicker"))


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://exa mple.com/", 'Error: Invalid URL: "http://exa mple.com/"'),
        ("http://localhost:1/" + "x" * 9000, "Error: URL too long (9019 characters, at most 8190)"),
    ],
)
def test_unusable_root_is_one_line_and_exit_1(url: str, message: str, tmp_path: Path) -> None:
    """A space in the host, a root longer than the overlong-URL guard: refused before a crawl."""
    result = run("crawl", url, cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(message)
    assert not list(tmp_path.glob("*.nitpicker"))


def test_usage_errors_exit_1(tmp_path: Path) -> None:
    """A bare ``nitpicker`` prints the help; an unknown command is one line; both exit 1."""
    bare = run(cwd=tmp_path)
    assert bare.returncode == 1 and "Usage: " in bare.stdout and "crawl" in bare.stdout
    unknown = run("crawel", "http://localhost:1/", cwd=tmp_path)
    assert (unknown.returncode, unknown.stderr) == (
        1, "Error: No such command 'crawel'. Did you mean 'crawl', 'recrawl'?\n")


def test_list_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "urls.txt").write_bytes(b"http://localhost:1/a\nhttp://localhost:1/caf\xe9\n")
    result = run("crawl", "--list-file", "urls.txt", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        "Error: List file is not UTF-8 text: urls.txt (byte 0xe9 at offset 43)\n")
    assert not list(tmp_path.glob("*.nitpicker"))


def test_output_directory_gets_an_auto_named_archive_inside(site: FixtureSite,
                                                            tmp_path: Path) -> None:
    """``-o dir/`` and ``-o dir`` (an existing directory) write ``dir/<host>-<stamp>.nitpicker``
    (it wrote ``dir.nitpicker`` beside the directory)."""
    (tmp_path / "out").mkdir()
    for output in ("out/", "out"):
        result = run("crawl", site.url("/about"), "-o", output, "--silent", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
    archives = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert len(archives) == 2, archives
    assert all(re.fullmatch(r"localhost-\d{17}\.nitpicker", name) for name in archives), archives
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_brackets_in_urls_and_paths_are_printed_as_they_are(site: FixtureSite,
                                                            tmp_path: Path) -> None:
    """A root with ``[/x]`` crashed the progress display (rich MarkupError), ``?a[red]=1`` was
    shown as ``?a=1``, and ``-o 'site[bold]x'`` was named ``sitex.nitpicker`` in the summary
    and the resume hint."""
    root = site.url("/recursive/[/x]?a[red]=1")
    result = run("crawl", root, site.url("/recursive/"), "-o", "site[bold]x", "--max-pages", "1",
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    archive = tmp_path / "site[bold]x.nitpicker"
    assert archive.exists()
    assert validate_url(root) in result.stderr  # the progress line, as the crawl keys it
    assert f"Archive: {archive}\n" in result.stderr
    assert f"continue with: nitpicker crawl --resume {archive}\n" in result.stderr


def test_empty_list_file_and_not_an_archive(tmp_path: Path) -> None:
    (tmp_path / "urls.txt").write_text("# only a comment\n\n")
    result = run("crawl", "--list-file", "urls.txt", cwd=tmp_path)
    assert result.returncode == 1
    assert "No URLs found in list file" in result.stderr
    (tmp_path / "notes.nitpicker").write_text("hello")
    result = run("crawl", "--resume", "notes.nitpicker", cwd=tmp_path)
    assert result.returncode == 1
    assert "Not a nitpicker archive" in result.stderr
    assert (tmp_path / "notes.nitpicker").read_text() == "hello"


@pytest.mark.parametrize(
    "command",
    [
        ["crawl", "--resume", "half.nitpicker"],
        ["crawl", "--append", "half.nitpicker", "http://localhost:1/"],
        ["query", "half.nitpicker", "summary"],
    ],
)
def test_a_sqlite_file_with_migrations_but_no_info_is_not_an_archive(
    tmp_path: Path, command: list[str]
) -> None:
    half = tmp_path / "half.nitpicker"
    conn = sqlite3.connect(half)
    conn.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    conn.execute("INSERT INTO migrations VALUES ('0001_initial', '2026-01-01T00:00:00+00:00')")
    conn.commit()
    conn.close()
    before = half.read_bytes()
    result = run(*command, cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    assert lines[0].endswith("half.nitpicker: not a nitpicker archive (it has no crawl information)")
    assert half.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["half.nitpicker"]


def test_existing_output_is_not_overwritten(site: FixtureSite, tmp_path: Path) -> None:
    (tmp_path / "keep.nitpicker").write_bytes(b"precious")
    result = run("crawl", site.url("/about"), "-o", "keep", cwd=tmp_path)
    assert result.returncode == 1
    assert "Output file already exists" in result.stderr
    assert (tmp_path / "keep.nitpicker").read_bytes() == b"precious"


def test_archive_held_by_a_live_process_is_refused(site: FixtureSite, tmp_path: Path) -> None:
    first = run("crawl", site.url("/about"), "-o", "held", "--max-pages", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (tmp_path / "held.nitpicker.lock").write_text(str(holder.pid))
        result = run("crawl", "--resume", "held.nitpicker", cwd=tmp_path)
        assert result.returncode == 1
        assert f"PID {holder.pid}" in result.stderr
    finally:
        holder.kill()
        holder.wait()
    # a lock left by a dead process is taken over
    resumed = run("crawl", "--resume", "held.nitpicker", "--silent", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert not (tmp_path / "held.nitpicker.lock").exists()


def test_list_file_ignores_comments_and_blank_lines(site: FixtureSite, tmp_path: Path) -> None:
    (tmp_path / "urls.txt").write_text(
        f"# pages to check\n{site.url('/list/a')}\n\n{site.url('/list/b')}  # second\n"
    )
    result = run("crawl", "--list-file", "urls.txt", "-o", "list", "--silent", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert count(tmp_path / "list.nitpicker", "SELECT count(*) FROM pages WHERE is_target = 1") == 2


def test_max_pages_then_resume_completes(site: FixtureSite, tmp_path: Path) -> None:
    first = run("crawl", site.url("/deep/"), "-o", "deep", "--max-pages", "10", "-P", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "continue with: nitpicker crawl --resume" in first.stderr
    archive = tmp_path / "deep.nitpicker"
    assert count(archive, "SELECT count(*) FROM pages WHERE status IS NOT NULL") == 10
    second = run("crawl", "--resume", str(archive), "--silent", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert count(archive, "SELECT count(*) FROM pages WHERE title LIKE 'Deep %'") == 31
    assert count(archive, "SELECT count(*) FROM frontier WHERE state < 2") == 0
    assert count(archive, "SELECT count(*) FROM runs") == 2


def test_a_named_command_imports_only_its_own_module() -> None:
    """``nitpicker report …`` imports neither the other commands' modules (``analyze`` pulls in
    the analyzers, ``crawl`` Scrapy's settings) nor the archive's crawl-time writer; the help
    lists every command, and ``nitpicker.cli.app`` (the tests' CliRunner) has them all."""
    probe = ("import atexit, sys\n"
             "def loaded():\n"
             "    import nitpicker.cli as cli\n"
             "    print('LOADED', sorted(m.split('.')[-1] for m in sys.modules"
             " if m.startswith('nitpicker.cli.') and m.split('.')[-1] in cli.COMMANDS),"
             " 'nitpicker.archive.writer' in sys.modules)\n"
             "atexit.register(loaded)\n"
             "sys.argv = ['nitpicker', *sys.argv[1:]]\n"
             "from nitpicker.cli import main\n"
             "main()\n")

    def run_cli(*args: str) -> tuple[str, str]:
        out = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True,
                             text=True, check=True).stdout
        (line,) = [line for line in out.splitlines() if line.startswith("LOADED")]
        return out, line

    _help, named = run_cli("report", "--help")
    assert named == "LOADED ['report'] False"
    listing, everything = run_cli("--help")
    assert everything.startswith("LOADED ['analyze', 'baseline', 'check', 'concat', 'crawl', "
                                 "'diff', 'export', 'mcp', 'merge', 'pipeline', 'query', "
                                 "'recrawl', 'report', 'split', 'technologies', 'view']")
    assert all(f" {name} " in listing for name in ("crawl", "report", "diff", "mcp"))
    from nitpicker.cli import COMMANDS, app, named_command

    assert sorted(typer_commands(app)) == sorted(COMMANDS)
    assert named_command(["nitpicker", "--verbose", "report", "x"]) == "report"
    assert named_command(["nitpicker", "reprot", "x"]) is None


def typer_commands(app: object) -> list[str]:
    import typer.main

    return list(typer.main.get_command(app).commands)  # type: ignore[arg-type,attr-defined]
