"""JUnit XML: the findings as test results, for the test tabs of GitLab, Jenkins, Azure and
GitHub test reporters.

One ``<testsuite>`` per category (``links``, ``content``, ``accessibility``…), one
``<testcase>`` per finding that fails (``classname`` the rule, ``name`` the URL and element;
a ``<failure>`` with the message, its ``type`` the priority, the details as text) and per
accepted finding (``<skipped>`` with the reason); a site check with no failing finding is one
passing ``<testcase>`` (its id), so a clean run shows every check passed. In a comparison,
only the new findings fail; the unchanged ones are left out (their check still fails).

Written with the standard library (``xml.sax.saxutils.XMLGenerator``), a suite at a time;
characters XML 1.0 cannot carry are dropped: :func:`write_junit`.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from typing import IO, TYPE_CHECKING, Final
from xml.sax.saxutils import XMLGenerator
from xml.sax.xmlreader import AttributesImpl

from nitpicker.query.checks import CHECKS

if TYPE_CHECKING:
    from nitpicker.ci.source import Entry, ExportSource

__all__ = ["write_junit"]

_NOT_XML: Final = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str | None) -> str:
    """``text`` without the characters XML 1.0 cannot carry."""
    return _NOT_XML.sub("", text or "")


def _listed(entry: Entry) -> bool:
    """A testcase: a finding that fails, or an accepted one (skipped)."""
    return entry.failing or (entry.suppression is not None and entry.state != "unchanged")


def _details(entry: Entry) -> str:
    finding = entry.finding
    lines = [f"{finding['title']} ({finding['rule']}, {finding['priority']})",
             finding["message"], f"URL: {finding['url']}"]
    for label, key in (("Element", "element"), ("Location", "location"),
                       ("Snippet", "snippet"), ("Fingerprint", "fingerprint")):
        if finding[key]:  # type: ignore[literal-required]
            lines.append(f"{label}: {finding[key]}")  # type: ignore[literal-required]
    if entry.expired is not None:
        lines.append(f"Its suppression expired on {entry.expired.expires}: "
                     f"{entry.expired.reason}")
    return "\n".join(lines)


class _Text(io.TextIOBase):
    """``out`` as the text stream ``XMLGenerator`` needs (it takes any other object for a
    binary one: a temporary file's wrapper, say)."""

    def __init__(self, out: IO[str]) -> None:
        super().__init__()
        self._out = out

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._out.write(text)
        return len(text)


def _attrs(values: dict[str, str]) -> AttributesImpl[str]:
    return AttributesImpl(values)


class _Suite:
    def __init__(self) -> None:
        self.failures = 0
        self.skipped = 0
        self.failed_rules: set[str] = set()


def _tally(source: ExportSource) -> dict[str, _Suite]:
    suites: dict[str, _Suite] = {}
    for check in CHECKS:
        suites.setdefault(check.category, _Suite())
    for entry in source.entries("category"):
        suite = suites.setdefault(entry.finding["category"], _Suite())
        if entry.failing:
            suite.failures += 1
            suite.failed_rules.add(entry.finding["rule"])
        elif _listed(entry):
            suite.skipped += 1
    return suites


def write_junit(source: ExportSource, out: IO[str]) -> None:
    """The JUnit XML of ``source``'s findings, written to ``out``."""
    suites = _tally(source)
    passing = Counter(check.category for check in CHECKS)
    for category, suite in suites.items():
        passing[category] -= sum(1 for check in CHECKS if check.category == category
                                 and check.id in suite.failed_rules)
    totals = {name: sum(getattr(s, name) for s in suites.values())
              for name in ("failures", "skipped")}
    tests = totals["failures"] + totals["skipped"] + sum(passing.values())
    xml = XMLGenerator(_Text(out), encoding="utf-8", short_empty_elements=True)
    xml.startDocument()
    xml.startElement("testsuites", _attrs({"name": f"nitpicker {_xml(str(source.path))}",
                                    "tests": str(tests), "failures": str(totals["failures"]),
                                    "errors": "0", "skipped": str(totals["skipped"])}))
    entries = source.entries("category")
    pending = next(entries, None)
    for category in sorted(suites):
        suite = suites[category]
        xml.characters("\n")
        xml.startElement("testsuite", _attrs({
            "name": _xml(category),
            "tests": str(suite.failures + suite.skipped + passing[category]),
            "failures": str(suite.failures), "errors": "0", "skipped": str(suite.skipped)}))
        while pending is not None and pending.finding["category"] == category:
            if _listed(pending):
                _testcase(xml, pending)
            pending = next(entries, None)
        for check in CHECKS:
            if check.category == category and check.id not in suite.failed_rules:
                xml.characters("\n  ")
                xml.startElement("testcase", _attrs({"classname": check.id,
                                                     "name": check.title}))
                xml.endElement("testcase")
        xml.characters("\n")
        xml.endElement("testsuite")
    xml.characters("\n")
    xml.endElement("testsuites")
    xml.endDocument()
    out.write("\n")


def _testcase(xml: XMLGenerator, entry: Entry) -> None:
    finding = entry.finding
    name = finding["url"] + (f" {finding['element']}" if finding["element"] else "")
    xml.characters("\n  ")
    xml.startElement("testcase", _attrs({"classname": _xml(finding["rule"]),
                                         "name": _xml(name)}))
    if entry.failing:
        xml.startElement("failure", _attrs({
            "type": finding["priority"],
            "message": _xml(" ".join(finding["message"].split()))}))
        xml.characters(_xml(_details(entry)))
        xml.endElement("failure")
    else:
        assert entry.suppression is not None
        reason = _xml(f"accepted: {entry.suppression.reason}")
        xml.startElement("skipped", _attrs({"message": reason}))
        xml.endElement("skipped")
    xml.endElement("testcase")
