"""The facts of a fetched page that only the site checks read (migration ``0029_site_audit``):
its hreflang alternates (``hreflang_links``) and the first form of an https page that submits
over http (``pages.http_form_action``). Written by
:class:`~nitpicker.archive.page_recorder.PageRecorder` with the page's other child rows, in
its transaction."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import sqlite3

    from nitpicker.items import PageItem

__all__ = ["record_page_audit"]

_HREFLANG: Final = "INSERT INTO hreflang_links(page_id, lang, url) VALUES (?, ?, ?)"
_FORM_ACTION: Final = "UPDATE pages SET http_form_action = ? WHERE id = ?"


def record_page_audit(conn: sqlite3.Connection, page_id: int, item: PageItem, *,
                      fetched_before: bool) -> None:
    """``item``'s hreflang alternates and http form action (those of an earlier fetch of the
    page are gone already: ``hreflang_links`` is one of its replaced children; the form action
    is set, or cleared when ``fetched_before``)."""
    if item.meta.hreflang:
        conn.executemany(_HREFLANG, [(page_id, lang, url) for lang, url in item.meta.hreflang])
    if item.http_form_action is not None or fetched_before:
        conn.execute(_FORM_ACTION, (item.http_form_action, page_id))
