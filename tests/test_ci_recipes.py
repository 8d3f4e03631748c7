"""The CI recipes of ``docs/operations/ci.md`` run for real, as far as this machine allows:
the shell steps of the GitHub Actions workflow and the GitLab CI job, taken from the page,
against the fixture site (``https://example.com/`` in them becomes its ``/error-status/``:
three broken links). The ``uses:`` steps (checkout, the SARIF upload) and the ``pip install``
are left out: this environment has nitpicker. The README's five-line job is the recipe's
first steps."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft4Validator

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "operations" / "ci.md").read_text()
SCHEMA = json.loads((Path(__file__).parent / "sarif" / "sarif-schema-2.1.0.json").read_text())
SITE = "https://example.com/"


def _yaml_block(heading: str) -> str:
    section = PAGE.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```yaml\n", 1)[1].split("\n```", 1)[0]


def _environment(workdir: Path, url: str, extra: dict[str, str]) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
            "SITE": url, "COLUMNS": "300", **extra}


def _shell(script: str, workdir: Path, url: str, env: dict[str, str]
           ) -> subprocess.CompletedProcess[str]:
    """A step's script as the runners run it (``bash -eo pipefail``), the site swapped in."""
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                           script.replace(SITE, url)], cwd=workdir,
                          env=_environment(workdir, url, env), capture_output=True, text=True,
                          timeout=300, check=False)


def _skipped(script: str) -> bool:
    return script.lstrip().startswith("pip install")


def _run_github(workdir: Path, url: str) -> tuple[bool, list[subprocess.CompletedProcess[str]]]:
    """The workflow's ``run:`` steps in order: a failed step fails the job, and the steps
    after it run only with ``if: always()``."""
    workflow: dict[str, Any] = yaml.safe_load(_yaml_block("A GitHub Actions recipe"))
    (job,) = workflow["jobs"].values()
    summary = workdir / "summary.md"
    failed = False
    done = []
    for step in job["steps"]:
        if "run" not in step or _skipped(step["run"]):
            continue
        if failed and "always()" not in str(step.get("if", "")):
            continue
        result = _shell(step["run"], workdir, url, {"GITHUB_STEP_SUMMARY": str(summary)})
        done.append(result)
        failed = failed or result.returncode != 0
    return failed, done


def test_the_github_recipe_fails_on_broken_links_then_passes_once_accepted(
        site: Any, tmp_path: Path) -> None:
    url = site.url("/error-status/")
    failed, steps = _run_github(tmp_path, url)
    assert failed and len(steps) == 2
    crawl, exports = steps
    assert crawl.returncode == 3, crawl.stderr
    assert [line.split(": ")[1] for line in crawl.stderr.splitlines()
            if line.startswith("Gate tripped: ")] == ["broken-links", "5xx", "issues:high"]
    assert exports.returncode == 0, exports.stderr
    annotations = exports.stdout.splitlines()
    assert len(annotations) == 16 and annotations[0].startswith("::error file=")
    assert (tmp_path / "summary.md").read_text().startswith("## nitpicker: 16 findings on ")
    log = json.loads((tmp_path / "nitpicker.sarif").read_text())
    assert list(Draft4Validator(SCHEMA).iter_errors(log)) == []
    assert len(log["runs"][0]["results"]) == 16

    accept = _shell("nitpicker baseline site.nitpicker --reason 'the backlog'", tmp_path, url, {})
    assert accept.returncode == 0, accept.stderr
    for name in ("site.nitpicker", "nitpicker.sarif", "summary.md"):
        (tmp_path / name).unlink()
    failed, steps = _run_github(tmp_path, url)
    assert not failed, [step.stderr for step in steps]
    # the 6 findings the gates count (high and critical): accepted
    assert "Suppressed: 6 accepted findings in .nitpicker-baseline.json" in steps[0].stderr
    assert steps[1].stdout == ""  # no annotation: every finding is accepted
    assert "16 accepted findings in `.nitpicker-baseline.json` not counted." in (
        tmp_path / "summary.md").read_text()


def test_the_gitlab_recipe_reports_the_findings_as_junit(site: Any, tmp_path: Path) -> None:
    """``script`` as one shell (a failed line ends it), ``after_script`` always."""
    (job,) = yaml.safe_load(_yaml_block("A GitLab CI recipe")).values()
    url = site.url("/error-status/")
    script = _shell("\n".join(line for line in job["script"] if not _skipped(line)),
                    tmp_path, url, {})
    after = _shell("\n".join(job["after_script"]), tmp_path, url, {})
    assert script.returncode == 3, script.stderr
    assert after.returncode == 0, after.stderr
    report = tmp_path / job["artifacts"]["reports"]["junit"]
    root = ET.parse(report).getroot()
    assert int(root.get("failures") or 0) == 16
    assert all((tmp_path / path).is_file() for path in job["artifacts"]["paths"])


def test_the_readme_job_is_the_recipes_five_lines() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("\n## nitpicker in CI\n", 1)[1].split("\n## ", 1)[0]
    job = section.split("```yaml\n", 1)[1].split("\n```", 1)[0]
    assert job == _yaml_block("The five-line job")
    lines = job.splitlines()
    assert len(lines) == 5
    steps = [line.split("- run: ", 1)[1] for line in lines if "- run: " in line]
    recipe = _yaml_block("A GitHub Actions recipe")
    assert all(re.search(rf"\brun: {re.escape(step)}$", recipe, re.MULTILINE) for step in steps)
