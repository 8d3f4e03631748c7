"""Regenerate the manual's screenshots of the HTML report, ``docs/images/report.png`` and
``docs/images/report-html.png``.

A real run: the fixture site served on 127.0.0.1 (port 8811, as in the manual's transcripts),
``nitpicker pipeline`` over six of its sections (rendered in Chromium, analysed with axe and
markuplint, reported as HTML) in a temporary directory, then the report opened in headless
Chromium (Playwright) at 1200×900: its first screen (the executive summary) saved as
``report.png``, its issues (``#issues``) as ``report-html.png``. The pipeline's own output is
printed: it is the transcript of ``docs/guide/pipeline.md``.

    .venv/bin/python docs/screenshots.py [OUTPUT.png [ISSUES.png]]

Needs what ``make install`` sets up: Chromium and the analyzers' Node tools.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: the fixtures package is the repository's
    sys.path.insert(0, str(ROOT))

from fixtures.site import FixtureSite
from nitpicker.render.chromium import CHROMIUM_ARGS, find_chromium

PORT = 8811
SECTIONS = ("/recursive/", "/redirect/", "/meta/", "/error-status/", "/files/", "/resources/")
"""Fixture sections with no fetch error (one would end the pipeline after the crawl)."""
OPTIONS = ("--retry", "0", "--plugin", "axe", "--plugin", "markuplint", "--format", "html",
           "-o", "report.html")
VIEWPORT = {"width": 1200, "height": 900}


def run_pipeline(site: FixtureSite, workdir: Path) -> Path:
    """``nitpicker pipeline`` in ``workdir``; its transcript on stdout; the report's path."""
    command = ["nitpicker", "pipeline", *(site.url(s) for s in SECTIONS), *OPTIONS]
    print("$ " + " ".join(command), flush=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    done = subprocess.run([sys.executable, "-m", "nitpicker.cli", *command[1:]], cwd=workdir,
                          env=env, stderr=subprocess.STDOUT, stdout=subprocess.PIPE, text=True,
                          check=False)
    print(done.stdout, end="", flush=True)
    if done.returncode != 0:
        raise SystemExit(f"nitpicker pipeline exited {done.returncode}")
    return workdir / "report.html"


def screenshot(report: Path, output: Path, issues: Path) -> None:
    """The report's first screen, and its issues', in headless Chromium."""
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("Chromium not found: apt-get install chromium (see docs/topics/rendering.md)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), headless=True,
                                             args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(report.resolve().as_uri())
        page.screenshot(path=str(output), full_page=False)
        page.goto(report.resolve().as_uri() + "#issues")
        page.screenshot(path=str(issues), full_page=False)
        browser.close()


def main(argv: list[str]) -> int:
    output = Path(argv[0]) if argv else ROOT / "docs" / "images" / "report.png"
    issues = Path(argv[1]) if len(argv) > 1 else ROOT / "docs" / "images" / "report-html.png"
    with FixtureSite(port=PORT) as site, tempfile.TemporaryDirectory() as workdir:
        report = run_pipeline(site, Path(workdir))
        screenshot(report, output.resolve(), issues.resolve())
    for written in (output, issues):
        print(f"Screenshot written: {written} ({written.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
