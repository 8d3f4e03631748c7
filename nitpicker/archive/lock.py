"""The archive lock: one writer per archive (SPEC §3.17).

``<archive>.lock`` is created atomically and holds the writer's PID on its first line and the
command that writes (``crawl``, ``analyze``) on its second. A lock whose process is gone is
taken over once; so is a lock that names no process (empty, not a number, ``0``, a negative
number or one past the largest PID: no process can have it, and ``os.kill(-1, 0)`` would
ask about every process). A lock written by an older nitpicker holds only the PID. Readers
never take the lock.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from nitpicker.errors import UserError

__all__ = ["PID_MAX", "ArchiveLock", "ArchiveLockError", "LockHolder", "pid_alive", "valid_pid"]

PID_MAX: Final = 2**31 - 1
"""The largest PID a lock may name: ``pid_t`` is a signed 32-bit integer on Linux, macOS
and the BSDs (Linux's own ceiling, ``/proc/sys/kernel/pid_max``, is at most 2**22)."""

_MAX_LOCK_BYTES: Final = 4096
"""Most of a lock file read: a PID and a command name need a few dozen bytes."""

_NOUNS: Final = {"crawl": "a running crawl", "analyze": "a running analysis"}
"""How the command that holds a lock is named in a message."""


class ArchiveLockError(UserError):
    """Another live process holds the archive."""

    def __init__(self, lock_path: Path, holder_pid: int | None) -> None:
        who = f"PID {holder_pid}" if holder_pid else "an unknown process"
        super().__init__(f"Archive is being used by another process ({who}): {lock_path}")
        self.lock_path = lock_path
        self.holder_pid = holder_pid


@dataclass(frozen=True, slots=True)
class LockHolder:
    """The process a lock file names, and the command it runs (``None``: an older lock)."""

    pid: int
    command: str | None = None

    def describe(self) -> str:
        """``a running crawl (PID 12)``, ``a running analysis (PID 12)``, ``another
        process (PID 12)`` (a lock that does not say)."""
        noun = _NOUNS.get(self.command or "")
        if noun is None:
            noun = f"a running nitpicker {self.command}" if self.command else "another process"
        return f"{noun} (PID {self.pid})"


def valid_pid(text: str) -> int | None:
    """The PID ``text`` names: ASCII digits, ``1 <= pid <= PID_MAX``; else ``None``."""
    text = text.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(PID_MAX)):
        return None
    pid = int(text)
    return pid if 1 <= pid <= PID_MAX else None


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID exists (``False`` for a number no PID can be)."""
    if not 1 <= pid <= PID_MAX:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:  # a pid_t narrower than PID_MAX
        return False
    return True


class ArchiveLock:
    """Holds ``<archive>.lock`` for the life of a writer.

    ``command``: what this process does to the archive (``crawl``, ``analyze``), written into
    the lock so that a command refused meanwhile can say what holds it.
    """

    def __init__(self, archive_path: Path | str, *, command: str = "crawl") -> None:
        self.path = Path(str(archive_path) + ".lock")
        self.command = command
        self._held = False

    def holder_info(self) -> LockHolder | None:
        """The process the lock file names, or ``None`` (no lock, or one naming no PID)."""
        try:
            with self.path.open("rb") as handle:
                raw = handle.read(_MAX_LOCK_BYTES)
        except OSError:
            return None
        lines = raw.decode("utf-8", "replace").splitlines() or [""]
        pid = valid_pid(lines[0])
        if pid is None:
            return None
        command = lines[1].strip() if len(lines) > 1 else ""
        return LockHolder(pid, command if command.isidentifier() else None)

    def holder(self) -> int | None:
        """The PID written in the lock file, or ``None``."""
        info = self.holder_info()
        return info.pid if info else None

    def live_holder_info(self) -> LockHolder | None:
        """The live process holding the lock, or ``None``."""
        info = self.holder_info()
        return info if info is not None and pid_alive(info.pid) else None

    def live_holder(self) -> int | None:
        """The PID of a live process holding the lock, or ``None``."""
        info = self.live_holder_info()
        return info.pid if info else None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock (and the lock file still names this process)."""
        return self._held and self.holder() == os.getpid()

    def acquire(self) -> None:
        for attempt in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                pid = self.holder()
                if attempt == 0 and (pid is None or not pid_alive(pid)) and pid != os.getpid():
                    with contextlib.suppress(FileNotFoundError):
                        self.path.unlink()
                    continue
                raise ArchiveLockError(self.path, pid) from None
            try:
                with os.fdopen(fd, "w") as handle:
                    handle.write(f"{os.getpid()}\n{self.command}\n")
            except OSError:  # a full disk: no empty lock file left behind
                with contextlib.suppress(FileNotFoundError):
                    self.path.unlink()
                raise
            self._held = True
            return

    def release(self) -> None:
        if self._held:
            self._held = False
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
