"""``nitpicker analyze``'s progress: one rich line per plugin — done/total, rate, findings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Self

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

if TYPE_CHECKING:
    from collections.abc import Iterable
    from types import TracebackType

    from rich.console import Console

__all__ = ["RichProgress", "SilentProgress"]


class SilentProgress:
    """``--silent``: counts, draws nothing."""

    def __init__(self) -> None:
        self._done: dict[str, int] = {}

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        return None

    def start(self, name: str, label: str, total: int) -> None:
        self._done[name] = 0

    def advance(self, name: str, findings: int, error: bool) -> None:
        self._done[name] = self._done.get(name, 0) + 1

    def finish(self, name: str) -> None:
        return None

    def done(self, names: Iterable[str]) -> int:
        """The calls recorded so far under ``names`` (a plugin's name: its pages; Ctrl-C's
        message), the finished plugins' and the running one's alike."""
        return sum(self._done.get(name, 0) for name in names)


class RichProgress(SilentProgress):
    """A rich progress display: ``label  ━━━━  done/total  pages/s  findings  errors``."""

    def __init__(self, console: Console) -> None:
        super().__init__()
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("{task.fields[findings]} findings"),
            TextColumn("{task.fields[errors]} errors"),
            TimeElapsedColumn(),
            console=console,
        )
        self._tasks: dict[str, TaskID] = {}
        self._counts: dict[str, list[int]] = {}

    def __enter__(self) -> Self:
        self._progress.__enter__()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._progress.__exit__(exc_type, exc, tb)

    def start(self, name: str, label: str, total: int) -> None:
        super().start(name, label, total)
        self._counts[name] = [0, 0]
        self._tasks[name] = self._progress.add_task(
            f"{name}: {label}" if label != name else name, total=total, findings=0, errors=0,
            rate="")

    def advance(self, name: str, findings: int, error: bool) -> None:
        super().advance(name, findings, error)
        counts = self._counts[name]
        counts[0] += findings
        counts[1] += int(error)
        task = self._tasks[name]
        speed = self._progress.tasks[task].speed
        fields: dict[str, Any] = {"findings": counts[0], "errors": counts[1],
                                  "rate": f"{speed:.1f} pages/s" if speed else ""}
        self._progress.update(task, advance=1, **fields)

    def finish(self, name: str) -> None:
        super().finish(name)
        self._progress.refresh()
