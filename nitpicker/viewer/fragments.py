"""HTML fragments the viewer's templates call, and its Jinja2 environment.

Links to a page detail, table rows of the page detail and the Links view, pagers and the
navigation bar are built here in Python rather than by template loops and macros: a page
detail has hundreds of crawled strings, and a loop iteration or a macro call in Jinja costs
several times a Python function's. Every crawled string is escaped (:func:`escape_html`).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup

from nitpicker.viewer.compare import OLD_URL_FIELDS, URL_FIELDS
from nitpicker.viewer.views import PAGE_SIZE

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

__all__ = ["NAV", "SRC_SHOWN", "environment", "escape_html", "query_value"]


def _href(path: str, **params: Any) -> str:
    """A viewer URL: ``path`` with the non-empty ``params`` as its query string."""
    query = urlencode({k: v for k, v in params.items() if v not in (None, "")})
    return f"{path}?{query}" if query else path


def _with_param(path: str, query: dict[str, str], name: str, value: int) -> str:
    """``path`` with the request's ``query``, its ``name`` set to ``value`` (1: left out)."""
    return _href(path, **{**query, name: "" if value == 1 else value})


_HTML_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&#34;"), ("'", "&#39;"))

_QUOTED = re.compile(r"[^A-Za-z0-9_.~:/-]")
"""A character :func:`urllib.parse.quote` (``safe=":/"``) would encode."""


def escape_html(value: object) -> str:
    """``value`` as HTML text, as markupsafe's ``escape`` writes it (``&#34;``, ``&#39;``) but a
    plain ``str``: the row builders escape hundreds of crawled strings a page detail, and five
    ``str.replace`` calls cost a fraction of ``escape``'s round trip through ``Markup``."""
    text = value if type(value) is str else str(value)
    for char, entity in _HTML_ESCAPES:
        if char in text:
            text = text.replace(char, entity)
    return text


def query_value(url: str) -> str:
    """``url`` as a query-string value. ":" and "/" may stand in a query string (RFC 3986
    §3.4): left as they are, most URLs need no encoding, and are not run through ``quote``;
    what it does encode leaves nothing HTML would read as markup."""
    return quote(url, safe=":/") if _QUOTED.search(url) else url


def _link_prefix(base: str) -> str:
    return f'<a class="url" href="{escape_html(base)}page?url='


def _link(prefix: str, url: str, text: str | None = None) -> str:
    if not text and _QUOTED.search(url) is None:  # nothing to encode, so nothing to escape
        return f'{prefix}{url}">{url}</a>'
    return f'{prefix}{query_value(url)}">{escape_html(text or url)}</a>'


def _page_link(base: str, url: str, text: str | None = None) -> Markup:
    """A link to the page detail of ``url`` (a crawled string: escaped, and only ever a query
    parameter of the viewer's own URL). A function, not a macro: a page detail has hundreds."""
    return Markup(_link(_link_prefix(base), url, text))


def _outbound_rows(base: str, links: Sequence[Mapping[str, Any]]) -> Markup:
    """The rows of a page detail's links out: a function, not a template loop (a most-linked
    page's rows are most of its page detail's rendering; every crawled string escaped)."""
    prefix = _link_prefix(base)
    rows = []
    for link in links:
        fragment = f"#{escape_html(link['hash'])}" if link["hash"] else ""
        external = " <small>external</small>" if link["is_external"] else ""
        final = _link(prefix, link["final_url"]) if link["final_url"] else ""
        rows.append(f"<tr><td>{_status_html(link['status'])}</td><td>"
                    f"{_link(prefix, link['url'])}{fragment}{external}</td>\n"
                    f"<td>{escape_html(link['text'])}</td><td>{final}</td></tr>")
    return Markup("\n".join(rows) or '<tr><td colspan="4">None.</td></tr>')


def _inbound_rows(base: str, links: Sequence[Mapping[str, Any]], page_url: str) -> Markup:
    """The rows of a page detail's links in (as :func:`_outbound_rows`)."""
    prefix = _link_prefix(base)
    rows = []
    for link in links:
        through = _link(prefix, link["through"]) if link["through"] != page_url else ""
        rows.append(f"<tr><td>{_link(prefix, link['url'])}</td>"
                    f"<td>{escape_html(link['text'])}</td><td>{through}</td></tr>")
    return Markup("\n".join(rows) or '<tr><td colspan="3">None.</td></tr>')


SRC_SHOWN = 200
"""Characters of an image's ``src`` a page detail shows (a ``data:`` URL can be megabytes)."""


def _blank(value: object) -> str:
    """A value as a table cell shows it: nothing for ``None``, ``0`` or ``""``."""
    return escape_html(value) if value else ""


def _image_rows(images: Sequence[Mapping[str, Any]]) -> Markup:
    """The rows of a page detail's images (as :func:`_outbound_rows`)."""
    rows = []
    for image in images:
        src = image["src"]
        if len(src) > SRC_SHOWN:
            src = src[:SRC_SHOWN - 1] + "…"
        alt = "<em>absent</em>" if image["alt"] is None else escape_html(image["alt"])
        rows.append(f"<tr><td>{escape_html(image['viewport_width'] or 'markup')}</td>"
                    f'<td class="url">{escape_html(src)}</td>\n<td>{alt}</td>\n'
                    f"<td>{_blank(image['width'])}×{_blank(image['height'])}</td>"
                    f"<td>{_blank(image['natural_width'])}×{_blank(image['natural_height'])}"
                    f"</td><td>{'yes' if image['is_lazy'] else ''}</td></tr>")
    return Markup("\n".join(rows) or '<tr><td colspan="6">None.</td></tr>')


def _resource_rows(resources: Sequence[Mapping[str, Any]]) -> Markup:
    """The rows of a page detail's sub-resources (as :func:`_outbound_rows`)."""
    rows = []
    for resource in resources:
        length = resource["content_length"]
        rows.append(f"<tr><td>{_status_html(resource['status'])}</td>"
                    f"<td>{escape_html(resource['kind'])}</td>"
                    f'<td class="url">{escape_html(resource["url"])}</td>'
                    f"<td>{_blank(resource['content_type'])}</td>"
                    f"<td>{'' if length is None else escape_html(length)}</td></tr>")
    return Markup("\n".join(rows) or '<tr><td colspan="5">None.</td></tr>')


def _link_rows(base: str, links: Sequence[Mapping[str, Any]]) -> Markup:
    """The rows of the Links view (broken or external links; as :func:`_outbound_rows`)."""
    prefix = _link_prefix(base)
    rows = []
    for link in links:
        final = _link(prefix, link["final_url"]) if link["final_url"] else ""
        rows.append(f"<tr><td>{_status_html(link['status'])} "
                    f"{escape_html(link['status_text'] or '')}</td>"
                    f"<td class=\"source\">{_link(prefix, link['source_url'])}</td>\n"
                    f"<td class=\"target\">{_link(prefix, link['dest_url'])}</td>"
                    f"<td>{escape_html(link['text'])}</td><td>{final}</td></tr>")
    return Markup("\n".join(rows) or '<tr><td colspan="5">None.</td></tr>')


def _section_pager(path: str, result: Mapping[str, Any], number: int, query: dict[str, str],
                   param: str, anchor: str) -> Markup:
    """The pager of one list of a page (``?<param>=<number>``, the other lists' parameters
    kept), or nothing when the list fits on one page and this is it. A function, not a macro:
    a page detail has up to six lists, and a macro call costs as much as a dozen link rows."""
    total = result["total"]
    last = (total - 1) // PAGE_SIZE + 1 if total else 1
    if last == 1 and number == 1:
        return Markup("")
    shown = len(result["items"])
    rows = f", rows {result['offset'] + 1}–{result['offset'] + shown}" if shown else ""
    parts = [f'<nav class="pager" data-list="{escape_html(param)}">',
             f"  <span>{total} in all{rows}</span>"]
    if number > 1:
        parts.append(f'  <a rel="prev" href="{escape_html(_with_param(path, query, param, number - 1))}'
                     f'#{escape_html(anchor)}">← previous</a>')
    parts.append(f"  <span>page {number} of {last}</span>")
    if number < last:
        parts.append(f'  <a rel="next" href="{escape_html(_with_param(path, query, param, number + 1))}'
                     f'#{escape_html(anchor)}">next →</a>')
    parts.append("</nav>")
    return Markup("\n".join(parts))


NAV = (("", "Issues"), ("pages", "Pages"), ("links", "Links"), ("resources", "Resources"),
       ("images", "Images"), ("violations", "Violations"), ("duplicates", "Duplicates"),
       ("mismatches", "Mismatches"), ("headers", "Security headers"),
       ("clusters", "Duplicate Clusters"), ("content-clusters", "Content Clusters"),
       ("templates", "Templates"), ("traps", "Trap log"),
       ("tree", "Tree"), ("graph", "Link graph"), ("technologies", "Technologies"))
"""The views of an archive in its navigation bar: path (after ``/a/<n>/``) and label."""


@lru_cache(maxsize=256)
def _nav(base: str, current: str) -> Markup:
    """The navigation bar of an archive's views, ``current`` marked: the same few strings on
    every page, built once."""
    current_mark = ' aria-current="page"'
    return Markup("\n".join(
        f'<a href="{escape_html(base + name)}"{current_mark if name == current else ""}>{label}</a>'
        for name, label in NAV))


def _status_html(value: int | None) -> str:
    if value is None:
        return '<span class="status none">—</span>'
    kind = value // 100 if value > 0 else "err"
    return f'<span class="status s{kind}">{int(value)}</span>'


def _status(value: int | None) -> Markup:
    """An HTTP status, coloured by class (``-1``: a fetch error; ``None``: never fetched)."""
    return Markup(_status_html(value))


def environment(templates: Path) -> Environment:
    """The viewer's Jinja2 environment: the templates in ``templates``, autoescaped, with
    the functions above as globals."""
    env = Environment(loader=FileSystemLoader(templates),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      trim_blocks=True, lstrip_blocks=True, auto_reload=False)
    env.globals["href"] = _href
    env.globals["page_link"] = _page_link
    env.globals["with_param"] = _with_param
    env.globals["status"] = _status
    env.globals["outbound_rows"] = _outbound_rows
    env.globals["inbound_rows"] = _inbound_rows
    env.globals["link_rows"] = _link_rows
    env.globals["image_rows"] = _image_rows
    env.globals["resource_rows"] = _resource_rows
    env.globals["section_pager"] = _section_pager
    env.globals["nav"] = _nav
    env.globals["page_size"] = PAGE_SIZE
    env.globals["url_fields"] = URL_FIELDS
    env.globals["old_url_fields"] = OLD_URL_FIELDS
    return env
