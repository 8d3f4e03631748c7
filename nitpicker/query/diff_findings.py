"""The findings categories of :mod:`nitpicker.query.diff`: violations new, fixed and
persisting, and plugin page values changed.

**Which findings are compared.** Only those of plugins that ran on both archives (a row in
each one's ``analysis_runs``): a plugin run on NEW alone would make every one of its findings
"new". :func:`prepare` puts their names in ``temp.compared_plugins``.

**The fingerprint** of a violation is :func:`nitpicker.query.fingerprint.violation_fingerprint`,
what stays the same when a page is crawled again and parts of it unrelated to the finding
change: the validator and rule, the page's URL (the archive's normalised URL; OLD's through
the URL map, as NEW spells it) and the locator: the element the plugin named (axe's CSS
selector), else the code's markup without the text between its tags (``<title>Old</title>``
and ``<title>New</title>`` are one), else the message, whitespace collapsed. The ``line:col``
location is *not* part of it (a finding whose line moved is the same finding), nor the
severity or the message when there is code. It is computed afresh in SQL for both archives by
a registered deterministic function (the one stored with each violation since
``0020_findings`` follows NEW's URLs only; an archive older than that has no ``element``
column: ``NULL``). Two findings with one fingerprint on a page (the same rule on two identical
elements) are told apart by their order: the n-th one of OLD matches the n-th one of NEW, so a
third identical element in NEW is one new finding.

:func:`prepare` streams each archive's violations once into a temporary table of
``(fingerprint, n, violation id)`` (an index, no text): the categories are joins over them.
Page values are compared in plain joins over ``page_values`` (one cell: plugin, page, key).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import sqlite3

from nitpicker.query._common import has_column
from nitpicker.query.fingerprint import VIOLATION_FINGERPRINT_FUNCTION, register_fingerprint

__all__ = ["SEVERITY_RANKS", "prepare", "severity_rank", "value_item"]

SEVERITY_RANKS: Final = {"critical": 4, "serious": 3, "error": 3, "moderate": 2, "warning": 2,
                         "minor": 1, "info": 1, "needs-review": 0}
"""Each plugin's own severity words (axe's impacts, markuplint's and textlint's levels,
SPEC §7.1) on one scale, for ``--fail-on new-violations:SEVERITY`` (that or worse). A word not
listed ranks as ``error``; ``needs-review`` (what axe could not decide) ranks below every
failure, so ``new-violations:minor`` and above never count it."""

_UNKNOWN_RANK: Final = SEVERITY_RANKS["error"]


def severity_rank(word: str | None) -> int:
    """The rank of a severity word (case-insensitive); an unknown word ranks as ``error``."""
    return SEVERITY_RANKS.get((word or "").lower(), _UNKNOWN_RANK)


def _fingerprint_hex(value: int) -> str:
    return value.to_bytes(8, "big", signed=True).hex()


_COMPARED_PLUGINS_SQL: Final = ("CREATE TEMP TABLE compared_plugins AS"
                                " SELECT plugin FROM old.analysis_runs"
                                " INTERSECT SELECT plugin FROM new.analysis_runs")

_FINDINGS_TABLE_SQL: Final = ("CREATE TEMP TABLE {db}_findings (fp INTEGER NOT NULL,"
                              " n INTEGER NOT NULL, id INTEGER NOT NULL, PRIMARY KEY (fp, n))"
                              " WITHOUT ROWID")

_FINDINGS_FILL_SQL: Final = f"""INSERT INTO temp.{{db}}_findings(fp, n, id)
    SELECT fp, row_number() OVER (PARTITION BY fp ORDER BY id), id FROM (
        SELECT {VIOLATION_FINGERPRINT_FUNCTION}(v.validator, v.rule, {{url}}, {{element}}, v.code,
            v.message) AS fp,
            v.id AS id
        FROM {{db}}.violations v JOIN {{db}}.pages p ON p.id = v.page_id
        WHERE v.plugin IN (SELECT plugin FROM temp.compared_plugins))"""


def prepare(conn: sqlite3.Connection, params: dict[str, Any], old_url_sql: str) -> None:
    """The compared plugins and both archives' fingerprints, in temporary tables (once a
    comparison, before the first findings category). ``old_url_sql``: OLD's ``p.url`` as NEW
    spells it."""
    register_fingerprint(conn)
    conn.execute(_COMPARED_PLUGINS_SQL)
    for db, url in (("old", old_url_sql), ("new", "p.url")):
        conn.execute(_FINDINGS_TABLE_SQL.format(db=db))
        element = "v.element" if has_column(conn, "violations", "element", schema=db) else "NULL"
        conn.execute(_FINDINGS_FILL_SQL.format(db=db, url=url, element=element), params)


def compared_plugins(conn: sqlite3.Connection) -> list[str]:
    """The plugins whose findings were compared (after :func:`prepare`)."""
    return [row[0] for row in
            conn.execute("SELECT plugin FROM temp.compared_plugins ORDER BY plugin")]


_VIOLATION_COLUMNS: Final = ("p.url, v.plugin, v.validator, v.severity, v.rule, v.message,"
                             " v.code, v.location")
VIOLATION_FIELDS: Final = ("url", "plugin", "validator", "severity", "rule", "message", "code",
                           "location", "fingerprint")


def _one_side_sql(db: str, other: str) -> str:
    """Violations of ``db`` with no match in ``other``, by page URL."""
    return f"""SELECT {_VIOLATION_COLUMNS}, f.fp FROM temp.{db}_findings f
        CROSS JOIN {db}.violations v ON v.id = f.id CROSS JOIN {db}.pages p ON p.id = v.page_id
        WHERE NOT EXISTS (SELECT 1 FROM temp.{other}_findings o WHERE o.fp = f.fp AND o.n = f.n)
        ORDER BY p.url, v.id"""


VIOLATIONS_NEW_SQL: Final = _one_side_sql("new", "old")
VIOLATIONS_FIXED_SQL: Final = _one_side_sql("old", "new")
"""(The page URL of a fixed violation is OLD's.)"""

VIOLATIONS_PERSISTING_SQL: Final = f"""SELECT {_VIOLATION_COLUMNS}, f.fp, w.severity,
        w.location FROM temp.new_findings f
    CROSS JOIN temp.old_findings o ON o.fp = f.fp AND o.n = f.n
    CROSS JOIN new.violations v ON v.id = f.id CROSS JOIN new.pages p ON p.id = v.page_id
    CROSS JOIN old.violations w ON w.id = o.id
    ORDER BY p.url, v.id"""
PERSISTING_FIELDS: Final = (*VIOLATION_FIELDS, "old_severity", "old_location")


def violation_item(fields: tuple[str, ...], row: tuple[Any, ...]) -> dict[str, Any]:
    """A violation row as an item: its fingerprint as 16 hex digits."""
    item = dict(zip(fields, row, strict=True))
    item["fingerprint"] = _fingerprint_hex(item["fingerprint"])
    return item


def _values_sql(site_old: str, site_new: str) -> str:
    """Cells of pages in both (site pages) that changed, appeared or went away, for the
    plugins compared."""
    both = """temp.pairs s CROSS JOIN old.pages AS os ON os.id = s.old_id
        CROSS JOIN new.pages AS ns ON ns.id = s.new_id"""
    return f"""SELECT url, plugin, key, old_value, new_value, old_note, new_note FROM (
        SELECT ns.url AS url, nv.plugin AS plugin, nv.key AS key, ov.value AS old_value,
            nv.value AS new_value, ov.note AS old_note, nv.note AS new_note
        FROM {both} CROSS JOIN new.page_values nv ON nv.page_id = s.new_id
        LEFT JOIN old.page_values ov ON ov.plugin = nv.plugin AND ov.page_id = s.old_id
            AND ov.key = nv.key
        WHERE {site_old} AND {site_new} AND ov.value IS NOT nv.value
            AND nv.plugin IN (SELECT plugin FROM temp.compared_plugins)
        UNION ALL
        SELECT ns.url, ov.plugin, ov.key, ov.value, NULL, ov.note, NULL
        FROM {both} CROSS JOIN old.page_values ov ON ov.page_id = s.old_id
        WHERE {site_old} AND {site_new}
            AND ov.plugin IN (SELECT plugin FROM temp.compared_plugins)
            AND NOT EXISTS (SELECT 1 FROM new.page_values nv WHERE nv.plugin = ov.plugin
                            AND nv.page_id = s.new_id AND nv.key = ov.key))
        ORDER BY url, plugin, key"""


VALUE_FIELDS: Final = ("url", "plugin", "key", "change", "old", "new", "old_note", "new_note")


def values_sql(site: Any) -> str:
    """:func:`_values_sql` with the site-page condition ``site(alias)``."""
    return _values_sql(site("os"), site("ns"))


def value_item(fields: tuple[str, ...], row: tuple[Any, ...]) -> dict[str, Any]:
    """A changed cell: its values decoded from JSON; ``change`` says whether the cell
    ``changed``, ``appeared`` (no cell in OLD: ``old`` ``None``) or is ``gone`` (no cell in
    NEW)."""
    url, plugin, key, old, new, old_note, new_note = row
    change = "appeared" if old is None else "gone" if new is None else "changed"
    return {"url": url, "plugin": plugin, "key": key, "change": change,
            "old": None if old is None else json.loads(old),
            "new": None if new is None else json.loads(new),
            "old_note": old_note, "new_note": new_note}
