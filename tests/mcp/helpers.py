"""What the MCP server tests share with their fixtures: an archive file and its fingerprint."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ArchiveFile:
    """An archive on disk, and what its file looked like right after the crawl."""

    path: Path
    mtime_ns: int
    size: int
    sha256: str

    @classmethod
    def record(cls, path: Path) -> ArchiveFile:
        stat = path.stat()
        return cls(path, stat.st_mtime_ns, stat.st_size, _sha256(path))

    def assert_untouched(self) -> None:
        """The file is byte for byte what the crawl wrote, and no journal appeared beside it."""
        stat = self.path.stat()
        assert (stat.st_mtime_ns, stat.st_size) == (self.mtime_ns, self.size), (
            f"{self.path.name}: mtime or size changed")
        assert _sha256(self.path) == self.sha256, f"{self.path.name}: bytes changed"
        for suffix in ("-wal", "-shm", "-journal"):
            journal = self.path.with_name(self.path.name + suffix)
            assert not journal.exists(), f"{journal.name} appeared"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
