"""SARIF 2.1.0: the findings as a static-analysis log, for GitHub code scanning and any tool
that reads SARIF.

One run of the tool ``nitpicker``; one rule (``reportingDescriptor``) per check or analyzer
rule with findings: its title, explanation and fix, its priority as the default level
(``critical`` and ``high``: ``error``; ``medium``: ``warning``; ``low`` and ``info``:
``note``) and its category as a tag. One result per finding: its message, the page URL as the
artifact location (with the ``line:col`` region and snippet when the analyzer knows them, the
element as a logical location), its fingerprint as ``partialFingerprints["nitpicker/v1"]``,
an accepted finding's suppression (``external``, ``accepted``, the reason as justification),
and, in a comparison, ``baselineState`` (``new`` or ``unchanged``).

Written with the standard library's ``json``, result by result (the document never held
whole): :func:`write_sarif`.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import IO, TYPE_CHECKING, Any, Final

from nitpicker import __version__

if TYPE_CHECKING:
    from nitpicker.ci.source import Entry, ExportSource

__all__ = ["LEVELS", "SARIF_SCHEMA", "write_sarif"]

SARIF_SCHEMA: Final = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                       "sarif-schema-2.1.0.json")

LEVELS: Final = {"critical": "error", "high": "error", "medium": "warning", "low": "note",
                 "info": "note"}
"""A priority's SARIF level."""

FINGERPRINT_KEY: Final = "nitpicker/v1"

_LOCATION: Final = re.compile(r"(\d+)(?::(\d+))?")


def _rule(rule: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": rule["id"],
        "shortDescription": {"text": rule["title"]},
        "fullDescription": {"text": rule["explanation"]},
        "help": {"text": rule["fix"]},
        "defaultConfiguration": {"level": LEVELS[rule["priority"]]},
        "properties": {"priority": rule["priority"], "category": rule["category"],
                       "source": rule["source"], "tags": [rule["category"]]},
    }


def _region(location: str | None, snippet: str | None) -> dict[str, Any] | None:
    found = _LOCATION.fullmatch((location or "").strip())
    if not found or int(found.group(1)) < 1:
        return None
    region: dict[str, Any] = {"startLine": int(found.group(1))}
    if found.group(2) and int(found.group(2)) >= 1:
        region["startColumn"] = int(found.group(2))
    if snippet:
        region["snippet"] = {"text": snippet}
    return region


def _result(entry: Entry, index: dict[str, int]) -> dict[str, Any]:
    finding = entry.finding
    physical: dict[str, Any] = {"artifactLocation": {"uri": finding["url"]}}
    region = _region(finding["location"], finding["snippet"])
    if region is not None:
        physical["region"] = region
    location: dict[str, Any] = {"physicalLocation": physical}
    if finding["element"]:
        location["logicalLocations"] = [{"fullyQualifiedName": finding["element"],
                                         "kind": "element"}]
    properties: dict[str, Any] = {"priority": finding["priority"],
                                  "category": finding["category"]}
    if finding["severity"]:
        properties["severity"] = finding["severity"]
    if finding["snippet"] and region is None:
        properties["snippet"] = finding["snippet"]
    result: dict[str, Any] = {
        "ruleId": finding["rule"],
        "ruleIndex": index[finding["rule"]],
        "level": LEVELS[finding["priority"]],
        "message": {"text": finding["message"].strip() or finding["title"]},
        "locations": [location],
    }
    if finding["fingerprint"]:
        result["partialFingerprints"] = {FINGERPRINT_KEY: finding["fingerprint"]}
    if entry.state is not None:
        result["baselineState"] = entry.state
    if entry.suppression is not None:
        result["suppressions"] = [{"kind": "external", "status": "accepted",
                                   "justification": entry.suppression.reason}]
    elif entry.expired is not None and entry.expired.expires is not None:
        properties["suppressionExpired"] = entry.expired.expires.isoformat()
    result["properties"] = properties
    return result


def write_sarif(source: ExportSource, out: IO[str]) -> None:
    """The SARIF log of ``source``'s findings, written to ``out`` result by result."""
    summary = source.summary()
    run_properties: dict[str, Any] = {"archive": str(source.path), "baseUrl": source.base_url,
                                      "findings": summary.findings,
                                      "suppressed": summary.suppressed}
    if source.compared:
        run_properties.update({"baseline": str(source.old_path), "new": summary.new,
                               "fixed": summary.fixed})
    marker = f"results-{uuid.uuid4().hex}"
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "nitpicker", "version": __version__,
                                "rules": [_rule(dict(rule)) for rule in source.rules]}},
            "results": marker,
            "columnKind": "unicodeCodePoints",
            "properties": run_properties,
        }],
    }
    head, tail = json.dumps(log, ensure_ascii=False, indent=1).split(json.dumps(marker), 1)
    index = {rule["id"]: number for number, rule in enumerate(source.rules)}
    out.write(head + "[")
    for number, entry in enumerate(source.entries("priority")):
        out.write(("\n  " if number == 0 else ",\n  ")
                  + json.dumps(_result(entry, index), ensure_ascii=False))
    out.write("\n ]" + tail + "\n")
