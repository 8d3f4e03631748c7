"""Wall time of ``nitpicker --help`` and ``nitpicker query FILE summary``, this tree against a
baseline revision, side by side.

    .venv/bin/python bench/cli_startup.py [--baseline REV] [--repeat 7]

The baseline is exported from git (``git archive REV``) into a temporary folder and run with
this virtualenv's Python and that folder first on ``PYTHONPATH``, this tree likewise with its
own; every run is a fresh ``python -m nitpicker.cli`` process. The two trees alternate (which
goes first changes every round), one untimed run each warms the caches and compiles the
baseline, and the medians of ``--repeat`` runs are printed with their ratio (after / before):
wall seconds, and the CPU seconds of the process, which a loaded machine disturbs less. The archive
queried is the demo crawl of the fixture site (``python -m fixtures.demo --no-render``), made
once by this tree.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parent.parent


def export(rev: str, into: Path) -> Path:
    """The tree of ``rev`` (``git archive``), unpacked in ``into``."""
    archive = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def demo_archive(workdir: Path) -> Path:
    """The fixture site's demo crawl, plain HTTP."""
    output = workdir / "demo"
    subprocess.run([sys.executable, "-m", "fixtures.demo", "--no-render", "--silent", "-o",
                    str(output)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                   check=True, capture_output=True)
    return output.with_suffix(".nitpicker")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_seconds(tree: Path, args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one ``python -m nitpicker.cli ARGS`` run of ``tree`` (which
    must exit 0)."""
    env = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "100"}
    cpu, started = _children_cpu(), time.perf_counter()
    subprocess.run([sys.executable, "-m", "nitpicker.cli", *args], cwd=tree, env=env,
                   check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started, _children_cpu() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--baseline", default="e12ac99",
                        help="git revision before (default: e12ac99, before the CLI per command)")
    parser.add_argument("--repeat", type=int, default=7, help="timed runs of each (default 7)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="nitpicker-cli-startup-") as tmp:
        workdir = Path(tmp)
        trees = {"before": export(args.baseline, workdir / "before"), "after": ROOT}
        archive = demo_archive(workdir)
        commands = {"nitpicker --help": ["--help"],
                    "nitpicker query FILE summary": ["query", str(archive), "summary"]}
        print(f"baseline {args.baseline} vs this tree; medians of {args.repeat} runs, "
              f"alternated; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"{'command':<30} {'wall s before':>13} {'after':>6} {'ratio':>6}"
              f" {'CPU s before':>13} {'after':>6} {'ratio':>6}")
        for label, command in commands.items():
            runs: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
            for tree in trees.values():
                run_seconds(tree, command)  # warm-up: caches, the baseline's bytecode
            for round_ in range(args.repeat):
                order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
                for name in order:
                    runs[name].append(run_seconds(trees[name], command))
            wall = {name: median([w for w, _ in runs[name]]) for name in trees}
            cpu = {name: median([c for _, c in runs[name]]) for name in trees}
            print(f"{label:<30} {wall['before']:>13.3f} {wall['after']:>6.3f}"
                  f" {wall['after'] / wall['before']:>6.2f} {cpu['before']:>13.3f}"
                  f" {cpu['after']:>6.3f} {cpu['after'] / cpu['before']:>6.2f}")
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
