"""ContentSigner: the pages' main contents signed in a process of their own (issue 30).

A page's content hash and MinHash signature (:mod:`nitpicker.policy.minhash`) cost about as
much CPU as a fifth of its parse, and most of it is Python and small numpy calls that hold the
GIL. Signed on the reactor thread, it slowed the crawl by the whole of it; signed on the
archive's thread, the reactor thread waited for the GIL instead (``bench/content_facts_cost.py``
measured 11–16 % slower either way). Here the archive's thread hands each text to a child
process (``python -m nitpicker.archive.content_signer``) and takes the signatures back when it
commits, so the work runs on another core with its own interpreter: what is left on the
crawl's threads is writing the text to a pipe and reading 524 bytes a page back.

- **Started lazily**, with the first texts it writes, so a writer that records no main
  content (a merge, the content facts off) starts nothing, and numpy is imported by the
  child, not by the crawl.
- **In order, in batches**: texts are written :data:`BATCH` at a time, and the child answers
  each, in the order written, with one fixed-size record (words, content hash, signature),
  read back when the batch commits. The parent keeps at most :data:`IN_FLIGHT` answers
  outstanding (it reads answers before writing more), so the child's answers never fill the
  pipe and neither side waits for the other forever.
- **Never a stall**: a commit waits for the child at most :data:`WAIT` (50 ms); what it has not
  answered by then (a child still importing numpy, or starved of CPU on a busy machine) is
  signed on the archive's thread, and those answers are dropped when they come. The archive's
  thread holds the writer's lock while it commits, and the reactor thread may be waiting for
  it.
- **Durable as the page**: the page's ``page_content`` row is written with its text
  unsigned and updated with the signature before the batch commits
  (:meth:`~nitpicker.archive.page_recorder.PageRecorder.store_signatures`): a batch is
  committed signed, or not at all.
- **Never the reason a crawl fails**: a child that cannot start or dies (out of memory,
  killed) is logged once and the texts it had not answered, and every later one, are signed
  on the archive's thread, as before.
- When the crawling process is killed, the child reads the end of its input and exits.
"""

from __future__ import annotations

import logging
import os
import select
import shutil
import struct
import subprocess
import sys
import time
from collections import deque
from typing import IO, TYPE_CHECKING, Final

if TYPE_CHECKING:
    from nitpicker.policy.minhash import ContentFingerprint

__all__ = ["BATCH", "IN_FLIGHT", "ContentSigner"]

logger = logging.getLogger(__name__)

IN_FLIGHT: Final = 64
"""Texts written to the child and not yet answered, at most (their answers: 64 × 524 bytes,
within a pipe's 64 KiB buffer, so the child never waits to answer while this side waits to
write)."""
NICENESS: Final = 10
"""How much nicer than the crawl the child runs: it takes the CPU the crawl's threads leave
(the reactor thread sets the crawl's pace; a page's signing can wait for the commit)."""
WAIT: Final = 0.05
"""Seconds a commit (or a full pipe) waits for the child's answers; what is not answered by
then is signed in the crawl's process. The archive's thread holds the writer's lock meanwhile,
and the reactor thread may be waiting for it: a child still starting, or starved of CPU on a
busy machine, must not stall the crawl."""
BATCH: Final = 16
BATCH_BYTES: Final = 256 * 1024
"""Texts are written to the child this many (or this many bytes) at a time, one call each:
a write a page cost the archive's thread ~80 µs of system calls and wake-ups."""

PIPE_BYTES: Final = 1 << 20
"""The texts' pipe is widened to this (Linux's default most, ``/proc/sys/fs/pipe-max-size``),
from 64 KiB: 16 pages' texts often filled 64 KiB, and the archive's thread then waited in
``write`` until the child, niced and starved of CPU by the crawl, read them (12 % of that
thread's time on ``bench/crawl_throughput.py``; the reactor thread then waited for it)."""

_LENGTH: Final = struct.Struct("<I")
_ANSWER: Final = struct.Struct("<iq512s")
"""Words (``-1``: no token), content hash, signature
(:data:`~nitpicker.policy.near_duplicate.PERMUTATIONS` × 4 bytes)."""


class ContentSigner:
    """Signs texts in a child process; :meth:`send` a text under a key, :meth:`collect` the
    signatures of every text sent so far."""

    def __init__(self, *, wait: float = WAIT) -> None:
        self._wait = wait
        self._child: subprocess.Popen[bytes] | None = None
        self._local = False
        """The child failed (or could not start): sign on the calling thread from now on."""
        self._written: deque[tuple[int, str]] = deque()
        """Texts written to the child and not answered yet, in order (key, text)."""
        self._unwritten: list[tuple[int, str]] = []
        self._frames = bytearray()
        """The frames of :attr:`_unwritten`, written in one call."""
        self._skip = 0
        """Answers still to come for texts signed here meanwhile (dropped when they come)."""
        self._inbox = bytearray()
        self._signed: list[tuple[int, ContentFingerprint]] = []
        """Signatures ready before :meth:`collect` asked for them."""

    def send(self, key: int, text: str) -> None:
        """Have ``text`` signed; its signature comes back from :meth:`collect` under ``key``."""
        if self._local:
            self._sign_written_here()  # the child's last texts first: the order is kept
            self._signed.append((key, _sign_here(text)))
            return
        data = text.encode("utf-8", "surrogatepass")
        self._frames += _LENGTH.pack(len(data))
        self._frames += data
        self._unwritten.append((key, text))
        if len(self._unwritten) >= BATCH or len(self._frames) >= BATCH_BYTES:
            self._write()

    def collect(self) -> list[tuple[int, ContentFingerprint]]:
        """The ``(key, fingerprint)`` of every text sent since the last call, in order. Waits
        for the child at most ``wait`` seconds: what it has not answered by then is signed
        here (its answers, when they come, are dropped)."""
        self._write()
        self._read(time.monotonic() + self._wait, written=0)
        self._sign_written_here()
        signed, self._signed = self._signed, []
        return signed

    def close(self) -> None:
        """End the child (its unanswered texts are dropped)."""
        child, self._child = self._child, None
        self._written.clear()
        self._unwritten.clear()
        self._frames.clear()
        self._signed.clear()
        if child is None:
            return
        try:
            if child.stdin is not None:
                child.stdin.close()
            child.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            child.kill()
            child.wait()
        finally:
            if child.stdout is not None:
                child.stdout.close()

    # -- the child ------------------------------------------------------------------------

    def _write(self) -> None:
        """Write the texts not written yet, in one call; when the child has more than
        :data:`IN_FLIGHT` unanswered and does not catch up within ``wait``, sign them here."""
        if not self._unwritten:
            return
        batch, frames = self._unwritten, self._frames
        self._unwritten, self._frames = [], bytearray()
        room = IN_FLIGHT - len(batch)
        if self._child is not None and len(self._written) + self._skip > room:
            self._read(time.monotonic() + self._wait, outstanding=room)
        if self._local or len(self._written) + self._skip > room:
            self._sign_written_here()  # the older texts first: the order is kept
            self._signed.extend((key, _sign_here(text)) for key, text in batch)
            return
        self._written.extend(batch)  # signed here by collect if the child fails
        try:
            if self._child is None:
                self._child = subprocess.Popen(
                    [*_nicer(), sys.executable, "-m", "nitpicker.archive.content_signer"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                    close_fds=True)
                assert self._child.stdin is not None
                _widen(self._child.stdin)
            assert self._child.stdin is not None
            self._child.stdin.write(frames)
            self._child.stdin.flush()
        except (OSError, ValueError) as exc:
            self._fail(exc)

    def _read(self, deadline: float, *, written: int | None = None,
              outstanding: int | None = None) -> None:
        """Take the child's answers as they come, until at most ``written`` texts written are
        unanswered and at most ``outstanding`` answers are still to come (those of texts
        signed here meanwhile included, dropped as they come), or until ``deadline``."""

        def done() -> bool:
            return ((written is None or len(self._written) <= written)
                    and (outstanding is None or len(self._written) + self._skip <= outstanding))

        if self._local or self._child is None or done():
            return
        from nitpicker.policy.minhash import ContentFingerprint  # numpy: only with answers

        assert self._child.stdout is not None
        descriptor = self._child.stdout.fileno()
        size = _ANSWER.size
        while True:
            whole = len(self._inbox) // size
            if whole:
                for words, content_hash, minhash in _ANSWER.iter_unpack(
                        bytes(self._inbox[:whole * size])):
                    if self._skip:
                        self._skip -= 1
                        continue
                    key, _ = self._written.popleft()
                    self._signed.append((key, ContentFingerprint(0, None, None) if words < 0
                                         else ContentFingerprint(words, content_hash, minhash)))
                del self._inbox[:whole * size]
            if done():
                return
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([descriptor], [], [], left)[0]:
                return
            try:
                chunk = os.read(descriptor, 65536)
                if not chunk:
                    raise EOFError(f"exit status {self._child.poll()}")
            except (OSError, EOFError) as exc:
                self._fail(exc)
                return
            self._inbox += chunk

    def _sign_written_here(self) -> None:
        """Sign here the texts written and not answered: their answers are dropped later."""
        if not self._written:
            return
        if not self._local:
            self._skip += len(self._written)
        while self._written:
            key, text = self._written.popleft()
            self._signed.append((key, _sign_here(text)))

    def _fail(self, exc: BaseException) -> None:
        logger.warning("content signer process failed (%s): signing pages in the crawl's "
                       "process", exc)
        self._local = True
        self._skip = 0
        self._inbox.clear()
        child, self._child = self._child, None
        if child is not None:
            child.kill()
            child.wait()
            for stream in (child.stdin, child.stdout):
                if stream is not None:
                    try:
                        stream.close()
                    except OSError:
                        pass


def _widen(pipe: IO[bytes]) -> None:
    """Make ``pipe`` hold :data:`PIPE_BYTES` where the system lets it (Linux); else as is."""
    import fcntl

    resize = getattr(fcntl, "F_SETPIPE_SZ", None)
    if resize is None:
        return
    try:
        fcntl.fcntl(pipe.fileno(), resize, PIPE_BYTES)
    except OSError as exc:  # over a lowered pipe-max-size, or a user's pipe quota used up
        logger.debug("content signer: the pipe stays as it is (%s)", exc)


def _nicer() -> list[str]:
    """``nice -n NICENESS`` when the system has it: the child's start-up (Python, numpy) is as
    nice as its signing, so a crawl's first pages do not wait behind it."""
    found = shutil.which("nice")
    return [found, "-n", str(NICENESS)] if found else []


def _sign_here(text: str) -> ContentFingerprint:
    from nitpicker.policy.minhash import fingerprint

    return fingerprint(text)


def serve(source: IO[bytes], sink: IO[bytes]) -> None:
    """The child's loop: a length-prefixed UTF-8 text in, one fixed-size answer out, until
    the input ends."""
    from nitpicker.policy.minhash import fingerprint

    while True:
        head = source.read(_LENGTH.size)
        if len(head) < _LENGTH.size:
            return
        (length,) = _LENGTH.unpack(head)
        data = source.read(length)
        if len(data) < length:
            return
        signed = fingerprint(data.decode("utf-8", "surrogatepass"))
        if signed.minhash is None or signed.content_hash is None:
            sink.write(_ANSWER.pack(-1, 0, b""))
        else:
            sink.write(_ANSWER.pack(signed.words, signed.content_hash, signed.minhash))
        sink.flush()


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the crawl; the crawl ends us
    if os.nice(0) < NICENESS:  # started without nice(1)
        os.nice(NICENESS)
    serve(sys.stdin.buffer, sys.stdout.buffer)
