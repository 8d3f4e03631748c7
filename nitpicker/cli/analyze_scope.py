"""``nitpicker analyze --sample N --pages URL-PATTERN``: which pages the plugins analyse.

The selection is :func:`nitpicker.query.analysis_scope.select_pages`; this module checks the
flags before the archive is opened (a pattern matching no page is bad input: nothing is
written), records the template clusters when ``--sample`` needs them and the archive has
none for some page (an archive crawled before they existed, merged, or appended to), limits
the store to the selection and says what it is on stderr.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from nitpicker.archive.template_store import record_templates, templates_missing
from nitpicker.cli.output import fail
from nitpicker.query.analysis_scope import analysable_count, matching_count, select_pages
from nitpicker.query.connection import ArchiveOpenError, open_archive

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from nitpicker.archive.analysis_store import AnalysisStore

__all__ = ["check_pages", "page_estimate", "restrict"]


def page_estimate(file: Path, *, sample: int | None, pages: Sequence[str] | None) -> int | None:
    """The pages the run would analyse, for the estimates at the interactive choice (an
    upper bound with ``--sample`` before the clusters are recorded); ``None`` when the archive
    cannot be read (opening it for the run says why)."""
    try:
        conn = open_archive(file)
    except ArchiveOpenError:
        return None
    try:
        patterns = pages or ()
        if sample is not None and sample >= 1:
            return len(select_pages(conn, sample=sample, patterns=patterns).page_ids)
        return matching_count(conn, patterns) if patterns else analysable_count(conn)
    except Exception:  # noqa: BLE001  an estimate is a courtesy: an unreadable part gives none
        return None
    finally:
        conn.close()


def check_pages(file: Path, patterns: Sequence[str]) -> None:
    """``--pages`` must match an analysable page: one ``Error:`` line before anything is
    written, otherwise."""
    try:
        conn = open_archive(file)
    except ArchiveOpenError:
        return  # opening it for the run says why, in the same words as without --pages
    try:
        found = matching_count(conn, patterns)
    finally:
        conn.close()
    if not found:
        shown = " ".join(f"--pages {pattern!r}" for pattern in patterns)
        fail(f"{shown}: no analysable page matches (internal HTML pages with a snapshot; a "
             "glob over the whole URL, * any text: '*/docs/*')")


def restrict(store: AnalysisStore, sample: int | None, patterns: Sequence[str], *,
             silent: bool) -> None:
    """Limit ``store`` to the selection; with ``sample``, record the template clusters first
    when a page has none. The store is abandoned (its lock released) if this fails."""
    try:
        if sample is not None and templates_missing(store.conn):
            done = record_templates(store.conn)
            if not silent:
                print(f"Template clusters: {done.clustered} pages in {done.clusters} clusters "
                      f"({done.seconds:.1f} s)", file=sys.stderr)
        selection = select_pages(store.conn, sample=sample, patterns=patterns)
        store.restrict(selection.page_ids, selection.scope())
    except BaseException:
        store.abandon()
        raise
    if silent:
        return
    if sample is not None:
        extra = (f", {selection.uncovered} in no cluster" if selection.uncovered else "")
        print(f"Sample: {len(selection.page_ids)} of {selection.matching} pages "
              f"({sample} per template, {selection.templates} templates{extra})",
              file=sys.stderr)
    else:
        print(f"Pages: {len(selection.page_ids)} of {selection.of} match --pages",
              file=sys.stderr)
