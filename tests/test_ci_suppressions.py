"""Accepted findings (``nitpicker/ci/suppressions.py``, ``nitpicker baseline``): the file
written from an archive, matched across crawls, an expired entry gating again, and a bad file
as one ``Error:`` line naming its line."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from nitpicker.ci.suppressions import DEFAULT_FILE, Suppressions, SuppressionsError
from tests.helpers import CiCrawls, run

GATES = "broken-links,4xx,5xx,issues:low,violations"


def test_a_baseline_of_one_crawl_accepts_the_next_ones_findings(ci_crawls: CiCrawls,
                                                                 tmp_path: Path) -> None:
    """``nitpicker baseline`` on the first crawl; the gates on the second crawl of the
    unchanged site then count nothing: every fingerprint matched."""
    done = run("baseline", str(ci_crawls.audit), "--reason", "the backlog", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == (f"{DEFAULT_FILE}: 21 accepted findings (21 new, 0 kept their "
                           "reason)\n")
    written = json.loads((tmp_path / DEFAULT_FILE).read_text())
    assert written["version"] == 1 and len(written["suppressions"]) == 21
    assert {entry["reason"] for entry in written["suppressions"]} == {"the backlog"}
    tripped = run("diff", str(ci_crawls.clean), str(ci_crawls.again), "--fail-on", GATES,
                  "-o", "diff.txt", "--suppressions", "none.json", cwd=tmp_path)
    assert tripped.returncode == 1  # an explicit file that is not there
    passed = run("diff", str(ci_crawls.clean), str(ci_crawls.again), "--fail-on", GATES,
                 "-o", "diff.txt", cwd=tmp_path)  # .nitpicker-baseline.json found
    assert passed.returncode == 0, passed.stderr
    assert passed.stderr == (f"Suppressed: 21 accepted findings in {DEFAULT_FILE} not counted "
                             "by the gates\n")


def test_a_suppression_past_its_date_gates_again(ci_crawls: CiCrawls, tmp_path: Path) -> None:
    run("baseline", str(ci_crawls.audit), "-o", "accepted.json", "--expires", "2099-12-31",
        cwd=tmp_path)
    text = (tmp_path / "accepted.json").read_text()
    lines = text.splitlines()
    expiring = next(n for n, line in enumerate(lines, 1) if '"rule": "status/server-error"' in line)
    lines[expiring - 1] = lines[expiring - 1].replace('"2099-12-31"', '"2020-01-31"')
    (tmp_path / "accepted.json").write_text("\n".join(lines) + "\n")
    fingerprint = json.loads(lines[expiring - 1].rstrip(","))["fingerprint"]
    archive = ci_crawls.copy("again", tmp_path)
    done = run("check", str(archive), "--fail-on", "5xx,broken-links", "--suppressions",
               "accepted.json", "--silent", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines() == [
        (f"Expired: 1 suppression in accepted.json is past its date, so its finding gates "
         f"again (line {expiring}: {fingerprint}, expired 2020-01-31)"),
        f"Gate tripped: 5xx: 1 (status/server-error {ci_crawls.base}/error-status/server-error)"]


def test_baseline_keeps_the_reasons_it_had(ci_crawls: CiCrawls, tmp_path: Path) -> None:
    """Written again from another archive: an entry still found keeps its reason and date,
    one no longer found is dropped, a new one gets this run's reason."""
    first = run("baseline", str(ci_crawls.clean), "--reason", "first", "--expires",
                "2030-01-01", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    second = run("baseline", str(ci_crawls.audit), "--reason", "second", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stderr == f"{DEFAULT_FILE}: 21 accepted findings (15 new, 6 kept their reason)\n"
    entries = json.loads((tmp_path / DEFAULT_FILE).read_text())["suppressions"]
    assert _counts(entries) == {("first", "2030-01-01"): 6, ("second", None): 15}
    third = run("baseline", str(ci_crawls.clean), cwd=tmp_path)
    assert third.stderr == (f"{DEFAULT_FILE}: 6 accepted findings (0 new, 6 kept their "
                            "reason, 15 no longer found dropped)\n")


def _counts(entries: list[dict[str, object]]) -> dict[tuple[object, object], int]:
    counts: dict[tuple[object, object], int] = {}
    for entry in entries:
        key = (entry["reason"], entry["expires"])
        counts[key] = counts.get(key, 0) + 1
    return counts


_GOOD = '{"fingerprint": "0123456789abcdef", "reason": "known"}'


@pytest.mark.parametrize(("text", "message"), [
    ('{"version": 1,\n "suppressions": [\n  ' + _GOOD + ',\n]}',
     'f:4: not JSON (Expecting value, column 1)'),
    ("[]", 'f:1: the file must be a JSON object with "version": 1 and "suppressions": [...]'),
    ('{"version": 2, "suppressions": []}', 'f:1: "version" must be 1, got 2'),
    ('{"version": 1}', 'f:1: "suppressions" must be a list'),
    ('{"version": 1, "suppression": []}', ("f:1: unknown key 'suppression'. The keys are: "
                                          "version, archive, created_at, suppressions")),
    ('{"version": 1, "suppressions": [\n' + _GOOD + ',\n"x"]}',
     "f:1: suppression 2 must be an object, got 'x'"),
    ('{"version": 1, "suppressions": [\n' + _GOOD + ',\n\n  {"fingerprint": "12", '
     '"reason": "r"}]}',
     ('f:4: "fingerprint" must be 16 hex digits (as nitpicker query FILE issue shows them), '
     "got '12'")),
    ('{"version": 1, "suppressions": [\n{"fingerprint": "0123456789abcdef"}]}',
     "f:2: \"reason\" must say why the finding is accepted, got None"),
    (('{"version": 1, "suppressions": [\n{"fingerprint": "0123456789abcdef", "reason": "r",\n'
     ' "expires": "31/12/2027"}]}'),
     "f:2: \"expires\" must be a date YYYY-MM-DD or null, got '31/12/2027'"),
    (('{"version": 1, "suppressions": [\n{"fingerprint": "0123456789abcdef", "reason": "r",\n'
     ' "expires": "2027-02-30"}]}'),
     "f:2: \"expires\" must be a date YYYY-MM-DD or null, got '2027-02-30'"),
    (('{"version": 1, "suppressions": [\n{"fingerprint": "0123456789abcdef", "reason": "r", '
     '"expiry": "2027-01-01"}]}'),
     ("f:2: unknown key 'expiry'. The keys are: fingerprint, rule, url, message, reason, "
     "expires")),
    ('{"version": 1, "suppressions": [\n' + _GOOD + ',\n' + _GOOD + ']}',
     "f:3: fingerprint 0123456789abcdef is already accepted on line 2"),
])
def test_a_bad_file_names_its_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "f"
    path.write_text(text)
    with pytest.raises(SuppressionsError) as raised:
        Suppressions.load(path)
    assert str(raised.value) == str(tmp_path / message)


def test_a_bad_file_is_one_error_line_and_nothing_is_written(ci_crawls: CiCrawls,
                                                             tmp_path: Path) -> None:
    bad = '{"version": 1, "suppressions": [\n  {"fingerprint": "xyz", "reason": "r"}\n]}\n'
    (tmp_path / DEFAULT_FILE).write_text(bad)
    for args in (("export", str(ci_crawls.audit), "-f", "sarif", "-o", "x.sarif"),
                 ("baseline", str(ci_crawls.audit)),
                 ("crawl", "http://127.0.0.1:9/", "-o", "new", "--fail-on", "5xx")):
        done = run(*args, cwd=tmp_path)
        assert done.returncode == 1, args
        assert done.stderr.splitlines() == [
            (f"Error: {DEFAULT_FILE}:2: \"fingerprint\" must be 16 hex digits (as nitpicker "
            "query FILE issue shows them), got 'xyz'")], args
    assert [p.name for p in tmp_path.iterdir()] == [DEFAULT_FILE]
    assert (tmp_path / DEFAULT_FILE).read_text() == bad


def test_an_entry_is_valid_through_its_expiry_day() -> None:
    from nitpicker.ci.suppressions import Suppression

    entry = Suppression("0123456789abcdef", "r", date(2027, 3, 31))
    assert not entry.expired(date(2027, 3, 31)) and entry.expired(date(2027, 4, 1))


@pytest.mark.parametrize(("args", "message"), [
    (["--expires", "soon"], "Error: Invalid --expires: 'soon'. Must be a date YYYY-MM-DD"),
    (["--reason", " "], "Error: --reason must say why the findings are accepted, got ''"),
    (["-o", "no/dir/b.json"], "Error: Output directory does not exist: no/dir"),
])
def test_baseline_bad_input(ci_crawls: CiCrawls, tmp_path: Path, args: list[str],
                            message: str) -> None:
    done = run("baseline", str(ci_crawls.audit), *args, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [message]
    assert list(tmp_path.iterdir()) == []
