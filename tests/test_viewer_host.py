"""``nitpicker view --host``: every spelling of a loopback address or of ``localhost`` turns
the ``Host`` check (DNS rebinding) on, as ``--host 127.0.0.1`` does (``nitpicker/cli/view.py``).
"""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest

from nitpicker.cli.view import is_loopback, normalise_host
from tests.helpers import ChangesCrawls
from tests.viewer_process import Viewer


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


needs_ipv6 = pytest.mark.skipif(not _has_ipv6_loopback(), reason="no IPv6 loopback")


@pytest.fixture(scope="module")
def archive(changes_crawls: ChangesCrawls, tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("view-host") / "site.nitpicker"
    shutil.copyfile(changes_crawls.old, copy)
    return copy


@pytest.mark.parametrize("host", [
    "127.0.0.1", "LOCALHOST", "LocalHost", "localhost.", "127.1", "0x7f.1", "0177.0.0.1",
    "2130706433", "127.0.0.1.", "::ffff:127.0.0.1",
    pytest.param("[::1]", marks=needs_ipv6), pytest.param("0:0:0:0:0:0:0:1", marks=needs_ipv6),
])
def test_a_loopback_viewer_refuses_a_foreign_host_however_host_is_spelled(
        archive: Path, host: str) -> None:
    viewer = Viewer(str(archive), "--host", host, "--port", "0")
    try:
        port = viewer.url.rsplit(":", 1)[1].rstrip("/")
        foreign = viewer.get("/a/0/", headers={"Host": f"rebound.example:{port}"})
        own = viewer.get("/a/0/")  # the URL it printed: the address it is bound to
        by_name = viewer.get("/a/0/", headers={"Host": f"localhost:{port}"})
    finally:
        code, err = viewer.stop()
    assert foreign.status_code == 400, foreign.text
    assert foreign.text.startswith("Invalid Host header: 'rebound.example:")
    assert own.status_code == 200 and by_name.status_code == 200
    assert code == 0 and "Warning" not in err and "Traceback" not in err, err


def test_a_viewer_on_the_network_warns_and_answers_any_host(archive: Path) -> None:
    viewer = Viewer(str(archive), "--host", "0.0.0.0", "--port", "0")
    try:
        answer = viewer.get("/a/0/", headers={"Host": "some.name"})
    finally:
        _, err = viewer.stop()
    assert answer.status_code == 200
    assert "Warning: listening on 0.0.0.0: anyone who can reach this address" in err


@pytest.mark.parametrize(("host", "loopback"), [
    ("LOCALHOST", True), ("localhost.", True), ("127.1", True), ("0x7f.1", True),
    ("0x7F000001", True), ("017700000001", True), ("2130706433", True), ("127.0.0.1.", True),
    ("[::1]", True), ("0:0:0:0:0:0:0:1", True), ("::ffff:127.0.0.1", True),
    ("::ffff:7f00:1", True), ("0.0.0.0", False), ("0", False), ("10.1", False),
    ("127.0.0.1 evil", False), ("localhost.example", False), ("::ffff:10.0.0.1", False),
    ("", False), ("١٢٧.0.0.1", False),
])
def test_loopback_spellings(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


@pytest.mark.parametrize(("host", "normal"), [
    ("LocalHost.", "localhost"), ("[::1]", "::1"), (" 127.0.0.1 ", "127.0.0.1"), (".", "."),
])
def test_normalise_host(host: str, normal: str) -> None:
    assert normalise_host(host) == normal
