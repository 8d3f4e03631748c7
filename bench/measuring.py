"""What the benchmark scripts share: the site server process, the archive's page count, CPU
figures of the machine and of the script itself, the crawler's command and the median.

Imported by ``crawl_throughput.py`` and ``render_throughput.py`` (run as scripts from the
repository root, so this folder is on ``sys.path``).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "SiteServer",
    "archive_page_count",
    "busy_cpu_seconds",
    "median",
    "nitpicker_command",
    "self_cpu_seconds",
    "start_site_server",
]


@dataclass
class SiteServer:
    """A benchmark site served by a process of its own on 127.0.0.1."""

    proc: subprocess.Popen[str]
    port: int
    #: what the server said when it was ready (its own figures: sizes, counts)
    info: dict[str, float] = field(default_factory=dict)
    #: seconds from the start of the process to ready (building the site included)
    start_seconds: float = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def cpu_seconds(self) -> float:
        import psutil

        t = psutil.Process(self.proc.pid).cpu_times()
        return t.user + t.system

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_site_server(cmd: list[str]) -> tuple[subprocess.Popen[str], str, float]:
    """Start ``cmd``, a server that prints ``READY …`` on its first line once it serves; the
    process, the rest of that line and the seconds it took. Exits the script if it fails."""
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("READY"):
        proc.kill()
        raise SystemExit(f"the site server did not start: {line!r}")
    return proc, line[len("READY"):].strip(), time.monotonic() - started


def archive_page_count(path: Path, where: str = "scraped = 1 AND status IS NOT NULL") -> int | None:
    """Pages of a nitpicker archive matching ``where``, read-only. Connects and closes every
    time: an open reader, even an idle one, would stop the writer from leaving WAL mode at
    the end. ``None`` while there is no archive or no schema yet."""
    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error:
        return None
    try:
        row = conn.execute(f"SELECT count(*) FROM pages WHERE {where}").fetchone()
        return int(row[0])
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def busy_cpu_seconds() -> float:
    """CPU seconds all processes of the machine have used since boot (all cores)."""
    import psutil

    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, "iowait", 0.0)


def self_cpu_seconds() -> float:
    """CPU seconds of this process."""
    t = os.times()
    return t.user + t.system


def nitpicker_command() -> list[str]:
    """The ``nitpicker`` command of this virtualenv (or the PATH's, or the module)."""
    exe = Path(sys.executable).parent / "nitpicker"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("nitpicker")
    if found:
        return [found]
    return [sys.executable, "-m", "nitpicker.cli"]


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
