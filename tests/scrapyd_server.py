"""A private ``scrapyd`` on a free 127.0.0.1 port and the project egg ``scrapyd-deploy`` builds,
for the Scrapyd tests (tests/test_scrapy_entry.py, tests/test_distributed.py).

The egg is built from a copy of ``scrapy.cfg`` and ``nitpicker/`` in a temporary directory:
``scrapyd-deploy`` writes a ``setup.py`` next to ``scrapy.cfg`` and runs ``setup.py clean -a``
and ``bdist_egg`` there, which would leave ``setup.py``, ``build/`` and a rewritten
``nitpicker.egg-info/`` in the repository (see tests/test_scrapy_entry.py)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests

from tests.redis_server import free_port

PROJECT_DIR = Path(__file__).resolve().parents[1]
BIN_DIR = Path(sys.executable).parent
SCRAPY = BIN_DIR / "scrapy"
SCRAPYD = BIN_DIR / "scrapyd"
SCRAPYD_DEPLOY = BIN_DIR / "scrapyd-deploy"
SCRAPYD_START_TIMEOUT = 30


def scrapy_env() -> dict[str, str]:
    """The test's environment, minus variables that would steer Scrapy or Scrapyd elsewhere."""
    env = dict(os.environ)
    for name in ("SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT", "SCRAPYD_EGG_VERSION",
                 "SCRAPY_PYTHON_SHELL"):
        env.pop(name, None)
    return env


def tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def require(executable: Path) -> None:
    assert executable.exists(), (
        f"{executable} is missing: install the test extras (pip install -e '.[test]')"
    )


def run_tool(args: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=scrapy_env(), capture_output=True, text=True, timeout=timeout, check=False
    )


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
            return tail("\n".join(line for line in lines if "/listjobs.json" not in line))
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


def write_conf(workdir: Path, port: int) -> None:
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


def stop(process: subprocess.Popen[bytes]) -> None:
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
    require(SCRAPYD)
    failures = []
    for attempt in range(3):  # a free port can be taken between probing and binding
        workdir = base / f"scrapyd-{attempt}"
        workdir.mkdir(parents=True)
        port = free_port()
        write_conf(workdir, port)
        with (workdir / "scrapyd.out").open("wb") as console:
            process = subprocess.Popen(
                [str(SCRAPYD)], cwd=workdir, env=scrapy_env(), stdout=console,
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
            stop(process)
    raise AssertionError("scrapyd did not start:\n" + "\n".join(failures))


def build_egg(tmp_path: Path) -> Path:
    """``scrapyd-deploy --build-egg`` on a copy of scrapy.cfg + nitpicker/ (see module doc)."""
    require(SCRAPYD_DEPLOY)
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy2(PROJECT_DIR / "scrapy.cfg", src / "scrapy.cfg")
    shutil.copytree(PROJECT_DIR / "nitpicker", src / "nitpicker",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    egg = tmp_path / "nitpicker.egg"
    repo_before = {name: (PROJECT_DIR / name).exists() for name in ("setup.py", "build")}
    done = run_tool([str(SCRAPYD_DEPLOY), "--build-egg", str(egg)], cwd=src, timeout=120)
    assert done.returncode == 0 and egg.exists(), (
        f"scrapyd-deploy --build-egg exited {done.returncode}\n"
        f"{tail(done.stdout)}\n{tail(done.stderr)}"
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
