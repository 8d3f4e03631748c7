"""The HTML report's audit (issue 26): the executive summary on top, then the issues.

**Summary**: the site, when it was crawled, its pages, the issues by priority, a score per
category (:mod:`nitpicker.query.scores`) and the top issues. **Issues**: the Issues sheet's
rows (the same as ``nitpicker query FILE issues``), each with why it matters, how to fix it
and its first :data:`ISSUE_FINDINGS` findings; when an issue has more, every finding of every
issue is in ``findings.csv`` beside the report, linked. Both are bounded whatever the site's
size: at most :data:`MAX_ISSUES` issues are shown whole, the rest listed by title.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from html import escape
from typing import IO, TYPE_CHECKING, Final

from nitpicker_reports.csv_folder import neutralised

from nitpicker.query import crawl_info
from nitpicker.query.checks import PRIORITIES
from nitpicker.query.issues import issue_urls, issues_overview
from nitpicker.query.report_rows.issues_sheet import (
    FINDINGS_HEADERS,
    PRIORITY_COLOURS,
    findings_rows,
)
from nitpicker.query.scores import WEIGHTS, scores_of
from nitpicker.query.summary import summary

if TYPE_CHECKING:
    from collections.abc import Sequence

    from nitpicker_reports.html_tables import Beside

    from nitpicker.query.report_rows import Value
    from nitpicker.query.scores import CategoryScore
    from nitpicker.report import ReportSource

__all__ = ["AUDIT_STYLE", "FINDINGS_FILE", "ISSUE_FINDINGS", "MAX_ISSUES", "TOP_ISSUES",
           "issue_anchor", "write_issues", "write_summary"]

ISSUE_FINDINGS: Final = 10
"""Findings listed under each issue."""
MAX_ISSUES: Final = 200
"""Issues shown whole (an analyzer may have hundreds of rules); the rest by title only."""
TOP_ISSUES: Final = 5
FINDINGS_FILE: Final = "findings.csv"

AUDIT_STYLE: Final = "".join(
    f".p-{name}{{background:{background};color:{text}}}"
    for name, (background, text) in PRIORITY_COLOURS.items()) + """
.priority{display:inline-block;min-width:4.5em;text-align:center;padding:0 .4em;
border-radius:3px;font-size:12px;font-weight:600}
dl.facts{display:flex;flex-wrap:wrap;gap:.5rem 2rem;margin:0}dl.facts dt{color:#666;font-size:12px}
dl.facts dd{margin:0;font-size:1.1rem;font-weight:600}
table.scores td.score{font-weight:700;text-align:right}
.meter{display:inline-block;width:160px;height:10px;background:#eee;vertical-align:middle}
.meter span{display:block;height:100%;background:#3b6fb6}
article.issue{border-top:1px solid #ddd;padding:.3rem 0 .8rem}article.issue h3{margin:.4rem 0}
.meta{color:#555}.hint,p.cut{color:#555;font-size:12px}
"""


def issue_anchor(issue_id: str) -> str:
    """An issue's section id: ``links/broken-internal`` → ``issue-links-broken-internal``."""
    return "issue-" + re.sub(r"[^a-z0-9-]+", "-", issue_id.lower())


def _count(number: object, noun: str) -> str:
    """``1 URL``, ``3 URLs``, ``1,200 findings``."""
    value = int(str(number or 0))
    return f"{value:,} {noun}{'' if value == 1 else 's'}"


def _badge(priority: str) -> str:
    return f'<span class="priority p-{escape(priority)}">{escape(priority)}</span>'


def _url(url: str) -> str:
    if url.startswith(("http://", "https://")):
        return f'<a href="{escape(url)}">{escape(url)}</a>'
    return escape(url)


def write_summary(out: IO[str], source: ReportSource, issues: Sequence[Sequence[Value]] | None
                  ) -> None:
    """The executive summary; ``issues``: the Issues sheet's rows (``None``: not reported,
    so no top issues)."""
    conn = source.conn
    info, facts = crawl_info(conn), summary(conn)
    overview = issues_overview(conn, limit=1_000_000)
    found = [item for item in overview["items"] if item["urls"]]
    by_priority = Counter(item["priority"] for item in found)
    counts = " · ".join(f"{by_priority[p]} {p}" for p in PRIORITIES if by_priority[p])
    crawled = info.created_at[:16].replace("T", " ")
    out.write(
        '<section id="overview"><h2>Executive summary</h2><dl class="facts">'
        f"<div><dt>Site</dt><dd>{_url(info.base_url)}</dd></div>"
        f"<div><dt>Crawled</dt><dd>{escape(crawled)}</dd></div>"
        f"<div><dt>Pages</dt><dd>{facts.internal_pages:,}</dd></div>"
        f"<div><dt>URLs recorded</dt><dd>{facts.total_urls:,}"
        f" ({facts.external_urls:,} external)</dd></div>"
        f"<div><dt>Issues</dt><dd>{counts or 'none'}</dd></div></dl>")
    if overview["checked_at"] is None and not found:
        out.write('<p class="hint">The site checks have not run on this archive: run'
                  " <code>nitpicker check FILE</code>, then report again.</p></section>")
        return
    _scores(out, scores_of(found, facts.internal_pages))
    if issues:
        out.write("<h3>Top issues</h3><ol>")
        out.writelines(
            f'<li>{_badge(str(row[0]))} <a href="#{issue_anchor(str(row[2]))}">'
            f"{escape(str(row[1]))}</a> · {_count(row[4], 'URL')}</li>"
            for row in issues[:TOP_ISSUES])
        out.write("</ol>")
    out.write("</section>")


def _scores(out: IO[str], scores: list[CategoryScore]) -> None:
    weights = ", ".join(f"{name} {points:g}" for name, points in WEIGHTS.items())
    out.write('<h3>Score by category</h3><table class="scores"><thead><tr><th>Category</th>'
              "<th>Score</th><th></th><th>Issues</th><th>Most urgent</th></tr></thead><tbody>")
    out.writelines(
        f"<tr><td>{escape(s['category'])}</td><td class=\"score\">{s['score']}</td>"
        f'<td><span class="meter"><span style="width:{s["score"]}%"></span></span></td>'
        f"<td>{s['issues']}</td><td>{_badge(s['worst']) if s['worst'] else ''}</td></tr>"
        for s in scores)
    out.write(f'</tbody></table><p class="hint">A category starts at 100; each of its issues'
              f" takes off its priority's points ({weights}) times the share of the site's"
              " pages it touches.</p>")


def write_issues(out: IO[str], source: ReportSource, issues: Sequence[Sequence[Value]],
                 beside: Beside) -> None:
    """The Issues section: each issue of the Issues sheet's rows, most urgent first."""
    more = any(int(row[5] or 0) > ISSUE_FINDINGS for row in issues) or len(
        issues) > MAX_ISSUES
    if more:
        _findings_file(source, beside)
    out.write(f'<section id="issues"><h2>Issues</h2><p>{len(issues):,} issues, most urgent'
              " first.")
    if more:
        out.write(f" Every finding of every issue: {beside.link(FINDINGS_FILE)} (CSV, UTF-8).")
    out.write("</p>")
    if not issues:
        out.write('<p class="hint">No issues found.</p>')
    for row in issues[:MAX_ISSUES]:
        _issue(out, source, row, beside if more else None)
    if len(issues) > MAX_ISSUES:
        out.write("<p>And these, in " + beside.link(FINDINGS_FILE) + ":</p><ul>")
        out.writelines(f"<li>{_badge(str(row[0]))} {escape(str(row[1]))} ·"
                       f" <code>{escape(str(row[2]))}</code> · {_count(row[4], 'URL')}</li>"
                       for row in issues[MAX_ISSUES:])
        out.write("</ul>")
    out.write("</section>")


def _issue(out: IO[str], source: ReportSource, row: Sequence[Value], beside: Beside | None
           ) -> None:
    priority, title, issue_id, category, urls, findings, origin, why, fix = row
    out.write(
        f'<article class="issue" id="{issue_anchor(str(issue_id))}">'
        f"<h3>{_badge(str(priority))} {escape(str(title))}</h3>"
        f'<p class="meta"><code>{escape(str(issue_id))}</code> · {escape(str(category))} ·'
        f" {_count(urls, 'URL')} · {_count(findings, 'finding')} · {escape(str(origin))}</p>"
        f"<p><strong>Why it matters.</strong> {escape(str(why))}</p>"
        f"<p><strong>How to fix.</strong> {escape(str(fix))}</p>")
    listed = issue_urls(source.conn, str(issue_id), limit=ISSUE_FINDINGS)
    if listed["items"]:
        out.write('<div class="table-wrap"><table><thead><tr><th>URL</th><th>Element</th>'
                  "<th>Message</th></tr></thead><tbody>")
        out.writelines(
            f"<tr><td>{_url(item['url'])}</td><td>{escape(item['element'] or '')}</td>"
            f"<td>{escape(item['message'])}</td></tr>" for item in listed["items"])
        out.write("</tbody></table></div>")
    if listed["total"] > len(listed["items"]) and beside is not None:
        left = listed["total"] - len(listed["items"])
        out.write(f'<p class="cut">And {left:,} more {"finding" if left == 1 else "findings"},'
                  f" in {beside.link(FINDINGS_FILE)}.</p>")
    out.write("</article>")


def _findings_file(source: ReportSource, beside: Beside) -> None:
    with beside.open(FINDINGS_FILE) as handle:
        writer = csv.writer(handle)
        writer.writerow(FINDINGS_HEADERS)
        for rows in findings_rows(source.conn):
            writer.writerows(map(neutralised, rows))
