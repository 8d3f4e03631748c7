"""nitpicker.archive.frontier_store: the frontier rows of a real archive file."""

from __future__ import annotations

from pathlib import Path

import pytest

from nitpicker.archive import ArchiveWriter, FrontierStore
from nitpicker.archive.frontier_store import DONE, LEASED, PENDING
from nitpicker.policy.urls import frontier_key
from tests.helpers import frontier_entry, frontier_states, writer_config


@pytest.fixture
def frontier(writer: ArchiveWriter) -> FrontierStore:
    return writer.frontier


def test_add_ignores_a_duplicate_key(writer: ArchiveWriter, frontier: FrontierStore) -> None:
    assert frontier.pending == 0
    added = frontier.add(
        [
            frontier_entry("http://example.com/a", 1),
            frontier_entry("https://example.com/a", 1),
            frontier_entry("http://example.com/b", 1),
        ]
    )
    assert added == 2
    assert frontier.pending == 2
    more = [frontier_entry("https://example.com/b", 2), frontier_entry("http://example.com/c", 2)]
    assert frontier.add(more) == 1
    assert frontier.pending == 3
    assert frontier.add([frontier_entry("http://example.com/a", 0)]) == 0
    assert frontier.pending == 3
    rows = writer.conn.execute("SELECT url, depth FROM frontier ORDER BY id").fetchall()
    assert rows == [
        ("http://example.com/a", 1), ("http://example.com/b", 1), ("http://example.com/c", 2),
    ]


def test_add_after_a_rollback_inserts_the_dropped_keys_again(
    writer: ArchiveWriter, frontier: FrontierStore
) -> None:
    frontier.add([frontier_entry("http://example.com/kept", 1)])
    writer.commit()
    frontier.add([frontier_entry("http://example.com/dropped", 1)])
    writer.rollback()
    # The key was sent before the rollback: a memory of it must not skip the insert now.
    assert frontier.add([frontier_entry("http://example.com/dropped", 1)]) == 1
    writer.commit()
    urls = {url for (url,) in writer.conn.execute("SELECT url FROM frontier")}
    assert urls == {"http://example.com/kept", "http://example.com/dropped"}


def test_lease_site_first_shallowest_first_and_marks_leased(
    writer: ArchiveWriter, frontier: FrontierStore
) -> None:
    frontier.add(
        [frontier_entry("http://example.com/deep", 3), frontier_entry("http://example.com/mid", 1),
         frontier_entry("http://example.com/", 0), frontier_entry("http://example.com/mid2", 1, 1)]
    )
    first = frontier.lease(2)
    assert [(url, depth) for _, url, depth, _ in first] == [
        ("http://example.com/", 0), ("http://example.com/mid", 1),
    ]
    assert frontier.pending == 2
    states = dict(writer.conn.execute("SELECT url, state FROM frontier"))
    assert states == {
        "http://example.com/": LEASED, "http://example.com/mid": LEASED,
        "http://example.com/mid2": PENDING, "http://example.com/deep": PENDING,
    }
    second = frontier.lease(10)
    assert [(url, depth, mode) for _, url, depth, mode in second] == [
        ("http://example.com/deep", 3, 0), ("http://example.com/mid2", 1, 1),
    ]
    assert frontier.pending == 0
    assert frontier.lease(10) == []
    frontier.acknowledge(first[0][0])
    state = writer.conn.execute("SELECT state FROM frontier WHERE id = ?", (first[0][0],))
    assert state.fetchone()[0] == DONE


def test_release_leases_returns_unfetched_rows_to_pending(frontier: FrontierStore) -> None:
    frontier.add([frontier_entry(f"http://example.com/{n}", 1) for n in range(5)])
    leased = frontier.lease(3)
    frontier.acknowledge(leased[0][0])
    assert frontier.pending == 2 and frontier.pending_count() == 4
    frontier.release_leases()
    assert frontier.pending == 4 and frontier.pending_count() == 4
    assert [url for _, url, _, _ in frontier.lease(10)] == [
        "http://example.com/1", "http://example.com/2", "http://example.com/3",
        "http://example.com/4",
    ]


def test_claim_takes_a_new_or_pending_row_never_a_leased_or_done_one(
    writer: ArchiveWriter, frontier: FrontierStore
) -> None:
    """A redirect chain may follow into a URL only when no other request has it."""
    frontier.add([frontier_entry(f"http://example.com/{name}", 1)
                  for name in ("pending", "leased", "done")])
    leased = frontier.lease(3)[1:]  # /leased and /done (leased rows are taken in id order)
    frontier.release(frontier_key("http://example.com/pending"))  # it was leased too: back
    frontier.acknowledge(leased[1][0])
    assert frontier.pending == 1
    entry = frontier_entry
    assert frontier.claim(*entry("http://example.com/new", 2)[:3]) is True
    assert frontier.claim(*entry("http://example.com/pending", 2)[:3]) is True
    assert frontier.pending == 0
    assert frontier.claim(*entry("https://example.com/leased", 2)[:3]) is False
    assert frontier.claim(*entry("http://example.com/done", 2)[:3]) is False
    # a claimed URL is not claimed twice, and a link to it adds nothing
    assert frontier.claim(*entry("http://example.com/new", 2)[:3]) is False
    assert frontier.add([entry("http://example.com/new", 3)]) == 0
    states = dict(writer.conn.execute("SELECT url, state FROM frontier"))
    assert states == {
        "http://example.com/pending": LEASED, "http://example.com/leased": LEASED,
        "http://example.com/done": DONE, "http://example.com/new": LEASED,
    }
    # a chain that failed gives its claims back (or gives them up); a recorded one marks them
    # done
    frontier.release(frontier_key("http://example.com/leased"), fetch_again=False)
    frontier.release(frontier_key("http://example.com/new"))
    assert frontier.pending == 1
    assert dict(writer.conn.execute("SELECT url, state FROM frontier"))[
        "http://example.com/leased"] == DONE
    frontier.mark_done(frontier_key("http://example.com/pending"))
    frontier.mark_done(frontier_key("http://example.com/new"))
    assert frontier.pending == 0
    states = dict(writer.conn.execute("SELECT url, state FROM frontier"))
    assert states["http://example.com/pending"] == states["http://example.com/new"] == DONE


def test_reopen_turns_leased_rows_back_to_pending(tmp_path: Path, writer: ArchiveWriter) -> None:
    writer.frontier.add([frontier_entry(f"http://example.com/{n}", n) for n in range(4)])
    leased = writer.frontier.lease(3)
    writer.frontier.acknowledge(leased[0][0])
    writer.close()
    path = Path(writer_config(tmp_path).output)
    assert sorted(frontier_states(path).values()) == [0, 1, 1, 2]

    again = ArchiveWriter.reopen(path)
    try:
        states = dict(again.conn.execute("SELECT url, state FROM frontier"))
        assert states == {
            "http://example.com/0": DONE, "http://example.com/1": PENDING,
            "http://example.com/2": PENDING, "http://example.com/3": PENDING,
        }
        assert again.frontier.pending == 3
        again.runs.start("resume")
        assert again.frontier.pending == 3
        assert [url for _, url, _, _ in again.frontier.lease(10)] == [
            "http://example.com/1", "http://example.com/2", "http://example.com/3",
        ]
    finally:
        again.close()


def test_has_pending_under_a_key_prefix(frontier: FrontierStore) -> None:
    frontier.add([frontier_entry("http://example.com/list/a/1", 1), frontier_entry("http://example.com/other", 1)])
    assert frontier.has_pending_under("//example.com/list/")
    assert frontier.has_pending_under("//example.com/list/a/")
    assert not frontier.has_pending_under("//example.com/list/b/")
    leased = frontier.lease(1)  # a leased row is not fetched yet: still under the prefix
    assert leased[0][1] == "http://example.com/list/a/1"
    assert frontier.has_pending_under("//example.com/list/")
    frontier.acknowledge(leased[0][0])
    assert not frontier.has_pending_under("//example.com/list/")


def test_repromote_queues_new_and_done_rows_for_a_full_crawl(
    writer: ArchiveWriter, frontier: FrontierStore
) -> None:
    frontier.add([frontier_entry("http://example.com/metadata-only", 2, 1)])
    row = frontier.lease(1)[0]
    frontier.acknowledge(row[0])
    assert frontier.pending == 0
    frontier.repromote(["http://example.com/metadata-only", "http://example.com/new"])
    rows = writer.conn.execute("SELECT url, depth, mode, state FROM frontier ORDER BY id")
    assert rows.fetchall() == [
        ("http://example.com/metadata-only", 2, 0, PENDING),
        ("http://example.com/new", 1, 0, PENDING),
    ]
    assert frontier.pending == 2


PREDICTED = 6  # FollowMode.PREDICTED


def test_a_missed_prediction_leaves_no_row_and_its_key_can_be_queued_again(
    writer: ArchiveWriter, frontier: FrontierStore
) -> None:
    frontier.add([frontier_entry("http://example.com/p/3", 2, PREDICTED)])
    [(frontier_id, *_)] = frontier.lease(10)
    assert frontier.drop_prediction(frontier_id) is False
    assert frontier_rows(writer) == []
    assert writer.conn.execute("SELECT count(*) FROM pages").fetchone()[0] == 0
    # Predicted again from another page: not queued, it missed once.
    assert frontier.add([frontier_entry("http://example.com/p/3", 2, PREDICTED)]) == 0
    assert frontier_rows(writer) == []
    # A real link to it found later is queued (its key was forgotten with the row).
    assert frontier.add([frontier_entry("http://example.com/p/3", 3)]) == 1
    assert frontier_rows(writer) == [("http://example.com/p/3", 0, PENDING)]


def test_a_missed_prediction_a_real_link_reached_is_queued_again_as_a_full_crawl(
    writer: ArchiveWriter, frontier: FrontierStore
) -> None:
    frontier.add([frontier_entry("http://example.com/p/3", 2, PREDICTED)])
    [(frontier_id, *_)] = frontier.lease(10)
    # While it was in flight a page linked to it: its stub row exists, its key was known.
    writer.pages.ids({"http://example.com/p/3": (False, 3)})
    assert frontier.add([frontier_entry("http://example.com/p/3", 3)]) == 0
    assert frontier.drop_prediction(frontier_id) is True
    assert frontier_rows(writer) == [("http://example.com/p/3", 0, PENDING)]
    assert frontier.pending == 1
    assert frontier.lease(10) == [(frontier_id, "http://example.com/p/3", 2, 0)]


def test_drop_prediction_leaves_other_rows_alone(
    writer: ArchiveWriter, frontier: FrontierStore
) -> None:
    frontier.add([frontier_entry("http://example.com/p/3", 2)])
    [(frontier_id, *_)] = frontier.lease(10)
    assert frontier.drop_prediction(frontier_id) is False
    assert frontier_rows(writer) == [("http://example.com/p/3", 0, LEASED)]


def frontier_rows(writer: ArchiveWriter) -> list[tuple[str, int, int]]:
    return writer.conn.execute("SELECT url, mode, state FROM frontier ORDER BY id").fetchall()
