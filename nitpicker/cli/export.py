"""``nitpicker export FILE --format sarif|junit|markdown|github``: an archive's findings in a
format a CI system shows (the writers: :mod:`nitpicker.ci`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from nitpicker.ci.export import EXPORT_FORMATS
from nitpicker.cli.export_output import check_output, export_findings, load_suppressions
from nitpicker.cli.output import fail

__all__ = ["app", "export"]

app = typer.Typer()


@app.command()
def export(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="The .nitpicker archive.",
                                         show_default=False)],
    format_: Annotated[str, typer.Option("--format", "-f", help="sarif (code scanning), junit "
                                         "(test tabs), markdown (a pull-request comment) or "
                                         "github (workflow-command annotations).",
                                         show_default=False)],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file "
                                                "(default: stdout).", show_default=False)] = None,
    suppressions: Annotated[Path | None, typer.Option("--suppressions", help="The accepted "
                                                      "findings, shown as suppressed (default: "
                                                      ".nitpicker-baseline.json when there is "
                                                      "one).", show_default=False)] = None,
    verbose: Annotated[bool, typer.Option("--verbose", help="Tracebacks on errors.")] = False,
) -> None:
    """Write an archive's findings (the site checks' and the analyzers') for a CI system:
    SARIF 2.1.0 for code scanning, JUnit XML for a test tab, a Markdown summary for a
    pull-request comment, or GitHub workflow commands that annotate the job.

    Accepted findings (--suppressions) are marked as suppressed: skipped in JUnit, left out
    of the Markdown list and the annotations. To compare with an earlier archive (new and
    fixed findings), use nitpicker diff OLD NEW --format with the same formats.

    Example: nitpicker export site.nitpicker --format sarif -o nitpicker.sarif
    """
    try:
        if format_ not in EXPORT_FORMATS:
            raise ValueError(f"Invalid --format: {format_!r}. Must be one of: "
                             f"{', '.join(EXPORT_FORMATS)}")
        check_output(output, [file])
    except ValueError as exc:
        fail(str(exc))
    accepted = load_suppressions(suppressions)
    export_findings(format_, file, output, suppressions=accepted, verbose=verbose)
