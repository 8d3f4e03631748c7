"""``nitpicker baseline FILE``: accept every finding of an archive, writing them to a
suppressions file (``.nitpicker-baseline.json``) that ``--fail-on`` and ``export`` read
(:mod:`nitpicker.ci.suppressions`)."""

from __future__ import annotations

import re
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated

import typer

from nitpicker.ci.suppressions import DEFAULT_FILE, Suppressions, write_suppressions
from nitpicker.cli.export_output import check_output
from nitpicker.cli.output import fail, replaced_text_file
from nitpicker.query.connection import ArchiveOpenError, open_archive
from nitpicker.query.findings import findings_checked, iter_findings

__all__ = ["app", "baseline"]

app = typer.Typer()


def _expiry(text: str | None) -> date | None:
    if text is None:
        return None
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            return date.fromisoformat(text)
        except ValueError:
            pass
    fail(f"Invalid --expires: {text!r}. Must be a date YYYY-MM-DD")


@app.command()
def baseline(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The .nitpicker archive.",
                                         show_default=False)],
    output: Annotated[Path, typer.Option("--output", "-o", help="The suppressions file to "
                                         "write (its entries' reasons and dates are kept).")]
        = Path(DEFAULT_FILE),
    reason: Annotated[str | None, typer.Option("--reason", help="Why the findings are accepted "
                                               "(default: accepted with nitpicker baseline on "
                                               "the day's date).", show_default=False)] = None,
    expires: Annotated[str | None, typer.Option("--expires", help="YYYY-MM-DD: after this day "
                                                "the new entries gate again.",
                                                show_default=False)] = None,
) -> None:
    """Accept every finding of an archive: write their fingerprints, with a reason and an
    optional expiry date, to a suppressions file.

    The gates of --fail-on never count an accepted finding (until its date has passed), and
    exports mark it as suppressed. An entry the file already had keeps its reason and date;
    an entry whose finding the archive no longer has is dropped.

    Example: nitpicker baseline site.nitpicker -o .nitpicker-baseline.json --reason "the
    backlog on 1 March"
    """
    until = _expiry(expires)
    if reason is not None and not reason.strip():
        fail("--reason must say why the findings are accepted, got ''")
    try:
        check_output(output, [file])
        previous = Suppressions.load(output) if output.exists() else None
        conn = open_archive(file)
    except (ValueError, ArchiveOpenError) as exc:  # SuppressionsError is a ValueError
        fail(str(exc))
    try:
        if not findings_checked(conn):
            fail(f"{file}: the site checks never ran on it, so it has no findings yet "
                 f"(nitpicker check {file})")
        today = date.today()
        with replaced_text_file(output) as handle:
            written, kept = write_suppressions(
                iter_findings(conn), handle,
                reason=(reason or f"accepted with nitpicker baseline on {today}").strip(),
                expires=until, previous=previous, archive=file.name,
                created_at=datetime.now(UTC).isoformat(timespec="seconds"))
    except OSError as exc:
        fail(f"Cannot write {output}: {exc.strerror}")
    finally:
        conn.close()
    dropped = len(previous) - kept if previous is not None else 0
    print(f"{output}: {written} accepted finding{'' if written == 1 else 's'} "
          f"({written - kept} new, {kept} kept their reason"
          f"{f', {dropped} no longer found dropped' if dropped else ''})", file=sys.stderr)
