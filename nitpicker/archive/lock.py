"""The archive lock: one writer per archive (SPEC §3.17).

``<archive>.lock`` is created atomically and holds the writer's PID. A lock whose process
is gone is taken over once. Readers never take the lock.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

__all__ = ["ArchiveLock", "ArchiveLockError", "pid_alive"]


class ArchiveLockError(Exception):
    """Another live process holds the archive."""

    def __init__(self, lock_path: Path, holder_pid: int | None) -> None:
        who = f"PID {holder_pid}" if holder_pid else "an unknown process"
        super().__init__(f"Archive is being used by another process ({who}): {lock_path}")
        self.lock_path = lock_path
        self.holder_pid = holder_pid


def pid_alive(pid: int) -> bool:
    """Whether a process with this PID exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class ArchiveLock:
    """Holds ``<archive>.lock`` for the life of a writer."""

    def __init__(self, archive_path: Path | str) -> None:
        self.path = Path(str(archive_path) + ".lock")
        self._held = False

    def holder(self) -> int | None:
        """The PID written in the lock file, or ``None``."""
        try:
            return int(self.path.read_text().strip() or 0) or None
        except (OSError, ValueError):
            return None

    def live_holder(self) -> int | None:
        """The PID of a live process holding the lock, or ``None``."""
        pid = self.holder()
        return pid if pid is not None and pid_alive(pid) else None

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
                    handle.write(str(os.getpid()))
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
