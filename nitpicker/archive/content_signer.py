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
- **In order**: the child answers each text, in the order sent, with one fixed-size record
  (words, content hash, signature). The parent keeps at most :data:`IN_FLIGHT` texts
  unanswered (it reads answers before sending more), so the child's answers never fill the
  pipe and neither side waits for the other forever.
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
import struct
import subprocess
import sys
from collections import deque
from typing import IO, TYPE_CHECKING, Final

if TYPE_CHECKING:
    from nitpicker.policy.minhash import ContentFingerprint

__all__ = ["IN_FLIGHT", "ContentSigner"]

logger = logging.getLogger(__name__)

IN_FLIGHT: Final = 64
"""Texts sent and not yet answered, at most (their answers: 64 × 524 bytes, within a pipe's
64 KiB buffer)."""

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
        """Texts sent and not answered yet, in order (key, text)."""
        self._signed: list[tuple[int, ContentFingerprint]] = []
        """Answers read before :meth:`collect` asked for them."""

    def send(self, key: int, text: str) -> None:
        """Have ``text`` signed; its signature comes back from :meth:`collect` under ``key``."""
        if not self._local and len(self._waiting) >= IN_FLIGHT:
            self._read(len(self._waiting) - IN_FLIGHT // 2)
        self._waiting.append((key, text))
        if self._local:  # signed in order, by collect
            return
        data = text.encode("utf-8", "surrogatepass")
        try:
            stdin = self._stdin()
            stdin.write(_LENGTH.pack(len(data)))
            stdin.write(data)
            stdin.flush()
        except (OSError, ValueError) as exc:
            self._fail(exc)

    def collect(self) -> list[tuple[int, ContentFingerprint]]:
        """The ``(key, fingerprint)`` of every text sent since the last call, in order."""
        self._read(len(self._waiting))
        signed, self._signed = self._signed, []
        return signed

    def close(self) -> None:
        """End the child (its unanswered texts are dropped)."""
        child, self._child = self._child, None
        self._waiting.clear()
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

    def _stdin(self) -> IO[bytes]:
        if self._child is None:
            self._child = subprocess.Popen(
                [sys.executable, "-m", "nitpicker.archive.content_signer"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                close_fds=True)
        assert self._child.stdin is not None
        return self._child.stdin

    def _read(self, count: int) -> None:
        """Take ``count`` answers from the child (signed here instead if it has failed)."""
        if not count or not self._waiting:
            return  # every commit asks: numpy is imported only once there are answers
        from nitpicker.policy.minhash import ContentFingerprint

        while count > 0 and self._waiting:
            if self._local or self._child is None:
                key, text = self._waiting.popleft()
                self._signed.append((key, _sign_here(text)))
                count -= 1
                continue
            assert self._child.stdout is not None
            try:
                answer = self._child.stdout.read(_ANSWER.size)
                if len(answer) != _ANSWER.size:
                    raise EOFError(f"exit status {self._child.poll()}")
            except (OSError, EOFError) as exc:
                self._fail(exc)
                continue
            key, _ = self._waiting.popleft()
            words, content_hash, minhash = _ANSWER.unpack(answer)
            self._signed.append((key, ContentFingerprint(0, None, None) if words < 0
                                 else ContentFingerprint(words, content_hash, minhash)))
            count -= 1

    def _fail(self, exc: BaseException) -> None:
        logger.warning("content signer process failed (%s): signing pages in the crawl's "
                       "process", exc)
        self._local = True
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
    serve(sys.stdin.buffer, sys.stdout.buffer)
