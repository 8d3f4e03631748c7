"""A distributed crawl with the real components: a ``redis-server`` (persistence on) on a
loopback port, two Scrapyd nodes running the project egg, the coordinator
(``nitpicker crawl --frontier … --coordinate``), and ``nitpicker merge``.

The merged archive must hold exactly the page, link and redirect sets of a single-process
``nitpicker crawl --no-render`` of the same roots: with both nodes healthy, with one job killed
with SIGKILL mid-crawl (its leases expire and the other node fetches them), and with Redis
restarted mid-crawl. Leases are short (``NITPICKER_FRONTIER_LEASE_SECONDS``) and chunks small
(``NITPICKER_FRONTIER_CHUNK``) so that both nodes take part and the tests stay fast.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing
from pathlib import Path
from typing import Any

import pytest
import requests

from fixtures.site import FixtureSite
from tests.helpers import run
from tests.redis_server import RedisServer, free_port, running_redis
from tests.scrapyd_server import BIN_DIR, Scrapyd, build_egg, running_scrapyd, tail

NITPICKER = BIN_DIR / "nitpicker"
ROOTS = ("/wide/", "/redirect/", "/recursive/")
JOB_TIMEOUT = 120
LEASE_SECONDS = 2
CHUNK = 8

Sets = tuple[set[str], set[tuple[str, str]], set[tuple[str, str]], set[str]]


def archive_sets(path: Path) -> Sets:
    """(page URLs, links (page, href), redirects (source, destination), recorded URLs)."""
    with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as conn:
        pages = {row[0] for row in conn.execute("SELECT url FROM pages")}
        links = set(conn.execute(
            "SELECT p.url, h.url FROM anchors AS a JOIN pages AS p ON p.id = a.page_id"
            " JOIN pages AS h ON h.id = a.href_id"))
        redirects = set(conn.execute(
            "SELECT p.url, d.url FROM pages AS p JOIN pages AS d ON d.id = p.redirect_dest_id"))
        recorded = {row[0] for row in conn.execute("SELECT url FROM pages WHERE scraped = 1")}
    return pages, links, redirects, recorded


def recorded_count(path: Path) -> int:
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as conn:
            return int(conn.execute(
                "SELECT count(*) FROM pages WHERE fetched_at IS NOT NULL").fetchone()[0])
    except sqlite3.Error:
        return 0


@pytest.fixture(scope="module")
def dsite() -> Iterator[FixtureSite]:
    """A fixture site of this module's own: its ``delay`` is changed by the tests."""
    with FixtureSite() as server:
        yield server


@pytest.fixture(scope="module")
def roots(dsite: FixtureSite) -> list[str]:
    return [dsite.url(path) for path in ROOTS]


@pytest.fixture(scope="module")
def single(roots: list[str], tmp_path_factory: pytest.TempPathFactory) -> Sets:
    """The single-process crawl of the same roots: what every merge must equal."""
    directory = tmp_path_factory.mktemp("single")
    done = run("crawl", *roots, "--no-render", "--retry", "0", "-o", "single", "--silent",
               cwd=directory)
    assert done.returncode == 0, done.stderr
    sets = archive_sets(directory / "single.nitpicker")
    assert len(sets[3]) > 100 and sets[2], "the roots cover many pages and redirects"
    return sets


@pytest.fixture(scope="module")
def nodes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Scrapyd]]:
    """Two Scrapyd nodes on loopback ports, the project egg deployed to each."""
    base = tmp_path_factory.mktemp("nodes")
    egg = build_egg(base)
    with ExitStack() as stack:
        servers = [stack.enter_context(running_scrapyd(base / f"node{n}")) for n in range(2)]
        for server in servers:
            with egg.open("rb") as stream:
                added = requests.post(
                    f"{server.url}/addversion.json",
                    data={"project": "nitpicker", "version": "1"},
                    files={"egg": ("nitpicker.egg", stream, "application/octet-stream")},
                    timeout=120).json()
            assert added.get("status") == "ok", added
        yield servers


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    with running_redis(tmp_path / "redis") as server:
        yield server


def coordinator(roots: list[str], frontier: str, *merge: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(NITPICKER), "crawl", *roots, "--frontier", frontier, "--coordinate", *merge],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def schedule(node: Scrapyd, roots: list[str], frontier: str, output: Path,
             *settings: str) -> str:
    data = [
        ("project", "nitpicker"), ("spider", "site"), ("roots", ",".join(roots)),
        ("frontier", frontier), ("output", str(output)), ("retry", "0"), ("render", "false"),
        ("parallels", "2"),
        ("setting", f"NITPICKER_FRONTIER_LEASE_SECONDS={LEASE_SECONDS}"),
        ("setting", f"NITPICKER_FRONTIER_CHUNK={CHUNK}"),
        *(("setting", setting) for setting in settings),
    ]
    answer = requests.post(f"{node.url}/schedule.json", data=data, timeout=30).json()
    assert answer.get("status") == "ok", answer
    return str(answer["jobid"])


def job_entry(node: Scrapyd, job: str) -> tuple[str, dict[str, Any]] | None:
    listed = node.get("listjobs.json", project="nitpicker")
    for state in ("pending", "running", "finished"):
        for entry in listed.get(state, []):
            if entry.get("id") == job:
                return state, entry
    return None


def wait_finished(node: Scrapyd, job: str) -> None:
    deadline = time.monotonic() + JOB_TIMEOUT
    while time.monotonic() < deadline:
        found = job_entry(node, job)
        if found is not None and found[0] == "finished":
            return
        time.sleep(0.25)
    raise AssertionError(f"job {job} did not finish\n{tail(node.job_log(job), 60)}")


def wait_for(condition: Any, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def finish_coordinator(process: subprocess.Popen[str]) -> str:
    try:
        _, err = process.communicate(timeout=JOB_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        raise AssertionError(f"the coordinator did not see the crawl end:\n{tail(err)}") from None
    assert process.returncode == 0, err
    assert "pending 0, leased 0, done" in err, err
    return err


def merged_sets(shards: list[Path], output: Path, *extra: str) -> Sets:
    done = run("merge", *map(str, shards), "-o", str(output), *extra, cwd=output.parent)
    assert done.returncode == 0, done.stderr
    return archive_sets(output.with_name(output.name + ".nitpicker"))


def assert_same(merged: Sets, single: Sets) -> None:
    for name, got, want in zip(("pages", "links", "redirects", "recorded"), merged, single,
                               strict=True):
        assert got == want, (f"{name} differ: missing {sorted(want - got)[:5]}, "
                             f"extra {sorted(got - want)[:5]}")


def job_log_errors(node: Scrapyd, job: str) -> list[str]:
    return [line for line in node.job_log(job).splitlines()
            if "] ERROR:" in line or "] CRITICAL:" in line]


def test_two_scrapyd_nodes_crawl_shards_that_merge_into_the_single_crawl(
        dsite: FixtureSite, roots: list[str], single: Sets, nodes: list[Scrapyd],
        redis_server: RedisServer, tmp_path: Path) -> None:
    dsite.delay = 0.05
    shards = [tmp_path / f"shard{n}.nitpicker" for n in range(2)]
    merged = tmp_path / "merged.nitpicker"
    coord = coordinator(roots, redis_server.url, "--merge", str(shards[0]), "--merge",
                        str(shards[1]), "-o", str(merged))
    jobs = [schedule(node, roots, redis_server.url, shard)
            for node, shard in zip(nodes, shards, strict=True)]
    for node, job in zip(nodes, jobs, strict=True):
        wait_finished(node, job)
        assert "Spider closed (finished)" in node.job_log(job), tail(node.job_log(job))
        assert job_log_errors(node, job) == []
    err = finish_coordinator(coord)
    assert f"{merged}: 2 shard(s)" in err, err
    assert all(recorded_count(shard) > 0 for shard in shards), "both nodes took part"
    assert_same(archive_sets(merged), single)
    assert_same(merged_sets(shards, tmp_path / "again"), single)


def test_a_job_killed_mid_crawl_is_finished_by_the_other_node(
        dsite: FixtureSite, roots: list[str], single: Sets, nodes: list[Scrapyd],
        redis_server: RedisServer, tmp_path: Path) -> None:
    dsite.delay = 0.05
    coord = coordinator(roots, redis_server.url)
    shards = [tmp_path / f"shard{n}.nitpicker" for n in range(2)]
    victim = schedule(nodes[0], roots, redis_server.url, shards[0])
    wait_for(lambda: recorded_count(shards[0]) >= 10, "the first job's pages")
    survivor = schedule(nodes[1], roots, redis_server.url, shards[1])
    found = job_entry(nodes[0], victim)
    assert found is not None and found[0] == "running", found
    os.kill(int(found[1]["pid"]), signal.SIGKILL)
    wait_finished(nodes[1], survivor)
    assert "Spider closed (finished)" in nodes[1].job_log(survivor)
    finish_coordinator(coord)
    assert recorded_count(shards[1]) > 0
    # A page the victim committed but had not acknowledged is fetched again: --keep-first.
    assert_same(merged_sets(shards, tmp_path / "merged", "--keep-first"), single)


def test_redis_restarted_mid_crawl(dsite: FixtureSite, roots: list[str], single: Sets,
                                   nodes: list[Scrapyd], redis_server: RedisServer,
                                   tmp_path: Path) -> None:
    dsite.delay = 0.1
    coord = coordinator(roots, redis_server.url)
    shards = [tmp_path / f"shard{n}.nitpicker" for n in range(2)]
    jobs = [schedule(node, roots, redis_server.url, shard)
            for node, shard in zip(nodes, shards, strict=True)]
    wait_for(lambda: all(shard.exists() for shard in shards)
             and sum(map(recorded_count, shards)) >= 10, "both jobs crawling")
    redis_server.restart(down_for=1.0)
    for node, job in zip(nodes, jobs, strict=True):
        wait_finished(node, job)
        assert "Spider closed (finished)" in node.job_log(job), tail(node.job_log(job))
    finish_coordinator(coord)
    assert_same(merged_sets(shards, tmp_path / "merged"), single)


def test_a_worker_that_loses_redis_fails_with_network_and_closes_its_shard(
        dsite: FixtureSite, roots: list[str], nodes: list[Scrapyd], redis_server: RedisServer,
        tmp_path: Path) -> None:
    dsite.delay = 0.1
    shard = tmp_path / "shard.nitpicker"
    job = schedule(nodes[0], roots, redis_server.url, shard,
                   "NITPICKER_FRONTIER_RETRY_SECONDS=1")
    wait_for(lambda: recorded_count(shard) >= 5, "pages before Redis goes")
    redis_server.stop()
    wait_finished(nodes[0], job)
    with closing(sqlite3.connect(f"{shard.as_uri()}?mode=ro", uri=True)) as conn:
        status, code, detail = conn.execute(
            "SELECT status, error_code, error_detail FROM runs").fetchone()
    assert (status, code) == ("failed", "network"), detail
    assert "the frontier at redis://127.0.0.1:" in detail
    assert not Path(f"{shard}.lock").exists() and not Path(f"{shard}-wal").exists(), (
        "the shard is closed: one file, no lock")


@pytest.mark.parametrize("coordinate", [False, True])
def test_unreachable_redis_is_one_line_and_writes_nothing(
        roots: list[str], tmp_path: Path, coordinate: bool) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    args = ["crawl", roots[0], "--no-render", "--frontier", url, "-o", "shard"]
    done = run(*args, *(["--coordinate"] if coordinate else []), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: cannot reach the frontier at {url}: ")
    assert not list(tmp_path.iterdir()), "nothing is written"


def test_a_bad_frontier_url_is_named(roots: list[str], tmp_path: Path) -> None:
    done = run("crawl", roots[0], "--no-render", "--frontier", "http://127.0.0.1:1/0",
               "--coordinate", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: --frontier: not a Redis URL: 'http://127.0.0.1:1/0' (expected redis://host:port/db)"]


@pytest.mark.parametrize(("extra", "named"), [
    (["--workers", "2"], "--workers"),
    (["--baseline", "old.nitpicker"], "--baseline"),
    (["--list", "http://127.0.0.1:1/a"], "--list"),
])
def test_frontier_refuses_the_options_of_a_one_archive_crawl(
        roots: list[str], tmp_path: Path, extra: list[str], named: str) -> None:
    """``--workers N`` shares one archive, a distributed crawl's workers share Redis: together
    they are one line naming the option, before anything is written or Redis is asked."""
    done = run("crawl", roots[0], "--no-render", "--frontier", "redis://127.0.0.1:1/0",
               "-o", "shard", *extra, cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"Error: --frontier cannot be used with {named}"]
    assert not list(tmp_path.iterdir()), "nothing is written"
