"""Template clusters and sampling: the skeleton (nitpicker/policy/extract/skeleton.py), the
clustering (nitpicker/policy/templates.py), their recording at the end of a crawl, ``nitpicker
analyze --sample N --pages URL-PATTERN``, ``query templates`` / ``template-pages`` /
``template-findings`` and the viewer's Templates view, on the generated site of
``fixtures/templated.py`` (five templates, the URLs saying nothing of them)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_twisted
import requests

from fixtures.templated import TEMPLATE_DEFECTS, TEMPLATES, TemplatedSite, page_html
from nitpicker.archive import template_store
from nitpicker.archive.template_store import record_templates
from nitpicker.policy.extract import extract
from nitpicker.policy.extract.skeleton import MAX_DEPTH, skeleton
from nitpicker.policy.templates import cluster_pages, jaccard
from nitpicker.query.snapshot_encoding import decode
from tests.helpers import count, crawl, rows, run

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parent.parent

PAGES = 30
"""Six pages of each of the five templates, and the index."""


# -- the skeleton ---------------------------------------------------------------------------


def body(html: str) -> str:
    return f"<!DOCTYPE html><html><head><title>x</title></head><body>{html}</body></html>"


@pytest.mark.parametrize(("html", "paths"), [
    # layout elements and named ones are the template; bare prose is the page's own
    ('<div class="wrap"><main><p>Text <a href="/">link</a></p><h2>Title</h2></main></div>',
     {"body/div.wrap", "body/div.wrap/main"}),
    # class names sorted, each run of digits one 0: per-page ids are one token
    ('<div class="b a post-1234" id="item-77"></div>', {"body/div#item-0.a.b.post-0"}),
    # a bare prose element hides what is inside it, classed or not
    ('<ul><li class="x"><span class="y">a</span></li></ul>', set()),
    # scripts, styles, SVG and templates are never the layout
    (('<script class="s">1</script><svg class="i"><g class="g"/></svg><template class="t">'
     '<div class="u"></div></template><style>p{}</style>'), set()),
    # void elements do not unbalance the path
    ('<div class="a"><img class="logo" src="x"><br><div class="b"></div></div>',
     {"body/div.a", "body/div.a/div.b"}),
    # an id alone does not make a prose element layout (a heading's anchor); a class does,
    # and digits are masked in classes, never in the tag
    ('<main><h2 id="installing-2">A</h2><h2 class="title-3">B</h2></main>',
     {"body/main", "body/main/h2.title-0"}),
    # a highlighted code block is the page's code: nothing inside pre or code
    ('<pre class="playground"><code class="hljs"><span class="kw">fn</span></code></pre>',
     set()),
    ("", set()),
])
def test_skeleton_paths(html: str, paths: set[str]) -> None:
    assert set(skeleton(body(html))) == paths


def test_a_page_without_a_body_or_markup_has_no_skeleton() -> None:
    assert skeleton("") == frozenset()
    assert skeleton("just text") == frozenset()


def test_paths_stop_at_the_depth_limit() -> None:
    nested = '<div class="n">' * (MAX_DEPTH + 5) + "</div>" * (MAX_DEPTH + 5)
    paths = skeleton(body(nested))
    assert len(paths) == MAX_DEPTH - 1  # body is the first token
    assert max(path.count("/") for path in paths) == MAX_DEPTH - 1


def test_clusters_merge_near_skeletons_and_keep_templates_apart() -> None:
    docs = frozenset({"body/div.docs", "body/div.docs/nav", "body/div.docs/main.doc",
                      "body/footer"})
    docs_note = docs | {"body/div.docs/main.doc/div.note"}  # content moved it a little
    shop = frozenset({"body/div#app", "body/div#app/header.topbar", "body/footer"})
    clusters = cluster_pages([(1, docs), (2, shop), (3, docs_note), (4, docs), (5, frozenset()),
                              (6, shop), (7, docs)])
    assert [(c.number, [page for page, _ in c.pages]) for c in clusters] == [
        (1, [1, 3, 4, 7]), (2, [2, 6])]
    assert clusters[0].example == 1 and clusters[0].skeleton == docs
    assert dict(clusters[0].pages)[3] == pytest.approx(jaccard(docs, docs_note)) == 0.8


def test_a_dissimilar_skeleton_is_a_cluster_of_its_own() -> None:
    left = frozenset({"body/a", "body/b", "body/c"})
    right = frozenset({"body/a", "body/x", "body/y"})
    assert jaccard(left, right) == 0.2
    assert len(cluster_pages([(1, left), (2, right)])) == 2


def test_the_extraction_reads_the_skeleton_the_snapshot_gives() -> None:
    """A crawl takes a page's skeleton from the parse that extracts its facts: the paths the
    page's snapshot (its UTF-8 bytes) gives, for every template of the fixture site and for a
    page whose ``<meta charset>`` is not the snapshot's (its classes read as UTF-8, not as
    Latin-1)."""
    pages = [page_html(number) for number in range(2 * len(TEMPLATES))]
    pages.append('<html><head><meta charset="iso-8859-1"></head><body><div class="café x-1">'
                 '<p class="ü">text</p><nav id="n1"><a class="é">a</a></nav></div></body></html>')
    for html in pages:
        paths = extract(html, max_anchors=3, skeleton=True).skeleton
        assert paths and paths == skeleton(html.encode("utf-8")), html
    assert "body/div.café.x-0/p.ü" in paths
    assert extract(pages[0]).skeleton is None  # not asked for


# -- a crawl of the generated site ----------------------------------------------------------


@pytest.fixture(scope="module")
def templated() -> Iterator[TemplatedSite]:
    with TemplatedSite(pages=PAGES) as site:
        yield site


@pytest.fixture(scope="module")
def crawled(templated: TemplatedSite, tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("templated")
    done = run("crawl", templated.url("/"), "-o", "site", "--silent", cwd=directory)
    assert done.returncode == 0, done.stderr
    return directory / "site.nitpicker"


@pytest_twisted.ensureDeferred
async def test_the_crawl_clusters_its_pages_without_parsing_them_again(
        templated: TemplatedSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At the close the clusters come from the skeletons the crawl read while extracting: no
    snapshot is parsed again, and they are the clusters the snapshots give."""
    parsed: list[bytes] = []

    def counted(data: bytes) -> frozenset[str]:
        parsed.append(data)
        return skeleton(data)

    monkeypatch.setattr(template_store, "skeleton", counted)
    archive = await crawl(tmp_path, [templated.url("/")])
    assert parsed == []
    tables = ("SELECT page_id, template_id, similarity FROM page_templates ORDER BY page_id",
              "SELECT id, signature, pages, example_page_id, paths FROM templates ORDER BY id")
    at_close = [rows(archive.path, sql) for sql in tables]
    assert len(at_close[0]) == PAGES + 1
    conn = sqlite3.connect(archive.path)
    record_templates(conn)  # from the snapshots, as analyze --sample and merge compute them
    conn.commit()
    conn.close()
    assert len(parsed) == PAGES + 1
    assert [rows(archive.path, sql) for sql in tables] == at_close


@pytest.fixture
def archive(crawled: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "site.nitpicker"
    shutil.copyfile(crawled, copy)
    return copy


def test_known_skeletons_and_snapshots_together_give_the_same_clusters(archive: Path) -> None:
    """A resumed or appended crawl knows the skeletons of the pages it fetched, not those of
    earlier runs: the clusters are the same, and a known page's snapshot is not read (here
    made unreadable)."""
    tables = ("SELECT page_id, template_id, similarity FROM page_templates ORDER BY page_id",
              "SELECT id, signature, pages, example_page_id, paths FROM templates ORDER BY id")
    before = [rows(archive, sql) for sql in tables]
    conn = sqlite3.connect(archive)
    known = template_store.KnownSkeletons()
    snapshots = conn.execute("SELECT page_id, encoding, html FROM snapshots ORDER BY page_id"
                             ).fetchall()
    for page_id, encoding, blob in snapshots[::2]:
        known.note(page_id, skeleton(decode(encoding, blob)))
        conn.execute("UPDATE snapshots SET html = x'00' WHERE page_id = ?", (page_id,))
    known.note(snapshots[1][0], None)  # not known after all: read from its snapshot
    summary = record_templates(conn, known=known)
    conn.commit()
    conn.close()
    assert summary.pages == PAGES + 1
    assert [rows(archive, sql) for sql in tables] == before


def query(archive: Path, *args: str) -> Any:
    done = run("query", str(archive), *args, cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_crawl_records_one_cluster_per_template(crawled: Path) -> None:
    """The URLs say nothing of the templates (``/page/<i>``, template ``i % 5``): the clusters
    come from the DOM alone, each one template's six pages, the index a cluster of its own."""
    found = rows(crawled, "SELECT pt.template_id, group_concat(DISTINCT substr(p.title,"
                          " instr(p.title, '('))), count(*) FROM page_templates pt"
                          " JOIN pages p ON p.id = pt.page_id GROUP BY pt.template_id")
    assert sorted((kinds, n) for _, kinds, n in found) == sorted(
        [(f"({name})", PAGES // len(TEMPLATES)) for name in TEMPLATES] + [("Every page", 1)])
    assert count(crawled, "SELECT count(*) FROM templates") == len(TEMPLATES) + 1


def test_query_templates_and_their_pages(crawled: Path, templated: TemplatedSite) -> None:
    listed = query(crawled, "templates", "--examples", "2")
    assert listed["total"] == 6
    first = listed["items"][0]
    assert (first["template"], first["pages"], len(first["examples"])) == (1, 6, 2)
    pages = query(crawled, "template-pages", "--template", "1")
    assert pages["total"] == 6
    assert first["examples"] == [item["url"] for item in pages["items"][:2]]
    done = run("query", str(crawled), "template-pages", "--template", "0", cwd=crawled.parent)
    assert (done.returncode, done.stderr.strip()) == (
        1, "Error: Invalid --template: 0. Must be between 1 and 9223372036854775807")


def test_sample_analyses_n_pages_a_template_and_finds_every_skeleton_rule(
        archive: Path) -> None:
    """``--sample 2``: two pages of each of the six clusters (the index's one), and axe's
    template-level findings come back once per template, affecting all of its pages."""
    done = run("analyze", str(archive), "--plugin", "axe", "--sample", "2", cwd=archive.parent,
               timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"Sample: 11 of {PAGES + 1} pages (2 per template, 6 templates)" in done.stderr
    assert f"Analysed with 1 plugin(s) on 11 of {PAGES + 1} pages (a sample: 2 per template)" \
        in done.stderr
    assert count(archive, "SELECT count(*) FROM analyzed_pages WHERE plugin = 'axe'") == 11
    scope = json.loads(rows(archive, "SELECT scope FROM analysis_runs")[0][0])
    assert (scope["sample"], scope["selected"], scope["of"], scope["templates"]) == (
        2, 11, PAGES + 1, 6)
    findings = query(archive, "template-findings")["items"]
    by_template: dict[str, set[tuple[str, str]]] = {}
    titles = dict(rows(archive, "SELECT pt.template_id, substr(p.title, instr(p.title, '(') + 1)"
                                " FROM templates t JOIN page_templates pt ON pt.template_id = t.id"
                                " JOIN pages p ON p.id = t.example_page_id"
                                " GROUP BY pt.template_id"))
    for item in findings:
        assert item["template_level"] and item["affects"] == item["template_pages"] == 6
        by_template.setdefault(titles[item["template"]].rstrip(")"), set()).add(
            (item["rule"], item["status"]))
    for name, (rule, _) in TEMPLATE_DEFECTS.items():
        assert (rule, "violation") in by_template[name], (name, by_template)
    # the landing banner's contrast: what axe could not decide, kept apart as needs-review
    assert ("color-contrast", "needs-review") in by_template["landing"]
    reviews = query(archive, "violations", "--status", "needs-review")["items"]
    assert reviews and {item["severity"] for item in reviews} == {"needs-review"}
    assert {item["element"] for item in reviews} == {".banner-text"}
    failures = query(archive, "violations", "--status", "violation")["items"]
    assert "needs-review" not in {item["severity"] for item in failures}
    contrast = next(item for item in failures if item["rule"] == "color-contrast")
    assert contrast["element"] == ".price-note" and "contrast" in contrast["summary"]
    assert contrast["impact"] == "serious" and "wcag2aa" in contrast["tags"]


def test_pages_limits_the_analysis_to_matching_urls(archive: Path) -> None:
    done = run("analyze", str(archive), "--plugin", "search", "--search-keywords", "page",
               "--pages", "*/page/1*", cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    analysed = rows(archive, "SELECT p.url FROM analyzed_pages a JOIN pages p"
                             " ON p.id = a.page_id WHERE a.plugin = 'search'")
    assert sorted(url.rsplit("/", 1)[1] for (url,) in analysed) == sorted(
        ["1", *(str(n) for n in range(10, 20))])
    assert f"Pages: 11 of {PAGES + 1} match --pages" in done.stderr


def test_sample_computes_the_clusters_an_archive_lacks(archive: Path) -> None:
    """An archive whose clusters are gone (crawled before they existed, merged): analyze
    --sample records them first."""
    conn = sqlite3.connect(archive)
    conn.execute("DELETE FROM page_templates")
    conn.execute("DELETE FROM templates")
    conn.commit()
    conn.close()
    done = run("analyze", str(archive), "--plugin", "search", "--search-keywords", "x",
               "--sample", "1", cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    assert f"Template clusters: {PAGES + 1} pages in 6 clusters" in done.stderr
    assert count(archive, "SELECT count(*) FROM analyzed_pages") == 6


@pytest.mark.parametrize(("args", "message"), [
    (("--sample", "0"), "Error: Invalid --sample: 0. Must be a whole number ≥ 1"),
    (("--pages", "*/nowhere/*"), ("Error: --pages '*/nowhere/*': no analysable page matches "
                                 "(internal HTML pages with a snapshot; a glob over the whole "
                                 "URL, * any text: '*/docs/*')")),
])
def test_bad_sample_or_pages_is_one_line_and_writes_nothing(
        archive: Path, args: tuple[str, ...], message: str) -> None:
    before = archive.read_bytes()
    done = run("analyze", str(archive), "--plugin", "search", "--search-keywords", "x", *args,
               cwd=archive.parent)
    assert (done.returncode, done.stderr.splitlines()) == (1, [message])
    assert archive.read_bytes() == before


# -- the viewer (no browser) ----------------------------------------------------------------


@pytest.fixture
def viewer(archive: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``nitpicker view`` on the archive, after an axe run on one page of each template."""
    done = run("analyze", str(archive), "--plugin", "axe", "--sample", "1", cwd=archive.parent,
               timeout=300)
    assert done.returncode == 0, done.stderr
    process = subprocess.Popen([sys.executable, "-m", "nitpicker.cli", "view", str(archive),
                                "--port", "0"], env={**os.environ, "PYTHONPATH": str(ROOT)},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    first = process.stdout.readline()
    assert first.startswith("Serving "), first
    yield process, first.split(" at ", 1)[1].split(" ", 1)[0]
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=20)
    assert process.returncode == 0 and "Traceback" not in err, err


def test_the_viewer_lists_templates_and_says_the_analysis_was_sampled(
        viewer: tuple[subprocess.Popen[str], str]) -> None:
    _, url = viewer

    def get(path: str, json_: bool = True) -> requests.Response:
        answer = requests.get(url + path.lstrip("/"), timeout=10, headers=(
            {"Accept": "application/json"} if json_ else {}))
        assert answer.status_code == 200, answer.text
        return answer

    listed = get("/a/0/templates").json()
    assert listed["templates"]["total"] == 6
    assert sum(listed["findings"].values()) == 0  # one page a template: none is "every"
    one = get("/a/0/templates?template=1").json()
    assert one["template_pages"]["total"] == 6
    assert one["template_findings"]["items"]
    html = get("/a/0/templates", json_=False).text
    assert 'href="/a/0/templates?template=1"' in html and "#6" in html
    detail = get("/a/0/templates?template=1", json_=False).text
    assert "Findings by element" in detail and "<code>" in detail
    # a finding without line:col says where it is by axe's element (its CSS selector)
    flagged = get("/a/0/violations?severity=needs-review", json_=False).text
    assert "<code>.banner-text</code>" in flagged
    summary = get("/a/0/", json_=False).text
    assert "The analysis was limited to some pages" in summary
    assert f"axe on 6 of {PAGES + 1} pages (a sample: 1 per" in summary
    assert requests.get(url + "a/0/templates?template=x", timeout=10).status_code == 400


def test_the_report_says_the_analysis_was_sampled(archive: Path) -> None:
    done = run("analyze", str(archive), "--plugin", "search", "--search-keywords", "page",
               "--sample", "1", cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    done = run("report", str(archive), "--format", "csv", "-o", "report", "--silent",
               cwd=archive.parent)
    assert done.returncode == 0, done.stderr
    summary = (archive.parent / "report" / "summary.csv").read_text(encoding="utf-8-sig")
    assert (f'analysis sampled: search,"6 of {PAGES + 1} pages, a sample of 1 per template"'
            in summary.splitlines())


def test_split_and_merge_compute_the_clusters_afresh(crawled: Path, templated: TemplatedSite,
                                                     tmp_path: Path) -> None:
    """The clusters are derived from the snapshots: an archive made by ``split`` (or
    ``merge``) gets its own, over its own page ids (the source's would name other pages)."""
    done = run("split", str(crawled), templated.url("/page/"), "-o", "part", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    part = tmp_path / "part.nitpicker"
    assert count(part, "SELECT count(*) FROM templates") == len(TEMPLATES)
    assert count(part, "SELECT count(*) FROM page_templates pt JOIN pages p"
                       " ON p.id = pt.page_id WHERE p.url LIKE '%/page/%'") == PAGES
    done = run("merge", str(crawled), "-o", "merged", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert count(tmp_path / "merged.nitpicker", "SELECT count(*) FROM templates") == 6


def test_merged_skeletons_leave_a_page_two_workers_disagree_on_to_its_snapshot() -> None:
    """The coordinator of ``--workers N`` takes in each worker's skeletons: a page both know
    with different skeletons (a lease taken over, the page fetched twice) is read again."""
    first, second = template_store.KnownSkeletons(), template_store.KnownSkeletons()
    a, b = frozenset({"body/a"}), frozenset({"body/b"})
    first.note(1, a)
    first.note(2, a)
    second.note(2, b)
    second.note(3, b)
    second.note(4, frozenset())
    first.merge(second)
    assert first.pages.keys() == {1, 3, 4}
    assert first.skeletons[first.pages[1]] == a and first.skeletons[first.pages[3]] == b
    assert first.pages[4] == ""
