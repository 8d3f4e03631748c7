"""Tests for :mod:`nitpicker.policy.extract` (streaming page-fact extraction).

Two kinds of test:

* rule tables: small inline snippets with the exact expected value of one field each;
* parity: for every ``fixtures/**/*.html`` file and an inline corpus of realistic documents,
  :func:`extract` must agree with an independent DOM reading of the same document done with
  parsel (XPath over the full lxml tree).
"""

from __future__ import annotations

import re
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # plain `pytest` (not `python -m pytest`) from anywhere
    sys.path.insert(0, str(ROOT))

from nitpicker.policy.extract import (
    AnchorRef,
    Extracted,
    ImageRef,
    PageMeta,
    ResourceRef,
    extract,
    http_form_action,
    resolve_meta_urls,
)

parsel = pytest.importorskip("parsel")
w3lib_encoding = pytest.importorskip("w3lib.encoding")

FIXTURES = ROOT / "fixtures"
ASCII_WS = " \t\n\r\f"


# ------------------------------------------------------------------------------------------
# Rule tables
# ------------------------------------------------------------------------------------------


def facts(result: Extracted, what: str) -> Any:
    """One field of ``result`` in a form easy to write expectations for."""
    if what == "anchors":
        return [(a.href, a.text, a.tag) for a in result.anchors]
    if what == "images":
        return [(i.src, i.alt, i.width, i.height, i.loading) for i in result.images]
    if what == "resources":
        return [(r.url, r.kind) for r in result.resources]
    if what == "base_href":
        return result.base_href
    if what == "robots":
        m = result.meta
        return (m.noindex, m.nofollow, m.noarchive)
    return getattr(result.meta, what)


# (id, html, field, expected)
RULES: list[tuple[str, str, str, Any]] = [
    # -- title -----------------------------------------------------------------------------
    ("title-basic", "<title>Hello</title>", "title", "Hello"),
    ("title-collapse", "<title>\n  Hello \t  World\n</title>", "title", "Hello World"),
    (
        "title-entities",
        "<title>Tom &amp; Jerry &lt;3 &eacute;&#233;&#xE9; &hellip;</title>",
        "title",
        "Tom & Jerry <3 ééé …",
    ),
    ("title-first-wins", "<title>One</title><title>Two</title>", "title", "One"),
    ("title-first-empty-wins", "<title></title><title>Two</title>", "title", ""),
    ("title-absent", "<p>no title here</p>", "title", ""),
    ("title-rcdata", "<title>a <b>b</b></title>", "title", "a <b>b</b>"),
    (
        "title-not-script-or-style",
        "<head><script>document.title = 'x'</script><style>t{}</style><title>T</title></head>",
        "title",
        "T",
    ),
    (
        "title-svg-ignored",
        "<body><svg><title>Icon</title></svg><title>Real</title>",
        "title",
        "Real",
    ),
    ("title-svg-only", "<body><p><svg><title>Icon</title></svg></p>", "title", ""),
    ("title-in-body", "<body><p>x</p><title>Late</title></body>", "title", "Late"),
    # -- lang ------------------------------------------------------------------------------
    ("lang", '<html lang="en-GB"><title>x</title></html>', "lang", "en-GB"),
    ("lang-caps-stripped", '<HTML LANG=" fr "><title>x</title></HTML>', "lang", "fr"),
    ("lang-absent", "<html><title>x</title></html>", "lang", ""),
    ("lang-first-html-tag", '<html lang="de"><html lang="fr"><p>x', "lang", "de"),
    # -- description / keywords ------------------------------------------------------------
    ("description", '<meta name="description" content="  A page.  ">', "description", "A page."),
    ("description-case", '<META NAME="Description" CONTENT="Caps">', "description", "Caps"),
    (
        "description-first-wins",
        '<meta name="description" content="first"><meta name="description" content="second">',
        "description",
        "first",
    ),
    (
        "description-needs-content",
        '<meta name="description"><meta name="description" content="second">',
        "description",
        "second",
    ),
    (
        "description-entities",
        '<meta name="description" content="Fish &amp; Chips &quot;fresh&quot;">',
        "description",
        'Fish & Chips "fresh"',
    ),
    ("description-absent", '<meta name="author" content="me">', "description", ""),
    ("keywords", '<meta name="keywords" content="a, b, c">', "keywords", "a, b, c"),
    ("keywords-case", '<meta name="KEYWORDS" content="k">', "keywords", "k"),
    # -- robots ----------------------------------------------------------------------------
    ("robots-noindex", '<meta name="robots" content="noindex">', "robots", (True, False, False)),
    (
        "robots-both-caps",
        '<meta name="ROBOTS" content="NOINDEX, NoFollow">',
        "robots",
        (True, True, False),
    ),
    ("robots-none", '<meta name="robots" content="none">', "robots", (True, True, False)),
    (
        "robots-noarchive",
        '<meta name="robots" content="noarchive">',
        "robots",
        (False, False, True),
    ),
    ("robots-index-follow", '<meta name="robots" content="index, follow">', "robots", (False,) * 3),
    (
        "robots-all-three",
        '<meta name="robots" content="noindex,nofollow,noarchive">',
        "robots",
        (True, True, True),
    ),
    (
        "robots-space-separated",
        '<meta name="robots" content="noindex nofollow">',
        "robots",
        (True, True, False),
    ),
    (
        "robots-several-metas",
        '<meta name="robots" content="noindex"><meta name="robots" content="nofollow">',
        "robots",
        (True, True, False),
    ),
    ("robots-other-bot", '<meta name="googlebot" content="noindex">', "robots", (False,) * 3),
    ("robots-absent", "<title>x</title>", "robots", (False,) * 3),
    # -- canonical / alternate -------------------------------------------------------------
    (
        "canonical",
        '<link rel="canonical" href=" https://example.com/a ">',
        "canonical",
        "https://example.com/a",
    ),
    ("canonical-case", '<LINK REL="Canonical" HREF="/c">', "canonical", "/c"),
    ("canonical-token", '<link rel="nofollow  canonical" href="/t">', "canonical", "/t"),
    (
        "canonical-first-wins",
        '<link rel="canonical" href="/1"><link rel="canonical" href="/2">',
        "canonical",
        "/1",
    ),
    ("canonical-not-substring", '<link rel="canonicalish" href="/x">', "canonical", ""),
    ("canonical-absent", '<link rel="stylesheet" href="/s.css">', "canonical", ""),
    (
        "alternate-first",
        '<link rel="alternate" hreflang="fr" href="/fr"><link rel="alternate" href="/de">',
        "alternate",
        "/fr",
    ),
    (
        "alternate-case",
        '<link rel="Alternate" type="application/rss+xml" href="/feed.xml">',
        "alternate",
        "/feed.xml",
    ),
    ("alternate-absent", '<link rel="canonical" href="/c">', "alternate", ""),
    # -- Open Graph / Twitter --------------------------------------------------------------
    ("og-type", '<meta property="og:type" content="article">', "og_type", "article"),
    ("og-title", '<meta property="og:title" content="OG &amp; title">', "og_title", "OG & title"),
    ("og-site-name", '<meta property="og:site_name" content="Site">', "og_site_name", "Site"),
    ("og-description", '<meta property="og:description" content="D">', "og_description", "D"),
    ("og-url", '<meta property="og:url" content="https://x/">', "og_url", "https://x/"),
    ("og-image", '<meta property="og:image" content="/og.png">', "og_image", "/og.png"),
    ("og-case", '<meta PROPERTY="OG:Title" content="Upper">', "og_title", "Upper"),
    (
        "og-first-wins",
        '<meta property="og:image" content="/1.png"><meta property="og:image" content="/2.png">',
        "og_image",
        "/1.png",
    ),
    ("og-by-name-ignored", '<meta name="og:title" content="x">', "og_title", ""),
    ("og-absent", "<title>x</title>", "og_type", ""),
    # -- the declared character encoding ------------------------------------------------------
    ("charset-meta", '<meta charset="Shift_JIS">', "charset", "shift_jis"),
    ("charset-unquoted", "<meta charset=utf-8>", "charset", "utf-8"),
    ("charset-http-equiv",
     '<meta http-equiv="Content-Type" content="text/html; charset=EUC-JP">', "charset", "euc-jp"),
    ("charset-http-equiv-quoted",
     """<meta HTTP-EQUIV="content-type" content='text/html;charset="windows-1252"'>""",
     "charset", "windows-1252"),
    ("charset-first-wins", '<meta charset="utf-8"><meta charset="euc-jp">', "charset", "utf-8"),
    ("charset-http-equiv-without", '<meta http-equiv="content-type" content="text/html">',
     "charset", ""),
    ("charset-other-http-equiv", '<meta http-equiv="refresh" content="0; charset=x">',
     "charset", ""),
    ("charset-empty-then-declared", '<meta charset=" "><meta charset="utf-8">', "charset",
     "utf-8"),
    ("charset-absent", "<title>x</title>", "charset", ""),
    (
        "twitter-card-name",
        '<meta name="twitter:card" content="summary">',
        "twitter_card",
        "summary",
    ),
    (
        "twitter-card-property",
        '<meta property="twitter:card" content="summary_large_image">',
        "twitter_card",
        "summary_large_image",
    ),
    ("twitter-card-case", '<meta name="Twitter:Card" content="app">', "twitter_card", "app"),
    # -- base ------------------------------------------------------------------------------
    ("base", '<base href=" https://example.com/dir/ ">', "base_href", "https://example.com/dir/"),
    (
        "base-first-with-href",
        '<base target="_blank"><base href="/a/"><base href="/b/">',
        "base_href",
        "/a/",
    ),
    ("base-absent", "<title>x</title>", "base_href", ""),
    # -- anchors ---------------------------------------------------------------------------
    ("anchor-basic", '<a href="/a">A</a>', "anchors", [("/a", "A", "a")]),
    (
        "anchor-nested-markup",
        '<a href="/n"><span>Read <b>more</b></span> about <em>it</em></a>',
        "anchors",
        [("/n", "Read more about it", "a")],
    ),
    (
        "anchor-img-alt",
        '<a href="/h"><img src="logo.png" alt="Home logo"></a>',
        "anchors",
        [("/h", "Home logo", "a")],
    ),
    (
        "anchor-img-alt-and-text",
        '<a href="/h"><img alt="Logo">Home</a><a href="/e"><img alt="">Empty alt</a>',
        "anchors",
        [("/h", "Logo Home", "a"), ("/e", "Empty alt", "a")],
    ),
    (
        "anchor-area-alt",
        ('<map name="m"><area shape="rect" href="/r" alt=" Red \n room ">'
        '<area nohref alt="x"></map>'),
        "anchors",
        [("/r", "Red room", "area")],
    ),
    ("anchor-area-no-alt", '<map><area href="/r"></map>', "anchors", [("/r", "", "area")]),
    (
        "anchor-needs-href",
        '<a name="top">Top</a><a>None</a><a href="">Self</a>',
        "anchors",
        [("", "Self", "a")],
    ),
    (
        "anchor-href-raw-stripped",
        '<a href="  /p?q=1&amp;r=2#frag  ">x</a>',
        "anchors",
        [("/p?q=1&r=2#frag", "x", "a")],
    ),
    (
        "anchor-script-style-excluded",
        '<a href="/s">Go<script>var a = "</a>";</script><style>.x{}</style> now</a>',
        "anchors",
        [("/s", "Go now", "a")],
    ),
    (
        "anchor-order-with-area",
        '<a href="1">one</a><map><area href="2" alt="two"></map><a href="3">three</a>',
        "anchors",
        [("1", "one", "a"), ("2", "two", "area"), ("3", "three", "a")],
    ),
    (
        "anchor-whitespace",
        '<a href="w">\n   Multi\n   line\t text  </a>',
        "anchors",
        [("w", "Multi line text", "a")],
    ),
    ("anchor-uppercase", '<A HREF="/U">Up</A>', "anchors", [("/U", "Up", "a")]),
    (
        "anchor-entities",
        '<a href="e">Caf&eacute; &amp; bar&nbsp;&gt; &#x1F600;</a>',
        "anchors",
        [("e", "Café & bar > \U0001f600", "a")],
    ),
    ("anchor-comment", '<a href="c">A<!-- hidden -->B</a>', "anchors", [("c", "AB", "a")]),
    ("anchor-empty-text", '<a href="/x"></a>', "anchors", [("/x", "", "a")]),
    (
        "anchor-block-content",
        '<a href="/card"><div><h3>Title</h3><p>Body text</p></div></a>',
        "anchors",
        [("/card", "TitleBody text", "a")],
    ),
    (
        "anchor-in-svg",
        '<svg><a href="/svg"><text>S</text></a><a xlink:href="/x">X</a></svg>',
        "anchors",
        [("/svg", "S", "a")],
    ),
    (
        "anchor-nested-a-closes-outer",
        '<a href="o">Outer <a href="i">Inner</a> tail</a>',
        "anchors",
        [("o", "Outer", "a"), ("i", "Inner", "a")],
    ),
    (
        "anchor-duplicate-attribute",
        '<a href="/first" href="/second">dup</a>',
        "anchors",
        [("/first", "dup", "a")],
    ),
    # -- images ----------------------------------------------------------------------------
    (
        "image-attributes",
        '<img src=" a.png " alt="A" width="10" height=20 loading="lazy">',
        "images",
        [("a.png", "A", "10", "20", "lazy")],
    ),
    ("image-data-src", '<img data-src="/lazy.jpg">', "images", [("/lazy.jpg", None, "", "", "")]),
    (
        "image-empty-src-uses-data-src",
        '<img src="" data-src="/real.jpg">',
        "images",
        [("/real.jpg", None, "", "", "")],
    ),
    ("image-src-beats-data-src", '<img src="a" data-src="b">', "images", [("a", None, "", "", "")]),
    ("image-no-src", '<img alt="x">', "images", [("", "x", "", "", "")]),
    ("image-no-alt", '<img src="s">', "images", [("s", None, "", "", "")]),
    ("image-alt-raw", '<img src="s" alt=" a  b ">', "images", [("s", " a  b ", "", "", "")]),
    (
        "image-order",
        '<img src="1"><p><img src="2"></p><picture><img src="3"></picture>',
        "images",
        [("1", None, "", "", ""), ("2", None, "", "", ""), ("3", None, "", "", "")],
    ),
    # -- resources -------------------------------------------------------------------------
    (
        "res-stylesheet",
        '<link rel="stylesheet" href="s.css">',
        "resources",
        [("s.css", "stylesheet")],
    ),
    (
        "res-alternate-stylesheet",
        '<link rel="Alternate StyleSheet" href="/alt.css">',
        "resources",
        [("/alt.css", "stylesheet")],
    ),
    (
        "res-icons",
        ('<link rel="icon" href="/a.ico"><link rel="shortcut icon" href="/b.ico">'
        '<link rel="apple-touch-icon" href="/c.png"><link rel="Apple-Touch-Icon-Precomposed" '
        'href="/d.png"><link rel="mask-icon" href="/e.svg">'),
        "resources",
        [("/a.ico", "icon"), ("/b.ico", "icon"), ("/c.png", "icon"), ("/d.png", "icon"),
         ("/e.svg", "icon")],
    ),
    (
        "res-preload",
        '<link rel="preload" href="/f.woff2" as="font"><link rel="modulepreload" href="/m.js">',
        "resources",
        [("/f.woff2", "preload"), ("/m.js", "preload")],
    ),
    ("res-manifest", '<link rel="manifest" href="/site.webmanifest">', "resources",
     [("/site.webmanifest", "manifest")]),
    (
        "res-other-links-ignored",
        ('<link rel="prefetch" href="/p"><link rel="dns-prefetch" href="//cdn">'
        '<link rel="preconnect" href="https://cdn"><link rel="canonical" href="/c">'
        '<link rel="alternate" href="/feed"><link href="/no-rel.css">'),
        "resources",
        [],
    ),
    (
        "res-script",
        ('<script src=" /a.js "></script><script>inline()</script><script type="module" src="/m.js">'
        "</script>"),
        "resources",
        [("/a.js", "script"), ("/m.js", "script")],
    ),
    (
        "res-img-and-srcset",
        '<img src="a.jpg" srcset="a-1x.jpg 1x, a-2x.jpg 2x">',
        "resources",
        [("a.jpg", "image"), ("a-1x.jpg", "image"), ("a-2x.jpg", "image")],
    ),
    (
        "res-srcset-commas-in-urls",
        ('<img srcset="https://cdn.example/w_100,h_100/a.jpg 100w, '
        'https://cdn.example/w_200,h_200/a.jpg 200w">'),
        "resources",
        [("https://cdn.example/w_100,h_100/a.jpg", "image"),
         ("https://cdn.example/w_200,h_200/a.jpg", "image")],
    ),
    (
        "res-srcset-no-descriptors",
        '<img srcset="a.jpg, b.jpg,  c.jpg,">',
        "resources",
        [("a.jpg", "image"), ("b.jpg", "image"), ("c.jpg", "image")],
    ),
    (
        "res-srcset-tight-commas",
        '<img srcset="s.jpg 480w,m.jpg 800w,l.jpg 1200w">',
        "resources",
        [("s.jpg", "image"), ("m.jpg", "image"), ("l.jpg", "image")],
    ),
    (
        "res-srcset-one-url-with-comma",  # HTML: a URL is a whitespace-free run, commas included
        '<img srcset="a.jpg,b.jpg">',
        "resources",
        [("a.jpg,b.jpg", "image")],
    ),
    (
        "res-srcset-parenthesised-descriptor",
        '<img srcset="a.jpg (x, y) 1x, b.jpg 2x">',
        "resources",
        [("a.jpg", "image"), ("b.jpg", "image")],
    ),
    (
        "res-srcset-whitespace",
        '<img srcset="\n   a.jpg   1.5x  ,\n   b.jpg\t3x\n">',
        "resources",
        [("a.jpg", "image"), ("b.jpg", "image")],
    ),
    (
        "res-picture-sources-are-images",
        ('<picture><source srcset="p.avif" type="image/avif"><source srcset="p.webp 1x, p2.webp 2x">'
        '<img src="p.jpg" alt=""></picture>'),
        "resources",
        [("p.avif", "image"), ("p.webp", "image"), ("p2.webp", "image"), ("p.jpg", "image")],
    ),
    (
        "res-video",
        ('<video src="v.mp4" poster="poster.jpg"><source src="v.webm" type="video/webm">'
        '<track src="sub.vtt"></video>'),
        "resources",
        [("v.mp4", "media"), ("poster.jpg", "media"), ("v.webm", "media")],
    ),
    (
        "res-audio",
        '<audio src="a.mp3"></audio><audio><source src="a.ogg"></audio>',
        "resources",
        [("a.mp3", "media"), ("a.ogg", "media")],
    ),
    (
        "res-source-srcset-outside-picture",
        '<video><source srcset="x.mp4"></video>',
        "resources",
        [("x.mp4", "media")],
    ),
    ("res-iframe-not-resource", '<iframe src="/embed"></iframe>', "resources", []),
    ("res-data-src-not-resource", '<img data-src="/lazy.jpg">', "resources", []),
    ("res-empty-urls-skipped", '<script src=""></script><img src=" "><link rel="icon" href="">',
     "resources", []),
    (
        "res-document-order",
        ('<html><head><link rel="stylesheet" href="1.css"><script src="2.js"></script>'
        '<link rel="icon" href="3.ico"></head><body><img src="4.png"><script src="5.js"></script>'
        '<video poster="6.jpg"></video></body></html>'),
        "resources",
        [("1.css", "stylesheet"), ("2.js", "script"), ("3.ico", "icon"), ("4.png", "image"),
         ("5.js", "script"), ("6.jpg", "media")],
    ),
    # -- malformed markup (lxml/libxml2 recovery) -------------------------------------------
    (
        # libxml2 (unlike an HTML5 parser) nests the second <p> inside the open <a>
        "malformed-unclosed-p-and-a",
        '<title>T</title><p>para <a href="/1">one<p><a href="/2">two <b>bold',
        "anchors",
        [("/1", "onetwo bold", "a"), ("/2", "two bold", "a")],
    ),
    ("malformed-unclosed-title", "<title>Never closed", "title", "Never closed"),
    (
        "malformed-unclosed-anchor-at-eof",
        '<body><div><a href="x">unclosed <span>at eof',
        "anchors",
        [("x", "unclosed at eof", "a")],
    ),
    (
        "malformed-stray-end-tags",
        '</div></a></span><a href="ok">ok</a></p></li>',
        "anchors",
        [("ok", "ok", "a")],
    ),
    (
        # libxml2 closes <i> and <a> at </b>: " more" lands outside the link
        "malformed-misnested",
        '<b><a href="/bn">bold <i>it</b> more</i></a> after',
        "anchors",
        [("/bn", "bold it", "a")],
    ),
    (
        "malformed-unquoted-attributes",
        "<meta name=description content=plain><a href=/u?a=1&b=2>u</a>",
        "anchors",
        [("/u?a=1&b=2", "u", "a")],
    ),
    (
        # the second <a is swallowed as attributes of the unterminated <img
        "malformed-garbage",
        '<<a href="g">>g<</a>< /p><img src="i.png"<a href="h">h</a>',
        "anchors",
        [("g", ">g<", "a")],
    ),
]


@pytest.mark.parametrize(
    ("html", "what", "expected"),
    [pytest.param(html, what, expected, id=case_id) for case_id, html, what, expected in RULES],
)
def test_rule(html: str, what: str, expected: Any) -> None:
    assert facts(extract(html), what) == expected


@pytest.mark.parametrize(
    "html",
    ["", "   \n\t ", "  \r\n", "<!-- only a comment -->", "<!DOCTYPE html>"],
    ids=["empty", "ws", "ws-crlf", "comment-only", "doctype-only"],
)
def test_empty_document(html: str) -> None:
    assert extract(html) == Extracted(PageMeta(), "", [], [], [])


def test_types() -> None:
    result = extract(
        '<html lang="en"><title>T</title><a href="/a">A</a><img src="i.png" alt="I">'
        '<link rel="stylesheet" href="s.css">'
    )
    assert isinstance(result, Extracted)
    assert isinstance(result.meta, PageMeta)
    assert result.anchors == [AnchorRef("/a", "A", "a")]
    assert result.images == [ImageRef("i.png", "I", "", "", "")]
    assert result.resources == [ResourceRef("i.png", "image"), ResourceRef("s.css", "stylesheet")]


# -- max_anchors ---------------------------------------------------------------------------

MANY = (
    '<html><head><title>Many</title></head><body><a href="1">1</a><map><area href="2" alt="2">'
    '</map><a href="3">3</a><a href="4">4</a><meta name="description" content="late">'
    '<img src="late.png"><link rel="stylesheet" href="late.css"></body></html>'
)


@pytest.mark.parametrize(
    ("limit", "hrefs"),
    [(None, ["1", "2", "3", "4"]), (0, []), (1, ["1"]), (2, ["1", "2"]), (3, ["1", "2", "3"]),
     (99, ["1", "2", "3", "4"])],
)
def test_max_anchors(limit: int | None, hrefs: list[str]) -> None:
    result = extract(MANY, max_anchors=limit)
    assert [a.href for a in result.anchors] == hrefs
    # the rest of the page is still read
    assert result.meta.title == "Many"
    assert result.meta.description == "late"
    assert [i.src for i in result.images] == ["late.png"]
    assert [r.url for r in result.resources] == ["late.png", "late.css"]


def test_max_anchors_keeps_text_of_collected_anchor() -> None:
    html = '<a href="1">one <a href="2">two</a></a><a href="3">three <b>bold</b></a>'
    assert facts(extract(html, max_anchors=2), "anchors") == [("1", "one", "a"), ("2", "two", "a")]


# -- text in, not bytes ---------------------------------------------------------------------

JA_PAGE = (
    '<html lang="ja"><head><meta charset="shift_jis"><title>日本語のページ ①</title>'
    '<meta name="description" content="説明文"></head>'
    '<body><a href="/ja/リンク">リンク</a></body></html>'
)


def test_bytes_are_refused() -> None:
    # Scrapy and w3lib decode the body; extract() takes their text, never raw bytes
    with pytest.raises(TypeError, match="bytes"):
        extract(b"<title>x</title>")  # type: ignore[arg-type]


def test_str_ignores_meta_charset() -> None:
    # a str is already decoded: a <meta charset> in it must not re-decode anything
    result = extract(JA_PAGE)
    assert result.meta.title == "日本語のページ ①"
    assert result.meta.lang == "ja"
    assert facts(result, "anchors") == [("/ja/リンク", "リンク", "a")]


def test_str_with_lone_surrogate() -> None:
    assert extract("<title>a\ud800b</title>").meta.title == "a\ufffdb"


# -- independence of calls -----------------------------------------------------------------


def test_results_are_independent() -> None:
    first = extract('<title>One</title><a href="/1">1</a>')
    second = extract('<title>Two</title><a href="/2">2</a><img src="x">')
    assert first.meta.title == "One" and facts(first, "anchors") == [("/1", "1", "a")]
    assert first.images == [] and first.resources == []
    assert second.meta.title == "Two" and facts(second, "anchors") == [("/2", "2", "a")]


def test_threads() -> None:
    docs = [doc for _, doc in CORPUS] * 3
    expected = [extract(doc) for doc in docs]
    results: dict[int, list[Extracted]] = {}

    def work(n: int) -> None:
        results[n] = [extract(doc) for doc in docs]

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(results[n] == expected for n in range(4))


# ------------------------------------------------------------------------------------------
# Parity with a DOM reading (parsel over the full lxml tree)
# ------------------------------------------------------------------------------------------

UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LOWER = "abcdefghijklmnopqrstuvwxyz"


def lower(expr: str) -> str:
    """XPath: ``expr`` with surrounding whitespace removed, ASCII lower-cased."""
    return f"translate(normalize-space({expr}), '{UPPER}', '{LOWER}')"


def has_rel(token: str) -> str:
    """XPath predicate: ``rel`` contains the (lower-case) ``token``."""
    return f"contains(concat(' ', {lower('@rel')}, ' '), ' {token} ')"


def collapse(text: str) -> str:
    return " ".join(text.split())


def srcset_urls_reference(value: str) -> list[str]:
    """HTML's "parse a srcset attribute", written out character by character."""
    urls: list[str] = []
    pos, end = 0, len(value)
    while True:
        while pos < end and (value[pos] in ASCII_WS or value[pos] == ","):
            pos += 1
        if pos >= end:
            return urls
        start = pos
        while pos < end and value[pos] not in ASCII_WS:
            pos += 1
        url = value[start:pos]
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            in_parens = False
            while pos < end:
                char = value[pos]
                pos += 1
                if char == "(":
                    in_parens = True
                elif char == ")":
                    in_parens = False
                elif char == "," and not in_parens:
                    break
        if url:
            urls.append(url)


def declared_charset(sel: Any) -> str:
    """The first ``<meta charset>`` or ``<meta http-equiv=content-type>`` charset in document
    order, lower-case."""
    for node in sel.xpath(
        f"//meta[normalize-space(@charset) or ({lower('@http-equiv')}='content-type' and @content)]"
    ):
        if (node.attrib.get("charset") or "").strip(ASCII_WS):
            return str(node.attrib["charset"]).strip(ASCII_WS).lower()
        found = re.search(r"""charset\s*=\s*["']?([^\s;"']+)""", node.attrib["content"],
                          re.IGNORECASE)
        if found:
            return found.group(1).lower()
    return ""


def dom_reference(sel: Any) -> dict[str, Any]:
    """The page facts, read from the DOM with selectors (independent of nitpicker.policy.extract)."""

    def first(xpath: str) -> str:
        return sel.xpath(xpath).get() or ""

    def meta_name(name: str) -> str:
        return first(f"(//meta[@content][{lower('@name')}='{name}'])[1]/@content").strip()

    def meta_property(prop: str) -> str:
        return first(f"(//meta[@content][{lower('@property')}='{prop}'])[1]/@content").strip()

    robots: set[str] = set()
    for content in sel.xpath(f"//meta[{lower('@name')}='robots']/@content").getall():
        robots.update(content.lower().replace(",", " ").split())
    meta = {
        "title": collapse(sel.xpath("string((//title[not(ancestor::svg)])[1])").get()),
        "lang": first("/html/@lang").strip(ASCII_WS),
        "description": meta_name("description"),
        "keywords": meta_name("keywords"),
        "noindex": "noindex" in robots or "none" in robots,
        "nofollow": "nofollow" in robots or "none" in robots,
        "noarchive": "noarchive" in robots,
        "canonical": first(f"(//link[@href][{has_rel('canonical')}])[1]/@href").strip(ASCII_WS),
        "alternate": first(f"(//link[@href][{has_rel('alternate')}])[1]/@href").strip(ASCII_WS),
        "prev": first(f"(//link[@href][{has_rel('prev')}])[1]/@href").strip(ASCII_WS),
        "next": first(f"(//link[@href][{has_rel('next')}])[1]/@href").strip(ASCII_WS),
        "og_type": meta_property("og:type"),
        "og_title": meta_property("og:title"),
        "og_site_name": meta_property("og:site_name"),
        "og_description": meta_property("og:description"),
        "og_url": meta_property("og:url"),
        "og_image": meta_property("og:image"),
        "twitter_card": first(
            f"(//meta[@content][{lower('@name')}='twitter:card' or "
            f"{lower('@property')}='twitter:card'])[1]/@content"
        ).strip(),
        "charset": declared_charset(sel),
    }

    anchors = []
    for link in sel.xpath("//a[@href] | //area[@href]"):
        tag = link.xpath("name()").get()
        href = link.attrib["href"].strip(ASCII_WS)
        if tag == "area":
            text = collapse(link.attrib.get("alt", ""))
        else:
            parts = []
            for node in link.xpath(
                ".//text()[not(ancestor::script) and not(ancestor::style)] | .//img"
            ):
                if isinstance(node.root, str):
                    parts.append(node.root)
                else:
                    parts.append(f" {node.attrib.get('alt', '')} ")
            text = collapse("".join(parts))
        anchors.append((href, text, tag))

    images = []
    for img in sel.xpath("//img"):
        src = img.attrib.get("src", "").strip(ASCII_WS) or img.attrib.get("data-src", "").strip(
            ASCII_WS
        )
        images.append(
            (src, img.attrib.get("alt"), img.attrib.get("width", ""),
             img.attrib.get("height", ""), img.attrib.get("loading", ""))
        )

    resources: list[tuple[str, str]] = []

    def add(url: str | None, kind: str) -> None:
        if url is not None and url.strip(ASCII_WS):
            resources.append((url.strip(ASCII_WS), kind))

    for node in sel.xpath("//link | //script | //img | //source | //video | //audio"):
        tag = node.xpath("name()").get()
        attrs = node.attrib
        if tag == "link":
            if "rel" not in attrs:
                continue
            if node.xpath(f"boolean(self::*[{has_rel('stylesheet')}])").get() == "1":
                add(attrs.get("href"), "stylesheet")
            elif node.xpath("boolean(self::*[contains(translate(@rel, "
                            f"'{UPPER}', '{LOWER}'), 'icon')])").get() == "1":
                add(attrs.get("href"), "icon")
            elif node.xpath(f"boolean(self::*[{has_rel('preload')} or {has_rel('modulepreload')}])"
                            ).get() == "1":
                add(attrs.get("href"), "preload")
            elif node.xpath(f"boolean(self::*[{has_rel('manifest')}])").get() == "1":
                add(attrs.get("href"), "manifest")
        elif tag == "script":
            add(attrs.get("src"), "script")
        elif tag == "img":
            add(attrs.get("src"), "image")
            for url in srcset_urls_reference(attrs.get("srcset", "")):
                add(url, "image")
        elif tag == "source":
            kind = "image" if node.xpath("boolean(ancestor::picture)").get() == "1" else "media"
            add(attrs.get("src"), kind)
            for url in srcset_urls_reference(attrs.get("srcset", "")):
                add(url, kind)
        elif tag == "video":
            add(attrs.get("src"), "media")
            add(attrs.get("poster"), "media")
        elif tag == "audio":
            add(attrs.get("src"), "media")

    return {
        "meta": meta,
        "base_href": first("(//base[@href])[1]/@href").strip(ASCII_WS),
        "anchors": anchors,
        "images": images,
        "resources": resources,
    }


def streamed(result: Extracted) -> dict[str, Any]:
    m = result.meta
    return {
        "meta": {name: getattr(m, name) for name in PageMeta.__dataclass_fields__},
        "base_href": result.base_href,
        "anchors": facts(result, "anchors"),
        "images": facts(result, "images"),
        "resources": facts(result, "resources"),
    }


def assert_parity(result: Extracted, reference: dict[str, Any]) -> None:
    got = streamed(result)
    # field by field, for readable failures
    for name, value in reference["meta"].items():
        assert got["meta"][name] == value, f"meta.{name}"
    for key in ("base_href", "anchors", "images", "resources"):
        assert got[key] == reference[key], key


# An inline corpus of realistic documents, so that parity means something without fixtures.
CORPUS: list[tuple[str, str]] = [
    (
        "blog-article",
        """<!DOCTYPE html>
<html lang="en-US" class="no-js">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>How we cut our build times in half &mdash; The Engineering Blog</title>
  <meta name="description" content="A long story about caches, &quot;remote execution&quot;, and patience.">
  <meta name="keywords" content="ci, build, bazel, caching">
  <meta name="robots" content="index, follow, max-image-preview:large">
  <link rel="canonical" href="https://blog.example.com/2024/05/build-times/">
  <link rel="alternate" type="application/rss+xml" title="RSS" href="https://blog.example.com/feed.xml">
  <meta property="og:type" content="article">
  <meta property="og:title" content="How we cut our build times in half">
  <meta property="og:site_name" content="The Engineering Blog">
  <meta property="og:description" content="Caches, remote execution, patience.">
  <meta property="og:url" content="https://blog.example.com/2024/05/build-times/">
  <meta property="og:image" content="https://blog.example.com/img/og/build-times.png">
  <meta property="og:image" content="https://blog.example.com/img/og/second.png">
  <meta name="twitter:card" content="summary_large_image">
  <link rel="stylesheet" href="/assets/main.3f9a.css">
  <link rel="stylesheet" media="print" href="/assets/print.css">
  <link rel="icon" type="image/png" sizes="32x32" href="/favicon-32x32.png">
  <link rel="apple-touch-icon" sizes="180x180" href="/apple-touch-icon.png">
  <link rel="manifest" href="/site.webmanifest">
  <link rel="preload" href="/fonts/inter.woff2" as="font" type="font/woff2" crossorigin>
  <script async src="https://www.googletagmanager.com/gtag/js?id=G-XXXX"></script>
  <script>
    window.dataLayer = window.dataLayer || [];
    function gtag(){dataLayer.push(arguments);}
    gtag('js', new Date()); document.write('<a href="/not-a-link">no</a>');
  </script>
  <style>.hero a { color: red } /* <a href="/nope">x</a> */</style>
</head>
<body class="post">
  <a class="skip-link" href="#main">Skip to content</a>
  <header class="site-header">
    <a href="/" class="logo"><img src="/img/logo.svg" alt="The Engineering Blog" width="120" height="32"></a>
    <nav aria-label="Primary">
      <ul>
        <li><a href="/">Home</a></li>
        <li><a href="/archive/">Archive</a></li>
        <li><a href="/about/" aria-current="page">About&nbsp;us</a></li>
        <li><a href="https://github.com/example" rel="noopener" target="_blank">GitHub <svg aria-hidden="true" width="12" height="12"><title>external</title><path d="M0 0h12v12z"/></svg></a></li>
      </ul>
    </nav>
  </header>
  <main id="main">
    <article>
      <h1>How we cut our build times in half</h1>
      <p class="byline">By <a href="/authors/jane/" rel="author">Jane&nbsp;Doe</a> &middot; <time datetime="2024-05-01">May 1, 2024</time></p>
      <figure>
        <img src="/img/posts/build-times/chart.png"
             srcset="/img/posts/build-times/chart.png 1x, /img/posts/build-times/chart@2x.png 2x"
             alt="Build time went from 40 to 18 minutes" width="800" height="400" loading="lazy">
        <figcaption>Median build time, <a href="/data/build-times.csv">raw data</a>.</figcaption>
      </figure>
      <p>We started with <code>bazel</code> and a <a href="https://bazel.build/remote/caching">remote
         cache</a>. Then we read <a href="/2023/11/flaky-tests/#the-fix"><em>our own</em> post about
         <strong>flaky tests</strong></a> again.</p>
      <p>Questions? <a href="mailto:eng@example.com?subject=Build%20times">Mail us</a> or call <a href="tel:+15555550100">+1 555 555 0100</a>.</p>
      <p><a href="javascript:void(0)" onclick="share()">Share</a> &bull; <a href="">Reload</a></p>
    </article>
  </main>
  <footer>
    <p>&copy; 2024 Example Inc. <a href="/privacy/">Privacy</a> | <a href="/terms/">Terms</a></p>
  </footer>
  <script src="/assets/main.js" defer></script>
  <script type="application/ld+json">{"@type": "BlogPosting", "url": "<a href='/x'>"}</script>
</body>
</html>
""",
    ),
    (
        "shop-product",
        """<!doctype html>
<html lang="de">
<head>
<meta charset="UTF-8">
<title>Wanderschuh &bdquo;Alpin&ldquo; &ndash; Gr&ouml;&szlig;e 38&ndash;46 | Bergsport Shop</title>
<META NAME="Description" CONTENT="  Robuster Wanderschuh, wasserdicht.  ">
<meta name="ROBOTS" content="NOARCHIVE">
<link rel="Canonical" href="https://shop.example.de/p/wanderschuh-alpin">
<link rel="alternate" hreflang="en" href="https://shop.example.de/en/p/hiking-boot-alpin">
<link rel="alternate" hreflang="fr" href="https://shop.example.de/fr/p/chaussure-alpin">
<meta property="og:type" content="product">
<meta property="OG:TITLE" content="Wanderschuh Alpin">
<meta name="twitter:card" content="summary">
<link rel="shortcut icon" href="/favicon.ico">
<link rel="mask-icon" href="/safari-pinned-tab.svg" color="#5bbad5">
<link rel="modulepreload" href="/js/app.mjs">
<link rel="dns-prefetch" href="//cdn.example.de">
<link rel="preconnect" href="https://cdn.example.de">
<link rel="prefetch" href="/p/next">
<link rel="stylesheet" href="https://cdn.example.de/css/shop.min.css" integrity="sha384-x">
<script type="module" src="/js/app.mjs"></script>
<script nomodule src="/js/app.legacy.js"></script>
</head>
<body>
<div class="breadcrumbs"><a href="/">Start</a> &rsaquo; <a href="/c/schuhe">Schuhe</a> &rsaquo; <span>Wanderschuh</span></div>
<div class="gallery">
  <picture>
    <source type="image/avif" srcset="https://cdn.example.de/i/w_400,q_80/alpin.avif 400w, https://cdn.example.de/i/w_800,q_80/alpin.avif 800w" sizes="(max-width: 600px) 100vw, 50vw">
    <source type="image/webp" srcset="https://cdn.example.de/i/alpin-400.webp 400w,https://cdn.example.de/i/alpin-800.webp 800w">
    <img src="https://cdn.example.de/i/alpin-800.jpg" alt="Wanderschuh Alpin, seitlich" width="800" height="600">
  </picture>
  <ul class="thumbs">
    <li><a href="#bild-2"><img data-src="https://cdn.example.de/i/alpin-2-thumb.jpg" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="Ansicht 2" class="lazyload"></a></li>
    <li><a href="#bild-3"><img data-src="https://cdn.example.de/i/alpin-3-thumb.jpg" alt="Ansicht 3" loading="lazy"></a></li>
    <li><a href="#video"><img src="" data-src="/i/video-thumb.jpg" alt=""> Video ansehen</a></li>
  </ul>
  <video id="video" controls preload="none" poster="https://cdn.example.de/v/alpin-poster.jpg">
    <source src="https://cdn.example.de/v/alpin.webm" type="video/webm">
    <source src="https://cdn.example.de/v/alpin.mp4" type="video/mp4">
    <track kind="captions" src="/v/alpin.de.vtt" srclang="de">
    Ihr Browser kann dieses <a href="https://cdn.example.de/v/alpin.mp4">Video</a> nicht abspielen.
  </video>
</div>
<form action="/cart" method="post">
  <select name="size"><option>38</option><option>39</option></select>
  <button type="submit">In den Warenkorb</button>
  <input type="image" src="/img/buy.png" alt="Kaufen">
</form>
<table class="specs">
  <tr><th>Material</th><td>Leder &amp; <a href="/glossar/goretex">GORE-TEX&reg;</a></td></tr>
  <tr><th>Gewicht</th><td>1.100&thinsp;g</td></tr>
</table>
<iframe src="https://www.youtube-nocookie.com/embed/xyz" title="Video"></iframe>
<map name="sizes"><area shape="rect" coords="0,0,10,10" href="/groessen#eu" alt="EU-Gr&ouml;&szlig;en"><area shape="rect" coords="10,0,20,10" href="/groessen#us" alt="US sizes"><area shape="default" nohref alt="nothing"></map>
<img src="/img/groessen.png" usemap="#sizes" alt="Gr&ouml;&szlig;entabelle">
<script>var product = {"name": "Alpin", "html": "<a href=\\"/evil\\">x</a>"};</script>
</body>
</html>
""",
    ),
    (
        "legacy-tag-soup",
        """<HTML>
<HEAD>
<TITLE>Welcome to   My   Homepage!!!</TITLE>
<META NAME="keywords" CONTENT="homepage,links,cool stuff">
<META NAME="description" CONTENT="My homepage &amp; links">
<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=iso-8859-1">
<BASE HREF="http://www.example.org/~user/">
</HEAD>
<BODY BGCOLOR="#FFFFFF" BACKGROUND="bg.gif">
<CENTER><FONT SIZE=+2><B>Welcome!</FONT></B></CENTER>
<P>Here are my <A HREF="links.html">cool <I>links</A></I>
<P>And my <A HREF=guestbook.cgi?action=sign&amp;lang=en>guestbook
<TABLE BORDER=1>
<TR><TD><A HREF="page1.html"><IMG SRC="btn1.gif" ALT="Page 1" BORDER=0></A>
<TD><A HREF="page2.html"><IMG SRC="btn2.gif" BORDER=0></A>
<TR><TD COLSPAN=2><A HREF="mailto:me@example.org">E-Mail me!</TD>
</TABLE>
<UL>
<LI><A HREF="http://www.example.com/">Example
<LI><A HREF='single-quoted.html'>Single quoted</A>
<LI><A HREF=unquoted.html TARGET=_blank>Unquoted
</UL>
<MAP NAME="nav"><AREA HREF="top.html" ALT="Top" SHAPE=RECT COORDS="0,0,50,50"></MAP>
<IMG SRC="nav.gif" USEMAP="#nav" WIDTH=100 HEIGHT=50>
<a href="x.html">x<a href="y.html">y</a>
<p>Counter: <img src="/cgi-bin/counter.pl?page=home" alt="">
<p>Last updated: 1999
</BODY>
</HTML>
""",
    ),
    (
        "docs-with-svg",
        """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>
    API Reference
    &middot; Widgets
</title>
<meta name="description" content="">
<meta name="description" content="second description is ignored">
<link rel="canonical nofollow" href="  /docs/api/  ">
<link rel="icon" href="data:image/svg+xml,<svg xmlns='http://www.w3.org/2000/svg'/>">
<link rel="stylesheet" href="/docs/style.css"><link rel="stylesheet" href="">
</head>
<body>
<svg style="display:none" xmlns="http://www.w3.org/2000/svg">
  <symbol id="icon-link" viewBox="0 0 16 16"><title>Permalink</title><path d="M4 4h8v8H4z"/></symbol>
</svg>
<aside>
  <a href="#install"><svg width="16" height="16"><use href="#icon-link"></use></svg> Install</a>
  <a href="#usage"><svg><title>Usage icon</title></svg>Usage</a>
  <a href="#api">
     API
     <span class="badge">new</span>
  </a>
</aside>
<main>
<h2 id="install">Install <a class="anchor" href="#install" aria-hidden="true">#</a></h2>
<pre><code>pip install widgets  # see <a href="https://pypi.org/project/widgets/">PyPI</a></code></pre>
<h2 id="usage">Usage</h2>
<p>Call <a href="/docs/api/#widgets.make"><code>widgets.make()</code></a>, then
<a href="/docs/api/#widgets.Widget.run"><code>Widget.run()</code><script>track("run")</script></a>.</p>
<p>Inline <a href="/docs/style/"><style>.x{color:red}</style>styled</a> link and
<a href="/docs/noscript/"><noscript>NoJS</noscript> fallback</a>.</p>
<svg width="200" height="100" viewBox="0 0 200 100">
  <a href="/docs/diagram/"><rect width="100" height="50"/><text x="10" y="20">Diagram</text></a>
  <image href="/docs/diagram.png" width="10" height="10"/>
</svg>
<template id="row"><tr><td><a href="/docs/template-link/">templated</a></td></tr></template>
<h2 id="api">API</h2>
<dl>
  <dt><a href="../api/widgets.html#make" title="make">make(name, *, size=3)</a></dt>
  <dd>Returns a <a href="../api/widgets.html#Widget">Widget</a>.</dd>
</dl>
</main>
<footer><a href="https://github.com/example/widgets/edit/main/docs/api.md">Edit&nbsp;this&nbsp;page</a></footer>
<script src="/docs/search.js"></script>
<script src="/docs/search-index.js" async></script>
</body>
</html>
""",
    ),
    (
        "japanese-news",
        """<!DOCTYPE html>
<html lang="ja">
<head>
<meta charset="shift_jis">
<title>【速報】新しい駅が開業　―　地域ニュース</title>
<meta name="description" content="本日、新駅が開業しました。">
<meta name="keywords" content="ニュース,駅,開業">
<meta name="robots" content="none">
<meta property="og:site_name" content="地域ニュース">
<meta property="og:title" content="新しい駅が開業">
<link rel="canonical" href="https://news.example.jp/articles/2024/04/01/station">
</head>
<body>
<nav><a href="/">トップ</a>｜<a href="/local/">地域</a>｜<a href="/sports/">スポーツ</a></nav>
<h1>新しい駅が開業</h1>
<p>本日午前、<a href="/tags/駅">新駅</a>が開業しました。詳しくは<a href="https://example.jp/station?id=１２３">公式サイト</a>をご覧ください。</p>
<img src="/img/station.jpg" alt="新駅の外観" width="640" height="480">
<p><a href="/articles/2024/03/31/"><img src="/img/prev.png" alt="前の記事">前の記事へ</a></p>
</body>
</html>
""",
    ),
    (
        "landing-media",
        """<!DOCTYPE html>
<html>
<head>
<title>Launch</title>
<meta property="og:type" content="website">
<meta property="og:url" content="https://launch.example.com/">
<meta property="twitter:card" content="player">
<meta name="twitter:card" content="ignored, property came first">
<link rel="preload" as="image" href="/hero.avif" imagesrcset="/hero-1x.avif 1x, /hero-2x.avif 2x">
<link rel="preload" as="style" href="">
</head>
<body>
<section class="hero">
  <video autoplay muted loop playsinline src="/media/hero.mp4" poster="/media/hero-poster.jpg"></video>
  <h1>Ship <span class="accent">faster</span></h1>
  <a class="btn" href="/signup?plan=pro&amp;ref=hero">  Start free trial  </a>
  <a class="btn secondary" href="#demo"><span>Watch</span><span> the demo</span></a>
</section>
<section id="demo">
  <audio controls><source src="/media/podcast.ogg" type="audio/ogg"><source src="/media/podcast.mp3" type="audio/mpeg"></audio>
  <audio src="/media/jingle.mp3"></audio>
  <video controls><source srcset="/media/demo.webm"><source src="/media/demo.mp4"></video>
  <iframe src="https://player.example.com/embed/123" width="640" height="360"></iframe>
  <object data="/media/legacy.swf" type="application/x-shockwave-flash"><embed src="/media/legacy.swf"></object>
</section>
<section class="logos">
  <img src="/logos/a.svg" alt="Company A" width="100" height="40">
  <img src="/logos/b.svg" alt="" width="100" height="40">
  <img src="/logos/c.svg">
  <img srcset="/logos/d.png 1x, /logos/d@2x.png 2x" alt="Company D">
  <img data-src="/logos/e.png" alt="Company E" loading="lazy" width="100">
</section>
<picture>
  <source media="(min-width: 800px)" srcset="/hero-wide.jpg, /hero-wide@2x.jpg 2x">
  <img src="/hero-narrow.jpg" alt="Team photo">
</picture>
<footer>
  <a href="https://twitter.com/example"><img src="/icons/twitter.svg" alt="Twitter" width="24" height="24"></a>
  <a href="https://www.linkedin.com/company/example"><img src="/icons/linkedin.svg" alt="LinkedIn"></a>
  <a href="/legal/imprint">Imprint</a>
</footer>
</body>
</html>
""",
    ),
    (
        "conflicting-head",
        """<!DOCTYPE html>
<html lang="pt-BR" xml:lang="pt">
<head>
<base target="_self">
<base href="https://cdn.example.com.br/site/">
<base href="https://ignored.example.com/">
<title>Primeiro título</title>
<title>Segundo título</title>
<meta name="description" content="Primeira descrição">
<meta name="Description" content="Segunda descrição">
<meta name=" keywords " content=" a , b ">
<meta name="robots" content="noindex">
<meta name="Robots" content="NOARCHIVE">
<meta name="googlebot" content="nofollow">
<meta property="og:title" content="Primeiro OG">
<meta property="og:title" content="Segundo OG">
<meta property="og:description">
<meta property="og:description" content="Descrição OG">
<link rel="alternate" hreflang="en" href="/en/">
<link rel="alternate" hreflang="es" href="/es/">
<link rel="canonical" href="/pt/">
<link rel="canonical" href="/other/">
<link rel="ICON" href="favicon.ico">
</head>
<body>
<p><a href="pagina.html">Página</a> <a href="../up.html">Acima</a> <a href="//proto-relative.example.com/">Proto</a></p>
<p><a href="?q=busca">Busca</a> <a href="#top">Topo</a> <a href="   ">Só espaços</a></p>
<img src="foto.jpg" alt="Foto" width="50%" height="auto">
</body>
</html>
""",
    ),
    (
        "no-head-fragment",
        """Just some text, then a <a href=/frag>link</a> and an <img src=frag.png alt=frag>
and an unfinished <a href="/tail">tail <b>bold""",
    ),
    (
        "whitespace-and-comments",
        """<!DOCTYPE html>
<!--[if lt IE 9]><html class="ie"><![endif]-->
<!--[if gte IE 9]><!--><html lang="en"><!--<![endif]-->
<head>
<title>&#9;Tabs&#10;and&#13;newlines&nbsp;&nbsp;nbsp</title>
<!-- <meta name="description" content="commented out"> -->
<meta name="description" content="Line one
line two">
</head>
<body>
<a href="/ws">   lots   of
   whitespace   </a>
<a href="/c"><!-- comment -->Com<!-- another -->mented</a>
<a href="/nb">&nbsp;</a>
<a href="/zw">zero&#8203;width</a>
<a href="/cdata"><![CDATA[ cdata text ]]>after</a>
<a href="/textarea"><textarea>typed <b>not bold</b></textarea></a>
<a href="/adjacent">A</a><a href="/adjacent2">B</a>
<p>Text <a href="/inline">inline&#x20;link</a>, more text.</p>
<noscript><a href="/noscript">No script</a><img src="/pixel.gif" alt=""></noscript>
</body>
</html>
""",
    ),
    (
        "nesting-and-blocks",
        """<!DOCTYPE html>
<html lang="en"><head><title>Cards</title></head>
<body>
<a href="/card/1" class="card">
  <div class="card-body">
    <h3>Card one</h3>
    <p>Description <a href="/inner">inner link</a> rest</p>
  </div>
</a>
<ul><li><a href="/li1">one<li><a href="/li2">two</ul>
<table><tr><td><a href="/td1">cell one<td><a href="/td2">cell two</table>
<div><a href="/div">div link<div>inner div</div>after div</a></div>
<p><a href="/p">para link<p>next para</a></p>
<h2><a href="/h"><span><b><i>deep</i></b></span> heading</a></h2>
<form><a href="/form">form link</a><input type="submit" value="Go"></form>
<button><a href="/button">in button</a></button>
<a href="/img-only"><img src="/only.png" alt="Only image"></a>
<a href="/img-no-alt"><img src="/noalt.png"></a>
<a href="/imgs"><img src="/1.png" alt="One"><img src="/2.png" alt="Two"> and text</a>
</body></html>
""",
    ),
    (
        "xhtml",
        """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:og="http://ogp.me/ns#" lang="en" xml:lang="en">
<head>
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />
<title>XHTML page</title>
<meta name="description" content="An XHTML 1.0 page" />
<meta property="og:title" content="XHTML OG" />
<link rel="stylesheet" type="text/css" href="/x.css" />
<link rel="canonical" href="http://www.example.com/x.xhtml" />
<script type="text/javascript" src="/x.js"></script>
<script type="text/javascript">
//<![CDATA[
var a = "<a href='/cdata-script'>x</a>";
//]]>
</script>
</head>
<body>
<p><a href="/x1">One</a><br /><a href="/x2"><img src="/x2.png" alt="Two" /></a></p>
<p><img src="/x3.png" alt="" width="1" height="1" /></p>
</body>
</html>
""",
    ),
]


def fixture_files() -> list[Path]:
    return sorted(FIXTURES.rglob("*.html")) if FIXTURES.is_dir() else []


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, id=str(p.relative_to(FIXTURES))) for p in fixture_files()],
)
def test_parity_fixture(path: Path) -> None:
    _, text = w3lib_encoding.html_to_unicode(None, path.read_bytes())
    assert_parity(extract(text), dom_reference(parsel.Selector(text=text, type="html")))


@pytest.mark.parametrize("doc", [pytest.param(doc, id=name) for name, doc in CORPUS])
def test_parity_corpus(doc: str) -> None:
    assert_parity(extract(doc), dom_reference(parsel.Selector(text=doc, type="html")))


@pytest.mark.parametrize(
    "doc", [pytest.param(html, id=cid) for cid, html, _, _ in RULES if isinstance(html, str)]
)
def test_parity_rule_snippets(doc: str) -> None:
    """The rule-table snippets (malformed ones included) read the same as their DOM."""
    assert_parity(extract(doc), dom_reference(parsel.Selector(text=doc, type="html")))


def test_parity_corpus_is_not_trivial() -> None:
    """Guard against a reference that silently reads nothing."""
    totals = {"anchors": 0, "images": 0, "resources": 0}
    for _, doc in CORPUS:
        reference = dom_reference(parsel.Selector(text=doc, type="html"))
        for key in totals:
            totals[key] += len(reference[key])
    assert totals["anchors"] > 80 and totals["images"] > 20 and totals["resources"] > 50


def test_srcset_reference_agrees_on_tables() -> None:
    """The test's own srcset parser agrees with the rule-table expectations."""
    assert srcset_urls_reference("a.jpg (x, y) 1x, b.jpg 2x") == ["a.jpg", "b.jpg"]
    assert srcset_urls_reference("a.jpg,b.jpg") == ["a.jpg,b.jpg"]
    assert srcset_urls_reference("a.jpg, b.jpg,  c.jpg,") == ["a.jpg", "b.jpg", "c.jpg"]
    assert srcset_urls_reference(" , ,") == []



def test_pager_links_prev_and_next() -> None:
    meta = extract('<link rel="prev" href="/p/1"><link rel="Next" href=" /p/3 ">'
                   '<link rel="next" href="/p/9">').meta
    assert (meta.prev, meta.next) == ("/p/1", "/p/3")


def test_hreflang_alternates_and_form_actions() -> None:
    """Every ``<link rel=alternate hreflang>`` (the first alternate stays ``alternate``), in
    order, and each form's action (``""`` when absent); resolved, the hreflang hrefs are
    absolute and the first form of an https page that submits over http is named."""
    result = extract(
        '<head><link rel="alternate" href="/feed.xml" type="application/rss+xml">'
        '<link rel="alternate" hreflang="en" href="/en/">'
        '<link rel="Alternate" hreflang=" x-default " href="https://a.test/">'
        '<link rel="alternate" hreflang="de" href="">'
        '</head><body><form action="/search"></form><form></form>'
        '<form action=" http://a.test/post "></form></body>')
    meta = result.meta
    assert meta.alternate == "/feed.xml"
    assert meta.hreflang == [("en", "/en/"), ("x-default", "https://a.test/")]
    assert result.form_actions == ["/search", "", "http://a.test/post"]
    resolve_meta_urls(meta, "https://a.test/page")
    assert meta.hreflang == [("en", "https://a.test/en/"), ("x-default", "https://a.test/")]
    assert http_form_action("https://a.test/page", "https://a.test/page",
                            result.form_actions) == "http://a.test/post"
    assert http_form_action("http://a.test/page", "http://a.test/page",
                            result.form_actions) is None  # not https: nothing is mixed
    assert http_form_action("https://a.test/", "http://a.test/", ["/x"]) == "http://a.test/x"
    assert http_form_action("https://a.test/", "https://a.test/", ["", "/x"]) is None
