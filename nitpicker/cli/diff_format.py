"""How ``nitpicker diff`` shows an item of a comparison in one line (the text report, the
gate's lines, the HTML report's tables)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nitpicker.query.diff import ArchiveDiff

__all__ = ["findings_note", "format_item", "no_common_note", "snippet_line"]

_SNIPPET = 80
"""Characters of a finding's code shown in a line."""


def snippet_line(text: str | None) -> str:
    """A finding's code on one line, cut to a readable length."""
    line = " ".join((text or "").split())
    return line if len(line) <= _SNIPPET else line[:_SNIPPET - 1] + "…"


def _show(value: Any) -> str:
    return "none" if value is None else repr(value) if isinstance(value, str) else str(value)


def _status(value: Any, absent: str) -> str:
    return absent if value is None else str(value)


def format_item(category: str, item: dict[str, Any]) -> str:
    """One item as a line of the text report."""
    if category in ("pages_added", "pages_removed"):
        return f"{item['url']}  {_status(item['status'], '-')}  {_show(item['title'])}"
    if category == "page_changes":
        return f"{item['url']}  {item['field']}: {_show(item['old'])} -> {_show(item['new'])}"
    if category in ("new_4xx", "new_5xx"):
        return f"{item['url']}  {_status(item['old_status'], 'not in OLD')} -> {item['new_status']}"
    if category in ("links_added", "links_removed"):
        return f"{item['source_url']} -> {item['dest_url']}"
    if category in ("links_broken", "links_fixed"):
        return (f"{item['source_url']} -> {item['dest_url']}  "
                f"({_status(item['old_status'], 'no link')} -> "
                f"{_status(item['new_status'], 'no link')})")
    if category == "resources_failing":
        return (f"{item['url']} ({item['kind']})  "
                f"{_status(item['old_status'], 'not in OLD')} -> {item['new_status']}")
    if category == "images_lost_alt":
        return f"{item['page_url']}  {item['src']}"
    if category == "trap_caps_new":
        return f"{item['parent_path']}  capped after {item['count']} pages ({item['first_url']})"
    if category.startswith("violations_"):
        where = f" at {item['location']}" if item.get("location") else ""
        if item.get("old_location") and item["old_location"] != item.get("location"):
            where += f" (was {item['old_location']})"
        code = snippet_line(item["code"]) if item["code"] not in ("", "-") else item["message"]
        return (f"{item['url']}  {item['severity']} {item['validator']}/{item['rule']}{where}"
                f"  {code}")
    if category == "values_changed":
        return (f"{item['url']}  {item['plugin']}.{item['key']}: {_show(item['old'])} -> "
                f"{_show(item['new'])}")
    return json.dumps(item, ensure_ascii=False)


def no_common_note(diff: ArchiveDiff) -> str | None:
    """The note for archives with no page in common (allowed: every page is added/removed)."""
    if diff.common_pages:
        return None
    hint = "" if diff.url_map else "; --map OLD_PREFIX=NEW_PREFIX matches a moved site"
    return (f"No URLs in common: OLD ({diff.old['base_url']}) and NEW ({diff.new['base_url']}) "
            f"share no page, so every page is added or removed{hint}")


def findings_note(diff: ArchiveDiff) -> str:
    """Which analyzers' findings were compared, and which ran on one archive only."""
    compared = diff.compared_plugins
    one_side = [f"{plugin} ({side.upper()} only)" for side in ("old", "new")
                for plugin in diff.analysed_plugins(side) if plugin not in compared]
    text = (f"findings: compared for {', '.join(compared)}" if compared
            else "findings: none compared (no analyzer ran on both archives)")
    return text + (f"; not compared: {', '.join(one_side)}" if one_side else "")
