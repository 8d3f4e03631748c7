"""The two Scrapy entry points, each run as real processes against the fixture site.

1. ``scrapy crawl site -a roots=... -a output=...`` in this Scrapy project (scrapy.cfg at the
   repository root), and the same command with a bad argument.
2. A Scrapyd job: a private ``scrapyd`` on a free loopback port, the project egg built by
   ``scrapyd-deploy --build-egg``, uploaded to ``addversion.json``, scheduled with
   ``schedule.json`` and polled through ``listjobs.json``.

The egg is built from a copy of ``scrapy.cfg`` and ``nitpicker/`` in a temporary directory:
``scrapyd-deploy`` writes a ``setup.py`` next to ``scrapy.cfg`` and runs ``setup.py clean -a``
and ``bdist_egg`` there, which would leave ``setup.py``, ``build/`` and a rewritten
``nitpicker.egg-info/`` in the repository.  (Built at the repository root, the egg also lacks the
``[scrapy] settings`` entry point, because ``pyproject.toml``'s ``[project]`` table wins over
``setup.py``, and Scrapyd's runner then fails with ``AttributeError: 'NoneType' object has no
attribute 'module_name'``.)
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.scrapyd_server import (
    PROJECT_DIR,
    SCRAPY,
    Scrapyd,
    build_egg,
    require,
    run_tool,
    running_scrapyd,
    tail,
)

EXPECTED_TITLES = {
    "/recursive/": "Recursive Top",
    "/recursive/page-a": "Page A",
    "/recursive/page-b": "Page B",
    "/recursive/page-c": "Page C",
}

CRAWL_TIMEOUT = 60
JOB_TIMEOUT = 120


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _archive_pages(path: Path) -> tuple[dict[str, str | None], dict[str, int]]:
    """(url -> title of the target pages, url -> is_external of every row) of an archive."""
    uri = f"{path.resolve().as_uri()}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as conn:
        targets = dict(conn.execute("SELECT url, title FROM pages WHERE is_target = 1"))
        external = dict(conn.execute("SELECT url, is_external FROM pages"))
    return targets, external


def _expected_targets(site: Any) -> dict[str, str]:
    return {site.url(path): title for path, title in EXPECTED_TITLES.items()}


def _external_like(site: Any) -> str:
    return site.url("/external-like").replace("//localhost:", "//127.0.0.1:", 1)


def _assert_recursive_archive(path: Path, site: Any, context: str = "") -> None:
    assert path.exists(), f"no archive at {path}{context}"
    targets, rows = _archive_pages(path)
    assert targets == _expected_targets(site), f"target pages differ{context}"
    external = _external_like(site)
    assert rows.get(external) == 1, (
        f"expected {external} with is_external = 1, got {rows.get(external)!r}"
        f" among {sorted(rows)}{context}"
    )


# ---------------------------------------------------------------------------------------------
# 1. scrapy crawl site
# ---------------------------------------------------------------------------------------------


def test_scrapy_crawl_site(site: Any, tmp_path: Path) -> None:
    require(SCRAPY)
    output = tmp_path / "s.nitpicker"
    done = run_tool(
        [str(SCRAPY), "crawl", "site", "-a", f"roots={site.url('/recursive/')}",
         "-a", f"output={output}", "-a", "retry=0", "-a", "render=false"],
        cwd=PROJECT_DIR, timeout=CRAWL_TIMEOUT,
    )
    context = f"\n--- scrapy crawl stderr (tail) ---\n{tail(done.stderr)}"
    assert done.returncode == 0, f"scrapy crawl exited {done.returncode}{context}"
    _assert_recursive_archive(output, site, context)

    bad = tmp_path / "bad.nitpicker"
    failed = run_tool(
        [str(SCRAPY), "crawl", "site", "-a", "roots=not-a-url", "-a", f"output={bad}"],
        cwd=PROJECT_DIR, timeout=CRAWL_TIMEOUT,
    )
    assert failed.returncode != 0, (
        f"scrapy crawl with roots=not-a-url exited 0\n{tail(failed.stderr)}"
    )
    assert "not-a-url" in failed.stderr, (
        f"the error does not name the bad root\n{tail(failed.stderr)}"
    )
    leftovers = sorted(p.name for p in tmp_path.glob("bad.nitpicker*"))
    assert not leftovers, f"a failed start left files behind: {leftovers}"


@pytest.mark.parametrize(("argument", "message"), [
    ("roots=not-a-url", 'Invalid URL: "not-a-url"'),
    ("parallels=abc", "argument parallels: expected a number, got 'abc'"),
    ("max_duration=nan", "--max-duration must be a number above 0"),
    ("depth=3", "unknown crawl argument 'depth'"),
])
def test_scrapy_crawl_site_bad_argument_is_one_line(site: Any, tmp_path: Path, argument: str,
                                                    message: str) -> None:
    """A bad ``-a`` value is one logged error and exit 1 (it was asyncio's "Task exception was
    never retrieved" and a whole traceback)."""
    require(SCRAPY)
    bad = tmp_path / "bad.nitpicker"
    failed = run_tool(
        [str(SCRAPY), "crawl", "site", "-a", f"roots={site.url('/recursive/')}",
         "-a", argument, "-a", f"output={bad}"],
        cwd=PROJECT_DIR, timeout=CRAWL_TIMEOUT,
    )
    assert failed.returncode == 1, f"exit {failed.returncode}\n{tail(failed.stderr)}"
    assert "Traceback" not in failed.stderr, tail(failed.stderr)
    errors = [line for line in failed.stderr.splitlines() if "ERROR" in line]
    assert len(errors) == 1, failed.stderr
    assert "[nitpicker.commands.crawl] ERROR: Bad spider argument for site: " in errors[0]
    assert message in errors[0], errors[0]
    assert not list(tmp_path.iterdir()), "a refused start left files behind"
def test_scrapy_crawl_site_prints_no_warning_the_user_did_not_cause(
        site: Any, tmp_path: Path) -> None:
    """A plain crawl of a healthy site (a redirect on it included) is quiet: Scrapy's redirect
    middlewares warned at every start that the RefererMiddleware the add-on disables was
    missing."""
    require(SCRAPY)
    output = tmp_path / "quiet.nitpicker"
    done = run_tool(
        [str(SCRAPY), "crawl", "site", "-a", f"roots={site.url('/redirect/')}",
         "-a", f"output={output}", "-a", "render=false"],
        cwd=PROJECT_DIR, timeout=CRAWL_TIMEOUT,
    )
    assert done.returncode == 0, tail(done.stderr)
    assert output.exists()
    warnings = [line for line in (done.stdout + done.stderr).splitlines()
                if "WARNING" in line and "log_count/WARNING" not in line]
    assert warnings == []


# ---------------------------------------------------------------------------------------------
# 2. A Scrapyd job
# ---------------------------------------------------------------------------------------------


def _wait_finished(server: Scrapyd, job: str) -> dict[str, Any]:
    deadline = time.monotonic() + JOB_TIMEOUT
    last: dict[str, Any] = {}
    while time.monotonic() < deadline:
        assert server.process.poll() is None, (
            f"scrapyd exited ({server.process.returncode}) while job {job} ran\n{server.output()}"
        )
        last = server.get("listjobs.json", project="nitpicker")
        for entry in last.get("finished", []):
            if entry.get("id") == job:
                return entry  # type: ignore[no-any-return]
        time.sleep(0.25)
    raise AssertionError(
        f"job {job} did not finish within {JOB_TIMEOUT} s; listjobs: {last}\n"
        f"--- job log ---\n{tail(server.job_log(job), 80)}\n--- scrapyd ---\n{server.output()}"
    )


def test_scrapyd_job(site: Any, tmp_path: Path) -> None:
    egg = build_egg(tmp_path)
    output = tmp_path / "job.nitpicker"
    with running_scrapyd(tmp_path) as server:
        with egg.open("rb") as stream:
            response = requests.post(
                f"{server.url}/addversion.json",
                data={"project": "nitpicker", "version": "1"},
                files={"egg": ("nitpicker.egg", stream, "application/octet-stream")},
                timeout=120,
            )
        added = response.json()
        assert response.ok and added.get("status") == "ok", (
            f"addversion.json answered {response.status_code}: {added}\n{server.output()}"
        )
        assert added.get("spiders", 0) >= 1, f"no spiders in the deployed egg: {added}"

        response = requests.post(
            f"{server.url}/schedule.json",
            data={
                "project": "nitpicker",
                "spider": "site",
                "roots": site.url("/recursive/"),
                "output": str(output),
                "retry": "0",
                "render": "false",
            },
            timeout=30,
        )
        scheduled = response.json()
        assert response.ok and scheduled.get("status") == "ok", (
            f"schedule.json answered {response.status_code}: {scheduled}\n{server.output()}"
        )
        job = scheduled["jobid"]

        _wait_finished(server, job)
        log = server.job_log(job)
        context = f"\n--- job log ({job}) ---\n{tail(log, 80)}\n--- scrapyd ---\n{server.output()}"
        _assert_recursive_archive(output, site, context)
        assert "Spider closed (finished)" in log, f"the job did not finish cleanly{context}"
        errors = [line for line in log.splitlines() if "] ERROR:" in line or "] CRITICAL:" in line]
        assert not errors, f"the job logged errors: {errors}{context}"
