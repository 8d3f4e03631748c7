"""ContentSigner: the pages' main contents signed in a process of their own (issue 30).

A page's content hash and MinHash signature (:mod:`nitpicker.policy.minhash`) cost about as
much CPU as a fifth of its parse, and most of it is Python and small numpy calls that hold the
GIL. Signed on the reactor thread, it slowed the crawl by the whole of it; signed on the
archive's thread, the reactor thread waited for the GIL instead (``bench/content_facts_cost.py``
measured 11–16 % slower either way). Here the archive's thread hands each text to a child
process (``python -m nitpicker.archive.content_signer``) and takes the signatures back when it
commits, so the work runs on another core with its own interpreter: what is left on the
crawl's threads is writing the text to a pipe and reading 524 bytes a page back.

- **Started lazily**, at the first text, so a writer that records no main content (a merge, a
  ``--no-render`` check of external URLs, the content facts off) starts nothing, and numpy is
  imported by the child, not by the crawl.
- **In order, in batches**: texts are written :data:`BATCH` at a time, and the child answers
  each, in the order written, with one fixed-size record (words, content hash, signature),
  read back all at once when the batch commits. The parent keeps at most :data:`IN_FLIGHT`
  texts unanswered (it reads answers before writing more), so the child's answers never fill
  the pipe and neither side waits for the other forever.
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
import struct
import subprocess
import sys
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
BATCH: Final = 16
BATCH_BYTES: Final = 256 * 1024
"""Texts are written to the child this many (or this many bytes) at a time, one call each:
a write a page cost the archive's thread ~80 µs of system calls and wake-ups."""

_LENGTH: Final = struct.Struct("<I")
_ANSWER: Final = struct.Struct("<iq512s")
"""Words (``-1``: no token), content hash, signature (:data:`~nitpicker.policy.minhash.PERMUTATIONS`
× 4 bytes)."""


class ContentSigner:
    """Signs texts in a child process; :meth:`send` a text under a key, :meth:`collect` the
    signatures of every text sent so far."""

    def __init__(self) -> None:
        self._child: subprocess.Popen[bytes] | None = None
        self._local = False
        """The child failed (or could not start): sign on the calling thread from now on."""
        self._waiting: deque[tuple[int, str]] = deque()
        """Texts not answered yet, in order (key, text): those written to the child, then
        those still in :attr:`_unwritten`."""
        self._unwritten = bytearray()
        self._unwritten_count = 0
        self._signed: list[tuple[int, ContentFingerprint]] = []
        """Answers read before :meth:`collect` asked for them."""

    def send(self, key: int, text: str) -> None:
        """Have ``text`` signed; its signature comes back from :meth:`collect` under ``key``."""
        self._waiting.append((key, text))
        if self._local:  # signed in order, by collect
            return
        data = text.encode("utf-8", "surrogatepass")
        self._unwritten += _LENGTH.pack(len(data))
        self._unwritten += data
        self._unwritten_count += 1
        if self._unwritten_count >= BATCH or len(self._unwritten) >= BATCH_BYTES:
            self._write()

    def collect(self) -> list[tuple[int, ContentFingerprint]]:
        """The ``(key, fingerprint)`` of every text sent since the last call, in order."""
        self._write()
        self._read(len(self._waiting))
        signed, self._signed = self._signed, []
        return signed

    def close(self) -> None:
        """End the child (its unanswered texts are dropped)."""
        child, self._child = self._child, None
        self._waiting.clear()
        self._signed.clear()
        self._unwritten.clear()
        self._unwritten_count = 0
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
        """Write the texts not written yet, in one call, after reading as many answers as
        keep :data:`IN_FLIGHT` texts or fewer unanswered."""
        count = self._unwritten_count
        if not count or self._local:
            return
        self._read(len(self._waiting) - IN_FLIGHT)  # answers of texts written before
        if self._local:
            return
        try:
            if self._child is None:
                self._child = subprocess.Popen(
                    [sys.executable, "-m", "nitpicker.archive.content_signer"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                    close_fds=True)
            assert self._child.stdin is not None
            self._child.stdin.write(self._unwritten)
            self._child.stdin.flush()
        except (OSError, ValueError) as exc:
            self._fail(exc)
        finally:
            self._unwritten.clear()
            self._unwritten_count = 0

    def _read(self, count: int) -> None:
        """Take the answers of the first ``count`` texts written (signed here instead when the
        child has failed), all in one read."""
        count = min(count, len(self._waiting) - self._unwritten_count)
        if count <= 0:
            return  # every commit asks: numpy is imported only once there are answers
        from nitpicker.policy.minhash import ContentFingerprint

        if not self._local:
            assert self._child is not None and self._child.stdout is not None
            try:
                answers = self._child.stdout.read(count * _ANSWER.size)
                if len(answers) != count * _ANSWER.size:
                    raise EOFError(f"exit status {self._child.poll()}")
            except (OSError, EOFError) as exc:
                self._fail(exc)
            else:
                for words, content_hash, minhash in _ANSWER.iter_unpack(answers):
                    key, _ = self._waiting.popleft()
                    self._signed.append((key, ContentFingerprint(0, None, None) if words < 0
                                         else ContentFingerprint(words, content_hash, minhash)))
                return
        for _ in range(count):
            key, text = self._waiting.popleft()
            self._signed.append((key, _sign_here(text)))

    def _fail(self, exc: BaseException) -> None:
        logger.warning("content signer process failed (%s): signing pages in the crawl's "
                       "process", exc)
        self._local = True
        self._unwritten.clear()
        self._unwritten_count = 0  # their texts wait in order: signed here by _read
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
    os.nice(NICENESS)
    serve(sys.stdin.buffer, sys.stdout.buffer)
