"""``nitpicker query`` in a subprocess: JSON on stdout, paging, every error path, read-only."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args, get_type_hints

import pytest
import pytest_twisted
import typer.main
from typer.testing import CliRunner

from nitpicker.cli import app
from nitpicker.cli import query as query_cli
from nitpicker.query import INTEGER_RANGES
from tests.helpers import crawl

if TYPE_CHECKING:
    from fixtures.site import FixtureSite

ROOT = Path(__file__).resolve().parent.parent
ROOTS = ("/query/", "/error-status/", "/errors/", "/redirect/", "/meta/")
SUBCOMMANDS = typer.main.get_command(app).commands["query"].commands  # type: ignore[attr-defined]
"""Sub-command name → its Click command, in the order ``nitpicker query --help`` lists them."""


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "nitpicker.cli", "query", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False,
    )


def ok(*args: str) -> Any:
    result = run(*args)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    return json.loads(result.stdout)


def error(*args: str, cwd: Path | None = None) -> str:
    """The one ``Error:`` line of a failed query (exit 1, nothing on stdout)."""
    result = run(*args, cwd=cwd)
    assert (result.returncode, result.stdout) == (1, ""), result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    return lines[0]


@pytest_twisted.async_fixture(scope="module")
async def archive(site: FixtureSite, tmp_path_factory: pytest.TempPathFactory) -> str:
    crawled = await crawl(tmp_path_factory.mktemp("query-cli"), [site.url(r) for r in ROOTS],
                          predict_pagination=False)  # the counts are of linked pages
    crawled.conn.close()
    return str(crawled.path)


def test_summary_json(archive: str, site: FixtureSite) -> None:
    summary = ok(archive, "summary")
    assert set(summary) == {"base_url", "roots", "total_pages", "internal_pages",
                            "external_pages", "status_distribution", "metadata_fulfillment"}
    assert (summary["base_url"], summary["total_pages"]) == (site.url("/query/"), 30)
    assert summary["status_distribution"][0] == {"status": -1, "count": 2}


def test_compact_by_default_indented_with_pretty(archive: str) -> None:
    compact = run(archive, "runs").stdout
    pretty = run(archive, "runs", "--pretty").stdout
    assert compact.count("\n") == 1 and compact.startswith('{"items": [{"id": 1,')
    assert pretty.startswith('{\n  "items": [\n    {\n      "id": 1,')
    assert json.loads(compact) == json.loads(pretty)


def test_paging_flags(archive: str) -> None:
    every = ok(archive, "pages", "--limit", "1000")
    window = ok(archive, "pages", "-l", "3", "-o", "2")
    assert (window["limit"], window["offset"], window["total"]) == (3, 2, 30)
    assert window["items"] == every["items"][2:5]
    same = ok(archive, "pages", "--limit", "3", "--offset", "2")
    assert same == window


def test_filters_and_tri_state(archive: str, site: FixtureSite) -> None:
    external = ok(archive, "pages", "--is-external")
    internal = ok(archive, "pages", "--is-internal", "--limit", "1000")
    assert (external["total"], internal["total"]) == (2, 28)
    errors = ok(archive, "pages", "--status-min", "400", "--sort-by", "status",
                "--sort-order", "desc")
    assert [i["status"] for i in errors["items"]] == [500, 404, 403]
    assert ok(archive, "pages", "--status", "403")["items"][0]["url"] == site.url(
        "/error-status/forbidden")
    assert ok(archive, "pages", "--status-max", "-1")["total"] == 2
    assert ok(archive, "pages", "--noindex")["total"] == 1
    assert ok(archive, "pages", "--missing-title", "--is-internal")["total"] == 1
    assert ok(archive, "pages", "--missing-description", "--directory", "/meta/")["total"] == 3
    assert ok(archive, "pages", "--url-pattern", "%/dup-_")["total"] == 3


def _fingerprint(path: Path) -> tuple[str, int, list[str]]:
    return (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns,
            sorted(p.name for p in path.parent.iterdir()))


def test_every_sub_command_answers_and_the_archive_is_never_modified(
        archive: str, site: FixtureSite, tmp_path: Path) -> None:
    before = _fingerprint(Path(archive))
    url = site.url("/query/")
    listed = tmp_path / "urls.txt"
    listed.write_text(f"{url}\n{site.url('/query/absent')}\n")
    answers = {
        "summary": ok(archive, "summary"),
        "issues": ok(archive, "issues", "--priority", "high", "--category", "links"),
        "issue": ok(archive, "issue", "--id", "status/server-error", "--limit", "1"),
        "pages": ok(archive, "pages", "--limit", "1"),
        "page-detail": ok(archive, "page-detail", "--url", url),
        "html": ok(archive, "html", "--url", url, "--max-length", "9"),
        "broken": ok(archive, "links", "--type", "broken", "--limit", "2"),
        "orphaned": ok(archive, "links", "--type", "orphaned"),
        "resources": ok(archive, "resources", "--is-internal", "--content-type", "text/"),
        "referrers": ok(archive, "resource-referrers", "--url", site.url("/query/style.css")),
        "images": ok(archive, "images", "--missing-alt"),
        "dimensions": ok(archive, "images", "--missing-dimensions", "--url-pattern", "%zero%"),
        "oversized": ok(archive, "images", "--oversized-threshold", "100"),
        "violations": ok(archive, "violations", "--validator", "axe", "--severity", "error",
                         "--rule", "image-alt"),
        "page-values": ok(archive, "page-values", "--plugin", "search", "--url-pattern", "%q%"),
        "duplicates": ok(archive, "duplicates", "--field", "description", "-l", "1"),
        "mismatches": ok(archive, "mismatches", "--type", "og:title"),
        "headers": ok(archive, "headers", "--missing-only", "--limit", "5"),
        "clusters": ok(archive, "duplicate-clusters", "--min-count", "3", "--sample", "1"),
        "runs": ok(archive, "runs"),
        "trap-events": ok(archive, "trap-events"),
        "outages": ok(archive, "outages"),
        "console": ok(archive, "console", "--level", "error"),
        "json-ld": ok(archive, "json-ld", "--invalid"),
        "match-urls": ok(archive, "match-urls", "--urls", str(listed), "--unmatched-only"),
        "inventory-runs": ok(archive, "inventory-runs"),
        "needs-review": ok(archive, "violations", "--status", "needs-review"),
        "templates": ok(archive, "templates", "--examples", "1", "--limit", "1"),
        "template-pages": ok(archive, "template-pages", "--template", "1", "--limit", "1"),
        "template-findings": ok(archive, "template-findings", "--template", "1", "--all"),
        "grep": ok(archive, "grep", "<title>", "--url-pattern", "%/query/%", "--limit", "1"),
        "technologies": ok(archive, "technologies"),
        "technology-pages": ok(archive, "technology-pages", "--name", "jQuery"),
        "content-clusters": ok(archive, "content-clusters", "--kind", "exact"),
        "content-cluster-pages": ok(archive, "content-cluster-pages", "--kind", "near",
                                    "--cluster", "1"),
        "probes": ok(archive, "probes"),
    }
    assert _fingerprint(Path(archive)) == before  # bytes, mtime, and no -wal/-shm/-journal
    assert answers["pages"]["total"] == 30
    assert [item["id"] for item in answers["issues"]["items"]][:1] == ["status/server-error"]
    assert answers["issue"]["items"][0]["url"] == site.url("/error-status/server-error")
    assert answers["page-detail"]["outbound_total"] == 18
    assert answers["html"] == {"html": "<!doctype", "truncated": True}
    assert (len(answers["broken"]["items"]), answers["broken"]["total"]) == (2, 7)
    assert answers["orphaned"]["total"] == 5
    assert answers["resources"]["total"] == 0
    assert answers["referrers"]["page_urls"] == [url, site.url("/query/images")]
    assert answers["images"]["total"] == 2
    assert answers["dimensions"]["total"] == 1
    assert answers["oversized"]["total"] == 0
    assert answers["violations"] == {"items": [], "total": 0, "offset": 0, "limit": 100}
    assert answers["page-values"] == {"plugin": "search", "headers": {}, "items": [],
                                      "total": 0, "offset": 0, "limit": 100}
    assert answers["duplicates"]["items"][0]["count"] == 6
    assert answers["mismatches"]["total"] == 2
    assert (len(answers["headers"]["items"]), answers["headers"]["total"]) == (5, 27)
    assert [(c["count"], len(c["sample_pages"])) for c in answers["clusters"]["items"]] == [
        (6, 1), (3, 1)]
    assert answers["runs"]["items"][0]["status"] == "finished"
    assert answers["trap-events"] == {"items": [], "total": 0, "offset": 0, "limit": 100}
    assert answers["outages"] == {"items": [], "total": 0, "offset": 0, "limit": 100}
    # a crawl without the browser has no console; the fixture's /query/ pages no JSON-LD
    assert answers["console"] == {"items": [], "total": 0, "offset": 0, "limit": 100}
    assert answers["json-ld"] == {"items": [], "total": 0, "offset": 0, "limit": 100}
    assert [item["url"] for item in answers["match-urls"]["items"]] == [
        site.url("/query/absent")]
    assert (answers["match-urls"]["matched"], answers["match-urls"]["unmatched"]) == (1, 1)
    assert answers["inventory-runs"] == {"items": [], "total": 0, "offset": 0, "limit": 100}
    assert answers["needs-review"]["total"] == 0
    # the /query/ pages are bare prose, no layout element: no skeleton, no template cluster
    # (tests/test_templates.py crawls a templated site)
    assert answers["templates"] == {"items": [], "total": 0, "offset": 0, "limit": 1}
    assert answers["template-pages"]["total"] == 0
    assert answers["template-findings"]["total"] == 0
    assert (answers["grep"]["pages_searched"], answers["grep"]["total"],
            len(answers["grep"]["items"])) == GREP_TITLE
    # nitpicker technologies has not run on this archive
    assert answers["technologies"] == {"items": [], "total": 0, "offset": 0, "limit": 100,
                                       "run": None}
    assert answers["technology-pages"]["total"] == 0
    # the /query/ pages' main contents are short (fewer than 20 words: not compared), and the
    # tests' crawls have no soft-404 probe (tests.helpers.PROBES_OFF)
    assert answers["content-clusters"] == {"items": [], "total": 0, "offset": 0, "limit": 100}
    assert answers["content-cluster-pages"]["total"] == 0
    assert answers["probes"] == {"items": [], "total": 0, "offset": 0, "limit": 100}
    assert {name for name in SUBCOMMANDS} == {
        "summary", "issues", "issue", "pages", "page-detail", "html", "grep", "technologies",
        "technology-pages", "links", "resources",
        "resource-referrers",
        "images", "violations", "page-values", "duplicates", "mismatches", "headers",
        "duplicate-clusters", "runs", "trap-events", "outages", "console", "json-ld", "inventory-runs", "match-urls",
        "templates", "template-pages", "template-findings", "content-clusters",
        "content-cluster-pages", "probes"}


# -- errors ---------------------------------------------------------------------------------------

GREP_TITLE = (15, 15, 1)
"""``query grep '<title>' --url-pattern %/query/% --limit 1``: the pages searched (the crawled
/query/ pages with a snapshot), the matches (a title each), the items (one, the limit)."""

VALID = ("Valid sub-commands: summary, issues, issue, pages, page-detail, html, grep, technologies, "
         "technology-pages, links, resources, images, "
         "violations, page-values, duplicates, mismatches, headers, resource-referrers, duplicate-clusters, runs, "
         "trap-events, outages, console, json-ld, match-urls, inventory-runs, templates, template-pages,"
         " template-findings, content-clusters, content-cluster-pages, probes")


def test_missing_file_and_sub_command_errors(archive: str, tmp_path: Path) -> None:
    assert error() == ("Error: No .nitpicker file specified."
                       " Usage: nitpicker query FILE SUB-COMMAND [OPTIONS]")
    assert error(archive) == f"Error: No sub-command specified. {VALID}"
    assert error(archive, "brokenlinks") == f"Error: Unknown sub-command: brokenlinks. {VALID}"
    assert error(str(tmp_path / "nope.nitpicker"), "summary") == (
        f"Error: Archive not found: {tmp_path / 'nope.nitpicker'}")


def test_files_that_are_not_archives(archive: str, tmp_path: Path) -> None:
    text = tmp_path / "notes.nitpicker"
    text.write_text("hello\n")
    assert error(str(text), "summary") == f"Error: Not a nitpicker archive: {text}"
    assert error(str(tmp_path), "summary") == f"Error: Not an archive file: {tmp_path}"
    other = tmp_path / "other.sqlite"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    assert error(str(other), "summary") == f"Error: {other}: not a nitpicker archive"
    corrupt = tmp_path / "corrupt.nitpicker"
    corrupt.write_bytes(Path(archive).read_bytes()[:100] + b"\xff" * 8000)
    assert error(str(corrupt), "summary").startswith(f"Error: {corrupt}: ")


def test_an_archive_from_a_newer_nitpicker(archive: str, tmp_path: Path) -> None:
    newer = tmp_path / "newer.nitpicker"
    shutil.copy(archive, newer)
    conn = sqlite3.connect(newer)
    conn.execute("INSERT INTO migrations VALUES ('9999_from_the_future', 'x')")
    conn.commit()
    conn.close()
    assert error(str(newer), "summary") == (
        f"Error: {newer}: written by a newer nitpicker (schema 9999_from_the_future)")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["links"], ("--type is required for the links sub-command."
                     " Must be one of: broken, external, orphaned")),
        (["links", "--type", "dead"], ("Invalid link type: 'dead'."
                                       " Must be one of: broken, external, orphaned")),
        (["mismatches"], ("--type is required for the mismatches sub-command."
                          " Must be one of: canonical, og:title, og:description")),
        (["mismatches", "--type", "title"], ("Invalid mismatch type: 'title'. Must be one of:"
                                             " canonical, og:title, og:description")),
        (["page-detail"], "--url is required for the page-detail sub-command"),
        (["html"], "--url is required for the html sub-command"),
        (["resource-referrers"], "--url is required for the resource-referrers sub-command"),
        (["pages", "--sort-by", "size"], ("Invalid sort field: 'size'."
                                          " Must be one of: url, status, title, link_score")),
        (["pages", "--sort-order", "up"], "Invalid sort order: 'up'. Must be one of: asc, desc"),
        (["duplicates", "--field", "h1"], ("Invalid duplicate field: 'h1'."
                                           " Must be one of: title, description")),
        (["pages", "--limit", "-3"], "Invalid --limit: -3. Must be between 0 and 9223372036854775807"),
        (["html", "--url", "x", "--max-length", "-1"],
         "Invalid --max-length: -1. Must be between 0 and 9223372036854775807"),
        (["duplicate-clusters", "--min-count", "0"],
         "Invalid --min-count: 0. Must be between 1 and 9223372036854775807"),
        (["pages", "--status", "1000"], "Invalid --status: 1000. Must be between -1 and 999"),
        (["summary", "--limit", "5"], "--limit does not apply to the summary sub-command"),
        (["pages", "--type", "broken"], "--type does not apply to the pages sub-command"),
        (["images", "--missing-only"], "--missing-only does not apply to the images sub-command"),
        (["links", "--type", "broken", "--is-external"],
         "--is-external does not apply to the links sub-command"),
        (["pages", "--bogus"], "No such option: --bogus"),
    ],
)
def test_bad_flags(archive: str, args: list[str], message: str) -> None:
    assert error(archive, *args) == f"Error: {message}"


def _required(subcommand: str) -> list[str]:
    """The required flags of ``subcommand``, each with a valid value."""
    values = {"--url": "x", "--type": "canonical" if subcommand == "mismatches" else "broken",
              "--plugin": "search", "--id": "status/server-error", "--urls": "urls.txt",
              "--template": "1", "--name": "jQuery", "--kind": "near", "--cluster": "1"}
    flags = [param.opts[0] for param in SUBCOMMANDS[subcommand].params
             if param.required and param.param_type_name == "option"]
    pattern = ["x"] if subcommand == "grep" else []  # its one argument
    return [*pattern, *[token for flag in flags for token in (flag, values[flag])]]


INTEGER_OPTIONS = [(name, param.name) for name, command in SUBCOMMANDS.items()
                   for param in command.params if param.name in INTEGER_RANGES]


def test_every_integer_option_has_a_range() -> None:
    integers = set()
    for command in query_cli.app.registered_commands:
        hints = get_type_hints(command.callback, include_extras=True)
        hints.pop("return")
        hints.pop("ctx")
        integers |= {name for name, hint in hints.items()
                     if int in get_args(get_args(hint)[0])}
    assert integers == {"limit", "offset", "status", "status_min", "status_max",
                        "oversized_threshold", "max_length", "min_count", "sample", "examples",
                        "template"}
    assert integers <= set(INTEGER_RANGES)
    assert len(INTEGER_OPTIONS) == 71  # (sub-command, integer flag) pairs


@pytest.mark.parametrize(("subcommand", "option"), INTEGER_OPTIONS)
def test_integers_out_of_range_are_one_line(archive: str, subcommand: str, option: str) -> None:
    """Every integer flag of every sub-command (in-process: 120 calls). Beyond 64 bits they
    gave an OverflowError traceback; past a bound (``--status 1000``) the query ran."""
    flag = "--" + option.replace("_", "-")
    required = _required(subcommand)
    low, high = INTEGER_RANGES[option]
    for value in (high + 1, 2**64, low - 1, -(2**64)):
        result = CliRunner().invoke(app, ["query", archive, subcommand, *required,
                                          f"{flag}={value}"])
        assert (result.exit_code, result.stdout) == (1, ""), result.stdout
        assert result.stderr == (
            f"Error: Invalid {flag}: {value}. Must be between {low} and {high}\n")


def test_a_huge_number_is_one_line_in_a_real_process(archive: str) -> None:
    assert error(archive, "pages", "--offset", str(2**70)) == (
        f"Error: Invalid --offset: {2**70}. Must be between 0 and 9223372036854775807")
    assert error(archive, "images", "--oversized-threshold", "9" * 50).startswith(
        "Error: Invalid --oversized-threshold: 999999999999… (50 digits).")


def test_bad_number_and_unknown_urls(archive: str, site: FixtureSite) -> None:
    assert error(archive, "pages", "--limit", "ten") == (
        "Error: Invalid value for '--limit' / '-l': 'ten'. Input should be a valid integer, "
        "unable to parse string as an integer")
    nowhere = site.url("/nowhere")
    assert error(archive, "page-detail", "--url", nowhere) == f"Error: Page not found: {nowhere}"
    external = f"{site.external_url}/external-like"
    assert error(archive, "html", "--url", external) == (
        f"Error: HTML snapshot not found: {external}")
    assert error(archive, "resource-referrers", "--url", nowhere) == (
        f"Error: Resource not found: {nowhere}")


def test_oversized_without_a_crawl_threshold_is_one_line(archive: str) -> None:
    assert error(archive, "images", "--oversized") == (
        "Error: oversized: this archive's crawl set no image file size threshold (crawl with "
        "--image-file-size-threshold BYTES)")


def test_help_names_every_sub_command() -> None:
    result = run("--help")
    assert result.returncode == 0
    for name in SUBCOMMANDS:
        assert name in result.stdout
    assert "Example: nitpicker query" in result.stdout


# -- one command per sub-command ----------------------------------------------------------------

PAGING = {"--limit", "--offset"}
FLAGS = {
    "summary": set(),
    "issues": {"--priority", "--category", "--all", *PAGING},
    "issue": {"--id", *PAGING},
    "pages": {"--status", "--status-min", "--status-max", "--is-external", "--is-internal",
              "--missing-title", "--missing-description", "--noindex", "--url-pattern",
              "--directory", "--sort-by", "--sort-order", *PAGING},
    "page-detail": {"--url"},
    "html": {"--url", "--max-length"},
    "grep": {"--ignore-case", "--in", "--url-pattern", *PAGING},
    "technologies": {"--category", *PAGING},
    "technology-pages": {"--name", *PAGING},
    "links": {"--type", *PAGING},
    "resources": {"--content-type", "--is-external", "--is-internal", *PAGING},
    "images": {"--missing-alt", "--missing-dimensions", "--oversized-threshold", "--oversized",
               "--url-pattern", *PAGING},
    "violations": {"--validator", "--severity", "--rule", "--status", *PAGING},
    "page-values": {"--plugin", "--url-pattern", *PAGING},
    "duplicates": {"--field", *PAGING},
    "mismatches": {"--type", *PAGING},
    "headers": {"--missing-only", *PAGING},
    "resource-referrers": {"--url", *PAGING},
    "duplicate-clusters": {"--min-count", "--sample", *PAGING},
    "runs": PAGING,
    "trap-events": PAGING,
    "outages": PAGING,
    "console": {"--level", "--url", *PAGING},
    "json-ld": {"--type", "--invalid", *PAGING},
    "match-urls": {"--urls", "--unmatched-only", *PAGING},
    "inventory-runs": PAGING,
    "templates": {"--examples", *PAGING},
    "template-pages": {"--template", *PAGING},
    "template-findings": {"--template", "--all", *PAGING},
    "content-clusters": {"--kind", "--min-count", "--sample", *PAGING},
    "content-cluster-pages": {"--kind", "--cluster", *PAGING},
    "probes": PAGING,
}
"""The flags of each sub-command (besides --pretty and --help): the dispatch table of the one
``query`` command of before, which refused the others."""
EVERY_FLAG = set().union(*FLAGS.values())


@pytest.mark.parametrize("name", list(FLAGS))
def test_each_sub_command_help_lists_only_its_own_flags(name: str) -> None:
    result = CliRunner().invoke(app, ["query", "site.nitpicker", name, "--help"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert set(re.findall(r"--[a-z-]+", result.stdout)) & EVERY_FLAG == FLAGS[name]
    assert {"--pretty", "--help"} <= set(re.findall(r"--[a-z-]+", result.stdout))
    assert f"Usage: nitpicker query {{FILE}} {name} [OPTIONS]" in result.stdout
    assert "Example: nitpicker query site.nitpicker " + name in result.stdout
    assert list(SUBCOMMANDS) == list(FLAGS)


@pytest.mark.parametrize("name", list(FLAGS))
def test_a_flag_of_another_sub_command_is_one_line(archive: str, name: str) -> None:
    for flag in sorted(EVERY_FLAG - FLAGS[name]):
        result = CliRunner().invoke(app, ["query", archive, name, *_required(name), flag, "1"])
        assert (result.exit_code, result.stdout) == (1, ""), (flag, result.stdout)
        assert result.stderr == f"Error: {flag} does not apply to the {name} sub-command\n"


def test_file_and_sub_command_in_either_order_flags_anywhere(archive: str) -> None:
    expected = ok(archive, "links", "--type", "broken", "--limit", "2")
    assert ok("links", archive, "--type", "broken", "--limit", "2") == expected
    assert ok("--limit", "2", archive, "links", "--type=broken") == expected
    assert ok(archive, "--type", "broken", "links", "-l2") == expected
    assert run("--pretty", archive, "summary").stdout == run(archive, "summary", "--pretty").stdout
    assert ok(archive, "pages", "--status-max", "-1")["total"] == 2  # a value, not a flag


def test_help_of_a_sub_command_without_a_file() -> None:
    result = run("links", "--help")
    assert result.returncode == 0, result.stderr
    assert "--type" in result.stdout and "--status" not in result.stdout
    assert error("links") == ("Error: No .nitpicker file specified."
                              " Usage: nitpicker query FILE SUB-COMMAND [OPTIONS]")


HEAVY = ("scrapy", "twisted", "playwright", "scrapy_playwright")
LOADED = f"""
import sys
sys.argv[0] = "nitpicker"
try:
    from nitpicker.cli import main
    main()
finally:
    print("LOADED", *sorted({{name.split(".")[0] for name in sys.modules}} & {set(HEAVY)!r}))
"""
"""Run ``nitpicker`` with the arguments given, then print the crawler's packages it loaded."""


@pytest.mark.parametrize("args", [["--help"], ["query", "ARCHIVE", "summary"],
                                  ["query", "ARCHIVE", "links", "--help"], ["crawl", "--help"],
                                  ["mcp", "--help"], ["diff", "--help"]])
def test_help_and_queries_do_not_load_the_crawler(archive: str, args: list[str]) -> None:
    """``nitpicker query`` and ``--help`` do not pay for Scrapy, Twisted and Playwright: the
    crawl command imports them when it runs (they took 3 s to import on a loaded machine)."""
    args = [archive if arg == "ARCHIVE" else arg for arg in args]
    result = subprocess.run([sys.executable, "-c", LOADED, *args], capture_output=True,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60,
                            check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "LOADED", result.stdout.splitlines()[-1]
