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

import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest
import requests

PROJECT_DIR = Path(__file__).resolve().parents[1]
BIN_DIR = Path(sys.executable).parent
SCRAPY = BIN_DIR / "scrapy"
SCRAPYD = BIN_DIR / "scrapyd"
SCRAPYD_DEPLOY = BIN_DIR / "scrapyd-deploy"

EXPECTED_TITLES = {
    "/recursive/": "Recursive Top",
    "/recursive/page-a": "Page A",
    "/recursive/page-b": "Page B",
    "/recursive/page-c": "Page C",
}

CRAWL_TIMEOUT = 60
SCRAPYD_START_TIMEOUT = 30
JOB_TIMEOUT = 120


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------


def _env() -> dict[str, str]:
    """The test's environment, minus variables that would steer Scrapy or Scrapyd elsewhere."""
    env = dict(os.environ)
    for name in ("SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT", "SCRAPYD_EGG_VERSION",
                 "SCRAPY_PYTHON_SHELL"):
        env.pop(name, None)
    return env


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _require(executable: Path) -> None:
    assert executable.exists(), (
        f"{executable} is missing: install the test extras (pip install -e '.[test]')"
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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


def _run(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout, check=False
    )


# ---------------------------------------------------------------------------------------------
# 1. scrapy crawl site
# ---------------------------------------------------------------------------------------------


def test_scrapy_crawl_site(site: Any, tmp_path: Path) -> None:
    _require(SCRAPY)
    output = tmp_path / "s.nitpicker"
    done = _run(
        [str(SCRAPY), "crawl", "site", "-a", f"roots={site.url('/recursive/')}",
         "-a", f"output={output}", "-a", "retry=0", "-a", "render=false"],
        cwd=PROJECT_DIR, timeout=CRAWL_TIMEOUT,
    )
    context = f"\n--- scrapy crawl stderr (tail) ---\n{_tail(done.stderr)}"
    assert done.returncode == 0, f"scrapy crawl exited {done.returncode}{context}"
    _assert_recursive_archive(output, site, context)

    bad = tmp_path / "bad.nitpicker"
    failed = _run(
        [str(SCRAPY), "crawl", "site", "-a", "roots=not-a-url", "-a", f"output={bad}"],
        cwd=PROJECT_DIR, timeout=CRAWL_TIMEOUT,
    )
    assert failed.returncode != 0, (
        f"scrapy crawl with roots=not-a-url exited 0\n{_tail(failed.stderr)}"
    )
    assert "not-a-url" in failed.stderr, (
        f"the error does not name the bad root\n{_tail(failed.stderr)}"
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
    _require(SCRAPY)
    bad = tmp_path / "bad.nitpicker"
    failed = _run(
        [str(SCRAPY), "crawl", "site", "-a", f"roots={site.url('/recursive/')}",
         "-a", argument, "-a", f"output={bad}"],
        cwd=PROJECT_DIR, timeout=CRAWL_TIMEOUT,
    )
    assert failed.returncode == 1, f"exit {failed.returncode}\n{_tail(failed.stderr)}"
    assert "Traceback" not in failed.stderr, _tail(failed.stderr)
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
    _require(SCRAPY)
    output = tmp_path / "quiet.nitpicker"
    done = _run(
        [str(SCRAPY), "crawl", "site", "-a", f"roots={site.url('/redirect/')}",
         "-a", f"output={output}", "-a", "render=false"],
        cwd=PROJECT_DIR, timeout=CRAWL_TIMEOUT,
    )
    assert done.returncode == 0, _tail(done.stderr)
    assert output.exists()
    warnings = [line for line in (done.stdout + done.stderr).splitlines()
                if "WARNING" in line and "log_count/WARNING" not in line]
    assert warnings == []


# ---------------------------------------------------------------------------------------------
# 2. A Scrapyd job
# ---------------------------------------------------------------------------------------------


class Scrapyd:
    """A running ``scrapyd`` process with its directories."""

    def __init__(self, workdir: Path, port: int, process: subprocess.Popen[bytes]) -> None:
        self.workdir = workdir
        self.url = f"http://127.0.0.1:{port}"
        self.process = process
        self.logs_dir = workdir / "logs"
        self.console = workdir / "scrapyd.out"

    def output(self) -> str:
        try:
            lines = self.console.read_text(errors="replace").splitlines()
            return _tail("\n".join(line for line in lines if "/listjobs.json" not in line))
        except OSError:
            return "(no scrapyd output)"

    def job_log(self, job: str, spider: str = "site") -> str:
        path = self.logs_dir / "nitpicker" / spider / f"{job}.log"
        try:
            return path.read_text(errors="replace")
        except OSError:
            found = sorted(str(p) for p in self.logs_dir.rglob("*.log"))
            return f"(no job log at {path}; logs present: {found})"

    def get(self, endpoint: str, timeout: float = 30, **params: str) -> dict[str, Any]:
        response = requests.get(f"{self.url}/{endpoint}", params=params, timeout=timeout)
        response.raise_for_status()
        return response.json()  # type: ignore[no-any-return]


def _write_conf(workdir: Path, port: int) -> None:
    lines = [
        "[scrapyd]",
        "bind_address = 127.0.0.1",
        f"http_port = {port}",
        f"eggs_dir = {workdir / 'eggs'}",
        f"logs_dir = {workdir / 'logs'}",
        f"dbs_dir = {workdir / 'dbs'}",
        f"items_dir = {workdir / 'items'}",
        "jobs_dir =",
        "max_proc = 1",
        # The default (5 s) would make every job wait up to 5 s before it is launched.
        "poll_interval = 0.2",
    ]
    (workdir / "scrapyd.conf").write_text("\n".join(lines) + "\n")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End scrapyd and any job it launched (its own process group), politely then firmly.

    The group is signalled even if scrapyd already exited, so that an orphaned job ends too; a
    group id stays reserved while any member lives, and an empty group raises ProcessLookupError.
    """
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def running_scrapyd(base: Path) -> Iterator[Scrapyd]:
    """Start scrapyd in its own directory on a free port; always stopped on exit."""
    _require(SCRAPYD)
    failures = []
    for attempt in range(3):  # a free port can be taken between probing and binding
        workdir = base / f"scrapyd-{attempt}"
        workdir.mkdir(parents=True)
        port = _free_port()
        _write_conf(workdir, port)
        with (workdir / "scrapyd.out").open("wb") as console:
            process = subprocess.Popen(
                [str(SCRAPYD)], cwd=workdir, env=_env(), stdout=console,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            )
        server = Scrapyd(workdir, port, process)
        try:
            deadline = time.monotonic() + SCRAPYD_START_TIMEOUT
            while time.monotonic() < deadline and process.poll() is None:
                try:
                    # A short timeout: if another program owns the port, scrapyd exits (code 1)
                    # and this probe must not hang on that program.
                    if server.get("daemonstatus.json", timeout=2).get("status") == "ok":
                        break
                except (requests.RequestException, ValueError):
                    pass
                time.sleep(0.2)
            else:
                failures.append(
                    f"attempt {attempt}, port {port}: exit code {process.poll()}\n{server.output()}"
                )
                continue
            yield server
            return
        finally:
            _stop(process)
    raise AssertionError("scrapyd did not start:\n" + "\n".join(failures))


def _build_egg(tmp_path: Path) -> Path:
    """``scrapyd-deploy --build-egg`` on a copy of scrapy.cfg + nitpicker/ (see module doc)."""
    _require(SCRAPYD_DEPLOY)
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy2(PROJECT_DIR / "scrapy.cfg", src / "scrapy.cfg")
    shutil.copytree(PROJECT_DIR / "nitpicker", src / "nitpicker",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    egg = tmp_path / "nitpicker.egg"
    repo_before = {name: (PROJECT_DIR / name).exists() for name in ("setup.py", "build")}
    done = _run([str(SCRAPYD_DEPLOY), "--build-egg", str(egg)], cwd=src, timeout=120)
    assert done.returncode == 0 and egg.exists(), (
        f"scrapyd-deploy --build-egg exited {done.returncode}\n"
        f"{_tail(done.stdout)}\n{_tail(done.stderr)}"
    )
    repo_after = {name: (PROJECT_DIR / name).exists() for name in repo_before}
    assert repo_after == repo_before, f"building the egg touched the repository: {repo_after}"
    with zipfile.ZipFile(egg) as archive:
        names = archive.namelist()
        entry_points = archive.read("EGG-INFO/entry_points.txt").decode()
    assert "nitpicker/spiders/site.py" in names, f"the egg lacks the spider: {names}"
    assert "settings = nitpicker.settings" in entry_points, (
        f"the egg lacks the [scrapy] settings entry point:\n{entry_points}"
    )
    return egg


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
        f"--- job log ---\n{_tail(server.job_log(job), 80)}\n--- scrapyd ---\n{server.output()}"
    )


def test_scrapyd_job(site: Any, tmp_path: Path) -> None:
    egg = _build_egg(tmp_path)
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
        context = f"\n--- job log ({job}) ---\n{_tail(log, 80)}\n--- scrapyd ---\n{server.output()}"
        _assert_recursive_archive(output, site, context)
        assert "Spider closed (finished)" in log, f"the job did not finish cleanly{context}"
        errors = [line for line in log.splitlines() if "] ERROR:" in line or "] CRITICAL:" in line]
        assert not errors, f"the job logged errors: {errors}{context}"
