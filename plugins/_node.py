"""A long-lived Node process that answers JSON-line requests: the engine of the Node plugins.

markuplint, textlint and Lighthouse are Node tools. Starting Node and loading a tool costs
from a second (markuplint) to several (textlint loads a Japanese dictionary), so each plugin
starts **one** worker process for the whole run and feeds it pages over stdin:

- a request is one line of JSON ``{"id": n, ...}``; the worker answers, in any order, with one
  line ``{"id": n, "result": ...}`` or ``{"id": n, "error": "..."}`` (see
  ``plugins/node/protocol.mjs``), so several threads can have requests in flight at once and
  each waits only for its own answer;
- a worker that died (crashed, killed, out of memory) is started again by the next request;
  the requests that were in flight fail with :class:`NodeWorkerError`, which the host retries
  once (``nitpicker.analyze.plugin``);
- a request that gets no answer within its timeout kills the worker (it is stuck), so the next
  request starts a fresh one. Until a process has answered once, its requests also get
  :data:`START_ALLOWANCE` seconds for it to start: textlint loads its dictionaries before the
  first answer, which takes minutes on a loaded machine, and a per-page timeout that counted
  the start-up killed every fresh process before it could answer (every page an error);
- with ``recycle_after``, a process that served that many requests is replaced by a fresh one
  (it finishes the requests it has, then exits): a tool whose memory grows page after page
  (markuplint keeps 1–2 MB of every page it lints) stays bounded.

The worker scripts import their tools by name: Node finds them in the ``node_modules``
directory that ``npm ci`` fills at the repository's root (an ancestor of the scripts), or, when
the scripts are installed elsewhere, in the directory :func:`find_node_modules` found
(``plugins/node/resolve.mjs``, registered with ``node --import``).
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import logging
import os
import shutil
import signal
import subprocess
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from nitpicker.analyze.plugin import PluginSetupError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = [
    "NODE_SCRIPTS",
    "START_ALLOWANCE",
    "NodeToolsMissingError",
    "NodeWorker",
    "NodeWorkerError",
    "find_node_modules",
]

logger = logging.getLogger(__name__)

#: the worker scripts (``plugins/node/*.mjs``)
NODE_SCRIPTS = Path(__file__).resolve().parent / "node"

#: stderr lines kept to explain a worker's death
_STDERR_TAIL = 20

#: seconds a dead worker's stderr is read for, at most, before its death is reported
_STDERR_WAIT = 5.0

#: seconds a process may take to start (load its tool), on top of a request's timeout, until
#: it has answered once
START_ALLOWANCE = 600.0


class NodeWorkerError(RuntimeError):
    """A request failed: the worker died, hung, or answered with an error."""


class NodeToolsMissingError(PluginSetupError, RuntimeError):
    """Node or the npm packages a plugin needs are not installed (the message says how to
    install them): raised by a factory, it stops ``nitpicker analyze`` before the archive is
    touched."""


def find_node_modules(package: str) -> Path:
    """The ``node_modules`` directory holding ``package``: the first ancestor of the worker
    scripts that has it (the repository's root after ``npm ci``), or the one named by
    ``NITPICKER_NODE_MODULES``. Raises :class:`NodeToolsMissingError` saying how to install."""
    configured = os.environ.get("NITPICKER_NODE_MODULES")
    candidates = [Path(configured)] if configured else [
        parent / "node_modules" for parent in NODE_SCRIPTS.parents]
    for candidate in candidates:
        if (candidate / package / "package.json").is_file():
            return candidate
    if configured:
        raise NodeToolsMissingError(
            f"Node package {package!r} not found in NITPICKER_NODE_MODULES={configured}: point "
            "it at a node_modules directory that has it, or unset it and run `npm ci` in the "
            "nitpicker checkout")
    raise NodeToolsMissingError(
        f"Node package {package!r} not found: run `npm ci` in the nitpicker checkout "
        f"(or set NITPICKER_NODE_MODULES to a node_modules directory that has it)")


def node_executable() -> str:
    """The ``node`` on the PATH, or :class:`NodeToolsMissingError`."""
    found = shutil.which("node")
    if found is None:
        raise NodeToolsMissingError("node not found: install Node.js 20 (apt-get install nodejs npm)")
    return found


class _Process:
    """One started worker: its pipes, its pending requests and the thread reading answers."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], name: str) -> None:
        self.name = name
        self.popen = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=dict(env), cwd=NODE_SCRIPTS)
        self.pending: dict[int, Future[Any]] = {}
        self.lock = threading.Lock()  # guards pending and the stdin writes
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL)
        self.dead = False
        #: whether the process has answered a request (it has started)
        self.answered = False
        #: requests sent to this process
        self.requests = 0
        self._reader = threading.Thread(target=self._read_answers, name=f"{name}-stdout",
                                        daemon=True)
        self._errors = threading.Thread(target=self._read_stderr, name=f"{name}-stderr",
                                        daemon=True)
        self._reader.start()
        self._errors.start()

    @property
    def alive(self) -> bool:
        return not self.dead and self.popen.poll() is None

    def send(self, request_id: int, payload: Mapping[str, Any]) -> Future[Any]:
        future: Future[Any] = Future()
        line = json.dumps({**payload, "id": request_id}, ensure_ascii=False) + "\n"
        stdin = self.popen.stdin
        assert stdin is not None
        with self.lock:
            if self.dead:
                raise NodeWorkerError(f"{self.name} worker is not running")
            self.pending[request_id] = future
            self.requests += 1
            try:
                stdin.write(line.encode("utf-8"))
                stdin.flush()
            except (BrokenPipeError, OSError) as error:
                self.pending.pop(request_id, None)
                raise NodeWorkerError(f"{self.name} worker died: {error}") from error
        return future

    def forget(self, request_id: int) -> None:
        with self.lock:
            self.pending.pop(request_id, None)

    def kill(self) -> None:
        """Kill the worker and what it started (Lighthouse's browsers lead their own process
        groups, so they would outlive it)."""
        if self.popen.poll() is None:
            for pid in _descendants(self.popen.pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            self.popen.kill()
        self.popen.wait()

    def close(self, timeout: float) -> None:
        """End the worker: close its stdin (it exits when its requests are done), then kill."""
        stdin = self.popen.stdin
        try:
            if stdin is not None:
                stdin.close()
            self.popen.wait(timeout)
        except (BrokenPipeError, OSError):
            pass
        except subprocess.TimeoutExpired:
            logger.warning("%s worker did not exit; killing it", self.name)
        self.kill()
        self._reader.join(timeout)
        self._errors.join(timeout)

    def _read_answers(self) -> None:
        stdout: IO[bytes] | None = self.popen.stdout
        assert stdout is not None
        for raw in stdout:
            try:
                answer = json.loads(raw)
                request_id = answer["id"]
            except (ValueError, KeyError, TypeError):
                logger.warning("%s worker wrote a line that is not an answer: %.200r",
                               self.name, raw)
                continue
            with self.lock:
                future = self.pending.pop(request_id, None)
                self.answered = True
            if future is None:  # timed out and forgotten
                continue
            if "error" in answer:
                future.set_exception(NodeWorkerError(str(answer["error"])))
            else:
                future.set_result(answer.get("result"))
        code = self.popen.wait()
        # Its last words: read to the end of stderr (the pipe ends with the process, unless a
        # process of its own still holds it) before they explain its death.
        self._errors.join(_STDERR_WAIT)
        with self.lock:
            self.dead = True
            orphans = list(self.pending.values())
            self.pending.clear()
        if orphans:
            tail = " | ".join(self.stderr_tail)
            error = NodeWorkerError(f"{self.name} worker exited with code {code}: {tail}")
            for future in orphans:
                future.set_exception(error)

    def _read_stderr(self) -> None:
        stderr: IO[bytes] | None = self.popen.stderr
        assert stderr is not None
        for raw in stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                self.stderr_tail.append(line)
                logger.debug("%s: %s", self.name, line)


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (from ``/proc``; none where there is no ``/proc``)."""
    children: dict[int, list[int]] = collections.defaultdict(list)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # ended while we looked
        children[int(fields[1])].append(int(stat.parent.name))
    found: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


class NodeWorker:
    """A client of one Node worker script, safe to call from several threads.

    ``settings`` reach the script as its first argument (JSON). :meth:`request` starts the
    process when it is not running, so a worker that died is replaced on the next call.
    """

    def __init__(self, script: str, settings: Mapping[str, Any], *, name: str,
                 timeout: float, node_modules: Path | None = None,
                 recycle_after: int | None = None,
                 env: Mapping[str, str] | None = None,
                 start_allowance: float = START_ALLOWANCE) -> None:
        self.script = NODE_SCRIPTS / script
        self.settings = dict(settings)
        self.name = name
        self.timeout = timeout
        #: extra seconds for the requests of a process that has not answered yet
        self.start_allowance = start_allowance
        self.env = {**os.environ, **(env or {})}
        if node_modules is not None:  # where plugins/node/resolve.mjs finds the tools
            self.env["NITPICKER_NODE_MODULES"] = str(node_modules)
        #: requests a process serves before a fresh one replaces it (``None``: never)
        self.recycle_after = recycle_after
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._process: _Process | None = None
        self._retiring: list[threading.Thread] = []
        #: how many processes this worker has started (1 + restarts)
        self.starts = 0

    @property
    def pid(self) -> int | None:
        """The running process's id (``None`` before the first request)."""
        process = self._process
        return process.popen.pid if process is not None else None

    def start(self) -> None:
        """Start the process now (else the first request does)."""
        self._running()

    def request(self, payload: Mapping[str, Any]) -> Any:
        """Send one request and wait for its answer; :class:`NodeWorkerError` when the worker
        answers with an error, dies, or does not answer within ``timeout`` seconds."""
        process = self._running()
        request_id = next(self._ids)
        timeout = self.timeout if process.answered else self.timeout + self.start_allowance
        future = process.send(request_id, payload)
        try:
            return future.result(timeout)
        except FutureTimeout as error:
            process.forget(request_id)
            logger.warning("%s worker gave no answer in %ss; restarting it", self.name, timeout)
            process.kill()
            raise NodeWorkerError(
                f"{self.name} worker gave no answer in {timeout:g}s") from error

    def close(self) -> None:
        """Stop the process (waits up to ``timeout`` seconds for it to finish its work)."""
        with self._lock:
            process, self._process = self._process, None
            retiring, self._retiring = self._retiring, []
        if process is not None:
            process.close(min(self.timeout, 10.0))
        for thread in retiring:
            thread.join(self.timeout)

    def _running(self) -> _Process:
        with self._lock:
            process = self._process
            if process is not None and process.alive:
                if self.recycle_after is None or process.requests < self.recycle_after:
                    return process
                # it served its share: it finishes its requests and exits on its own
                logger.info("%s worker served %d requests; starting a fresh one",
                            self.name, process.requests)
                retiring = threading.Thread(target=process.close, args=(self.timeout,),
                                            name=f"{self.name}-retire", daemon=True)
                retiring.start()
                self._retiring = [t for t in self._retiring if t.is_alive()] + [retiring]
            elif process is not None:
                logger.warning("%s worker died (exit code %s); starting it again",
                               self.name, process.popen.poll())
                process.kill()
            argv = [node_executable(), "--import", (NODE_SCRIPTS / "register.mjs").as_uri(),
                    str(self.script), json.dumps(self.settings)]
            process = _Process(argv, self.env, self.name)
            self._process = process
            self.starts += 1
            return process
