"""Credentials in a root URL and ``--header``: sent in scope only, never stored, never shown.

Crawls the auth fixture site (``fixtures/auth.py``) over plain HTTP and in the real Chromium,
and reads what the site received: every in-scope request carries the root's Basic auth and
the ``--header``; no request to the other host, outside the root, or on a redirect hop that
leaves scope does; the archive's bytes and the crawl's output hold neither secret.
"""

from __future__ import annotations

import base64
import logging
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted

from fixtures.auth import EMPTY_USER, PASSWORD, TOKEN, TOKEN_HEADER, USER, AuthSite
from nitpicker.render.chromium import find_chromium
from tests.helpers import crawl, run

if TYPE_CHECKING:
    from collections.abc import Iterator

    from tests.helpers import Archive

HEADER = f"{TOKEN_HEADER}: {TOKEN}"
SECRETS = (
    PASSWORD, "pa%5Dss", base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode(), TOKEN,
)
"""What must appear nowhere: the password (as typed and as percent-encoded), the Basic
token, the header value."""

needs_chromium = pytest.mark.skipif(
    find_chromium() is None and not os.environ.get("CI"),
    reason="Chromium is not installed (make test installs it; CI requires it)",
)


@pytest.fixture(scope="module")
def auth_site() -> Iterator[AuthSite]:
    with AuthSite() as server:
        yield server


@pytest.fixture
def fresh(auth_site: AuthSite) -> AuthSite:
    auth_site.clear_log()
    return auth_site


def assert_no_secret(data: bytes | str, where: str) -> None:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} found in {where}"


def archive_bytes(archive: Archive) -> bytes:
    """The archive file, with its WAL (the crawl folds it in at close)."""
    archive.conn.close()
    data = archive.path.read_bytes()
    wal = archive.path.with_name(archive.path.name + "-wal")
    return data + (wal.read_bytes() if wal.exists() else b"")


def check_scoped(site: AuthSite, *, whole: bool = True) -> None:
    """What every crawl of ``/private/`` must show: in scope, the credentials and the header
    on every request; elsewhere, neither. ``whole``: the crawl fetched every page."""
    auth = site.authorization()
    inside = site.requests("localhost", "/private/")
    assert {r.path for r in inside} >= {
        "/private/page-a", "/private/hop", "/private/page-b", "/private/leave",
        "/private/sideways", *(["/private/"] if whole else []),
    }
    for r in inside:
        assert (r.path, r.authorization, r.token) == (r.path, auth, TOKEN)
    others = site.requests("127.0.0.1") + site.requests("localhost", "/public/")
    # a redirect hop leaving scope, to another host (/landing) or on the same host
    # (/public/sideways, where Scrapy's redirect would keep the Authorization header)
    assert {r.path for r in others} >= {"/external", "/landing", "/public/outside",
                                        "/public/sideways"}
    for r in others:
        assert (r.path, r.authorization, r.token) == (r.path, None, None)


@pytest_twisted.ensureDeferred
async def test_no_render_sends_credentials_and_header_in_scope_only(
    fresh: AuthSite, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    archive = await crawl(tmp_path, [fresh.root()], headers=(HEADER,))
    check_scoped(fresh)
    top = archive.page(fresh.url("/private/"))
    assert (top["status"], top["title"]) == (200, "Private Top")
    assert archive.page(fresh.url("/private/page-b"))["status"] == 200  # through the hop
    assert archive.page(fresh.url("/private/page-a"))["title"] == "Private A"
    stored = archive.rows("SELECT roots, config FROM info")[0]
    assert fresh.url("/private/") in stored["roots"]
    assert TOKEN_HEADER in stored["config"] and USER in stored["config"]
    assert_no_secret(archive_bytes(archive), "the archive")
    assert_no_secret(caplog.text, "the log")


@pytest_twisted.ensureDeferred
async def test_empty_password_and_inherited_by_a_deeper_root(
    fresh: AuthSite, tmp_path: Path
) -> None:
    empty = fresh.root("/empty/", EMPTY_USER, "")
    assert f"//{EMPTY_USER}:@" in empty
    # /empty/child is a root of its own, without credentials: it inherits those of /empty/.
    archive = await crawl(tmp_path, [empty, fresh.url("/empty/child")])
    assert archive.page(fresh.url("/empty/"))["status"] == 200
    assert archive.page(fresh.url("/empty/child"))["status"] == 200
    assert {r.authorization for r in fresh.requests("localhost", "/empty/")} == {
        fresh.authorization(EMPTY_USER, "")}


@pytest_twisted.ensureDeferred
async def test_without_credentials_the_site_refuses(fresh: AuthSite, tmp_path: Path) -> None:
    """The fixture really asks: the same crawl without credentials gets 401."""
    archive = await crawl(tmp_path, [fresh.url("/private/")], headers=(HEADER,))
    assert archive.page(fresh.url("/private/"))["status"] == 401


@needs_chromium
@pytest_twisted.ensureDeferred
async def test_rendered_pages_and_their_resources_get_them_in_scope_only(
    fresh: AuthSite, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    archive = await crawl(tmp_path, [fresh.root()], headers=(HEADER,), render=True)
    check_scoped(fresh)
    auth = fresh.authorization()
    top = archive.page(fresh.url("/private/"))
    assert (top["status"], top["title"]) == (200, "Private Top")
    # The browser's requests: the page's own resources, the same host's outside the root.
    loaded = {r.path: r for r in fresh.requests("localhost") if r.path.endswith((".png", ".css"))}
    assert set(loaded) >= {"/private/pixel.png", "/private/site.css", "/static/logo.png",
                           "/private/bounce.png"}
    for r in loaded.values():
        assert (r.path, r.authorization, r.token) == (r.path, auth, TOKEN)
    # The other host's resources, the hop of an in-scope image that leaves for it included.
    elsewhere = {r.path: r for r in fresh.requests("127.0.0.1") if r.path.endswith(".png")}
    assert set(elsewhere) >= {"/ext-pixel.png", "/bounced.png"}
    for r in elsewhere.values():
        assert (r.path, r.authorization, r.token) == (r.path, None, None)
    # The page's resources as the browser got them: with the credentials, not a 401.
    statuses = {r["url"]: r["status"] for r in archive.rows("SELECT url, status FROM resources")}
    assert {url: statuses.get(url) for url in (
        fresh.url("/private/site.css"), fresh.url("/private/pixel.png"),
        fresh.url("/static/logo.png"), fresh.url("/private/bounce.png"),
        f"{fresh.external_url}/bounced.png")} == {
        fresh.url("/private/site.css"): 200, fresh.url("/private/pixel.png"): 200,
        fresh.url("/static/logo.png"): 200, fresh.url("/private/bounce.png"): 302,
        f"{fresh.external_url}/bounced.png": 200}
    assert_no_secret(archive_bytes(archive), "the archive")
    assert_no_secret(caplog.text, "the log")


def test_cli_crawl_output_and_archive_hold_no_secret(fresh: AuthSite, tmp_path: Path) -> None:
    result = run("crawl", fresh.root(), "--header", HEADER, "-o", "out", "--verbose",
                 cwd=tmp_path)
    assert result.returncode in (0, 2), result.stderr
    assert_no_secret(result.stdout + result.stderr, "the command's output")
    archive = tmp_path / "out.nitpicker"
    assert_no_secret(archive.read_bytes(), "the archive")
    conn = sqlite3.connect(archive)
    try:
        assert conn.execute("SELECT status FROM pages WHERE url = ?",
                            (fresh.url("/private/"),)).fetchone() == (200,)
    finally:
        conn.close()


def test_cli_root_with_a_password_typed_raw(fresh: AuthSite, tmp_path: Path) -> None:
    """The password pa]ss@:%é typed as it is, not percent-encoded: the root is the host after
    the last @, as a browser's address bar reads it (it was refused: Invalid URL)."""
    raw = f"http://{USER}:{PASSWORD}@localhost:{fresh.port}/private/"
    result = run("crawl", raw, "-o", "raw", cwd=tmp_path)
    assert result.returncode in (0, 2), result.stderr
    assert_no_secret(result.stdout + result.stderr, "the command's output")
    assert_no_secret((tmp_path / "raw.nitpicker").read_bytes(), "the archive")
    [root] = fresh.requests("localhost", "/private/")[:1]
    assert (root.path, root.authorization) == ("/private/", fresh.authorization())
    conn = sqlite3.connect(tmp_path / "raw.nitpicker")
    try:
        assert conn.execute("SELECT status FROM pages WHERE url = ?",
                            (fresh.url("/private/"),)).fetchone() == (200,)
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("X-Token tok-3141-secret", 'must be "Name: value"'),
        ("X-Token: tok-3141\nsecret", "line break"),
        ("X-Token: tok-3141\rsecret", "line break"),
        ("Bad Name: tok-3141-secret", "is not a header name"),
    ],
)
def test_cli_refuses_a_malformed_header_in_one_line(
    header: str, message: str, fresh: AuthSite, tmp_path: Path
) -> None:
    result = run("crawl", fresh.root(), "--header", header, "-o", "out", cwd=tmp_path)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0], lines
    assert "tok-3141" not in result.stderr and "secret" not in result.stderr
    assert not (tmp_path / "out.nitpicker").exists()
    assert fresh.requests() == []


def test_cli_invalid_root_with_credentials_hides_the_password(tmp_path: Path) -> None:
    result = run("crawl", f"http://{USER}:topsecret@exa mple.com/", cwd=tmp_path)
    assert result.returncode != 0
    assert "topsecret" not in result.stderr
    assert f"{USER}:…@exa mple.com" in result.stderr


def test_cli_header_file_is_repeated_header(fresh: AuthSite, tmp_path: Path) -> None:
    """--header-file: one header a line, # comments and blank lines ignored; sent in scope
    only, the name stored, never the value; given again on --resume as --header is."""
    (tmp_path / "headers.txt").write_text(f"# the CMS token\n\n{HEADER}\nX-Extra: 1\n",
                                          encoding="utf-8")
    result = run("crawl", fresh.root(), "--header-file", "headers.txt", "-o", "out",
                 "--max-pages", "3", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert_no_secret(result.stdout + result.stderr, "the command's output")
    archive = tmp_path / "out.nitpicker"
    assert_no_secret(archive.read_bytes(), "the archive")
    assert _stored(archive)["headers"] == [TOKEN_HEADER, "X-Extra"]
    inside = fresh.requests("localhost", "/private/")
    assert inside and all(r.token == TOKEN for r in inside)
    assert all(r.token is None for r in fresh.requests("127.0.0.1"))
    resumed = run("crawl", "--resume", str(archive), "--header-file", "headers.txt",
                  fresh.root(), "--max-pages", "1", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (f"# ok\n{HEADER}\n{TOKEN_HEADER} {TOKEN}\n",
         (f'Error: Header file headers.txt, line 3: header must be "Name: value", got '
         f'"{TOKEN_HEADER}…" (no colon)')),
        (f"Bad Name: {TOKEN}\n", ('Error: Header file headers.txt, line 1: header name "Bad '
                                  'Name" is not a header name')),
        ("# only a comment\n\n", "Error: No headers found in header file: headers.txt"),
        (None, "Error: Cannot read header file: headers.txt (No such file or directory)"),
    ],
)
def test_cli_header_file_bad_lines(fresh: AuthSite, tmp_path: Path, content: str | None,
                                   message: str) -> None:
    if content is not None:
        (tmp_path / "headers.txt").write_text(content, encoding="utf-8")
    result = run("crawl", fresh.root(), "--header-file", "headers.txt", "-o", "out",
                 cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), lines
    assert TOKEN not in result.stderr
    assert not (tmp_path / "out.nitpicker").exists()
    assert fresh.requests() == []


def _stored(path: Path) -> dict[str, Any]:
    import json

    conn = sqlite3.connect(path)
    try:
        return dict(json.loads(conn.execute("SELECT config FROM info").fetchone()[0]))
    finally:
        conn.close()


def test_resume_needs_the_secrets_given_again(fresh: AuthSite, tmp_path: Path) -> None:
    first = run("crawl", fresh.root(), "--header", HEADER, "-o", "out", "--max-pages", "1",
                cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    archive = tmp_path / "out.nitpicker"
    stored = _stored(archive)
    assert stored["headers"] == [TOKEN_HEADER]
    assert stored["credentials"] == [[fresh.url("/private/"), USER]]

    bare = run("crawl", "--resume", str(archive), cwd=tmp_path)
    assert bare.returncode == 1 and TOKEN_HEADER in bare.stderr, bare.stderr
    no_creds = run("crawl", "--resume", str(archive), "--header", HEADER, cwd=tmp_path)
    assert no_creds.returncode == 1, no_creds.stderr
    assert f"user '{USER}'" in no_creds.stderr and fresh.url("/private/") in no_creds.stderr
    malformed = run("crawl", "--resume", str(archive), "--header", f"{TOKEN_HEADER} {TOKEN}",
                    fresh.root(), cwd=tmp_path)
    assert malformed.returncode == 1 and "(no colon)" in malformed.stderr, malformed.stderr
    fresh.clear_log()
    resumed = run("crawl", "--resume", str(archive), "--header", HEADER, fresh.root(),
                  cwd=tmp_path)
    assert resumed.returncode in (0, 2), resumed.stderr
    check_scoped(fresh, whole=False)  # the root was crawled before
    for output in (bare, no_creds, malformed, resumed):
        assert_no_secret(output.stdout + output.stderr, "the command's output")
    assert_no_secret(archive.read_bytes(), "the archive")


def test_scrapy_crawl_site_takes_credentials_and_headers(fresh: AuthSite, tmp_path: Path) -> None:
    """``scrapy crawl site -a roots=<root with credentials> -a header=…``: one header a line."""
    import subprocess
    import sys

    root_dir = Path(__file__).resolve().parents[1]
    output = tmp_path / "s.nitpicker"
    env = {k: v for k, v in os.environ.items() if k not in ("SCRAPY_SETTINGS_MODULE", "SCRAPY_PROJECT")}
    done = subprocess.run(
        [str(Path(sys.executable).parent / "scrapy"), "crawl", "site",
         "-a", f"roots={fresh.root()}", "-a", f"header={HEADER}\nX-Second: two",
         "-a", f"output={output}", "-a", "retry=0", "-a", "render=false"],
        cwd=root_dir, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    check_scoped(fresh)
    assert _stored(output)["headers"] == [TOKEN_HEADER, "X-Second"]
    assert_no_secret(done.stdout + done.stderr, "scrapy's output")
    assert_no_secret(output.read_bytes(), "the archive")


def test_append_needs_the_secrets_given_again(fresh: AuthSite, tmp_path: Path) -> None:
    from nitpicker.crawl.config import ConfigError
    from nitpicker.crawl.config_builder import GivenOptions, append_config

    first = run("crawl", fresh.root(), "--header", HEADER, "-o", "out", "--max-pages", "1",
                cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    archive = tmp_path / "out.nitpicker"
    empty = fresh.root("/empty/", EMPTY_USER, "")
    with_header = GivenOptions({"headers": [HEADER]}, frozenset({"headers"}))
    with pytest.raises(ConfigError, match=f"user '{USER}'"):
        append_config(archive, [empty], with_header)
    with pytest.raises(ConfigError, match="must be given again"):
        append_config(archive, [empty, fresh.root()], GivenOptions({}))
    config = append_config(archive, [empty, fresh.root()], with_header)
    assert config.append == (fresh.url("/empty/"),)
    assert {root: (user, pw) for root, user, pw in config.credentials} == {
        fresh.url("/private/"): (USER, PASSWORD), fresh.url("/empty/"): (EMPTY_USER, "")}
    assert config.request_headers == ((TOKEN_HEADER, TOKEN),)


def test_retry_failed_needs_the_secrets_given_again(fresh: AuthSite, tmp_path: Path) -> None:
    from nitpicker.crawl.config import ConfigError
    from nitpicker.crawl.config_builder import GivenOptions, retry_failed_config

    first = run("crawl", fresh.root(), "--header", HEADER, "-o", "out", "--max-pages", "1",
                cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    archive = tmp_path / "out.nitpicker"
    with_header = GivenOptions({"headers": [HEADER]}, frozenset({"headers"}))
    with pytest.raises(ConfigError, match=f"user '{USER}'"):
        retry_failed_config(archive, with_header)
    config = retry_failed_config(archive, with_header.with_values(roots=(fresh.root(),)))
    assert config.credentials == ((fresh.url("/private/"), USER, PASSWORD),)
    assert config.retry_failed
