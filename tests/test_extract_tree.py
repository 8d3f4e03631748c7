"""Tests for :mod:`nitpicker.policy.extract.tree`: a page's tree replayed as parse events."""

from __future__ import annotations

import pytest

from nitpicker.policy.extract.tree import parse, replay


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, ...]] = []

    def start(self, tag: str, attrib: object) -> None:
        self.events.append(("start", tag, repr(sorted(dict(attrib).items()))))  # type: ignore[call-overload]

    def end(self, tag: str) -> None:
        self.events.append(("end", tag))

    def data(self, text: str) -> None:
        if self.events and self.events[-1][0] == "data":  # pieces of one text: one event
            self.events[-1] = ("data", self.events[-1][1] + text)
        else:
            self.events.append(("data", text))


def events(html: str) -> list[tuple[str, ...]]:
    recorder = Recorder()
    root = parse(html.encode("utf-8"))
    assert root is not None
    replay(root, recorder.start, recorder.end, recorder.data)
    return recorder.events


def test_events_in_document_order_with_text_and_tails() -> None:
    assert events('<p class="x">a<b>b</b>c</p>') == [
        ("start", "html", "[]"),
        ("start", "body", "[]"),
        ("start", "p", "[('class', 'x')]"),
        ("data", "a"),
        ("start", "b", "[]"),
        ("data", "b"),
        ("end", "b"),
        ("data", "c"),
        ("end", "p"),
        ("end", "body"),
        ("end", "html"),
    ]


def test_comments_and_processing_instructions_are_not_replayed() -> None:
    got = events("<div>A<!-- hidden -->B<?php echo 1 ?>C</div>")
    assert [e for e in got if e[0] != "data"] == [
        ("start", "html", "[]"), ("start", "body", "[]"), ("start", "div", "[]"),
        ("end", "div"), ("end", "body"), ("end", "html"),
    ]
    assert ("data", "ABC") in got


def test_entities_are_text() -> None:
    assert ("data", "a & b < c \u00a0") in events("<p>a &amp; b &lt; c &nbsp;</p>")


def test_implied_elements_are_replayed_as_libxml2_repairs_them() -> None:
    got = events("<title>T</title><li>one<li>two")
    tags = [e[1] for e in got if e[0] == "start"]
    assert tags == ["html", "head", "title", "body", "li", "li"]


@pytest.mark.parametrize("html", ["", "   ", "<!-- only a comment -->", "<!DOCTYPE html>"])
def test_no_element_is_no_root(html: str) -> None:
    assert parse(html.encode()) is None
