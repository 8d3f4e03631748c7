"""The markuplint module hooks (plugins/node/markuplint-hooks.mjs, registered for every worker
by plugins/node/register.mjs): with them, large pages get exactly the violations markuplint
gives without them — rule, severity, message, line, column, raw text — and all three patches
apply to the installed markuplint (an upgrade that changed a patched function fails here, not
silently slower)."""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING, Any

import pytest
from nitpicker_plugins._node import node_executable

from tests.helpers import ROOT

if TYPE_CHECKING:
    from pathlib import Path

NODE_SCRIPTS = ROOT / "plugins" / "node"

LINT = """
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
const [markuplint, ...files] = process.argv.slice(2);
const { MLEngine } = await import(pathToFileURL(markuplint).href);
let engine = null;
const found = [];
for (const file of files) {
    const html = readFileSync(file, 'utf8');
    if (engine === null) engine = await MLEngine.fromCode(html, { name: 'page.html', noSearchConfig: true });
    else await engine.setCode(html);
    const result = await engine.exec();
    found.push(result.violations.map((v) => [v.ruleId, v.severity, v.line, v.col, v.message, v.raw]));
}
console.log(JSON.stringify({ found, patches: globalThis.nitpickerMarkuplintPatches ?? [] }));
"""


def docs_page(number: int, links: int) -> str:
    """A large documentation page: a long sidebar, highlighted code over many lines, tables,
    ARIA roles and names (some missing), duplicate ids, a form, hidden parts."""
    sidebar = "\n".join(
        f'<li class="chapter-item{" expanded" if k % 7 == 0 else ""}"><a href="/ch{k}.html"'
        f'{" aria-current=page" if k == number else ""}><strong aria-hidden="true">{k}.</strong>'
        f" Chapter {k}</a>{'<ol class=section><li><a href=#s>Section</a></li></ol>' if k % 5 == 0 else ''}</li>"
        for k in range(links))
    code = "\n".join(
        f'<span class="hljs-keyword">let</span> <span class="hljs-variable">x{k}</span> = '
        f'<span class="hljs-number">{k}</span>;<span class="boring">// line {k}</span>'
        for k in range(links // 2))
    rows = "\n".join(f"<tr><td>{k}</td><td><code>v{k}</code></td></tr>" for k in range(40))
    return f"""<!DOCTYPE html>
<html lang="en" class="light sidebar-visible">
<head><meta charset="utf-8"><title>Chapter {number}</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body>
<div id="body-container">
<nav id="sidebar" class="sidebar" aria-label="Table of contents">
<div class="sidebar-scrollbox"><ol class="chapter">
{sidebar}
</ol></div>
<div id="sidebar-resize-handle" class="sidebar-resize-handle" role="separator"></div>
</nav>
<div id="page-wrapper" class="page-wrapper">
<div id="menu-bar" class="menu-bar sticky">
<div class="left-buttons"><button id="sidebar-toggle" class="icon-button" type="button"
 title="Toggle Table of Contents" aria-controls="sidebar"><i class="fa fa-bars"></i></button>
<button id="theme-toggle" class="icon-button" type="button" aria-haspopup="true"></button>
<ul id="theme-list" class="theme-popup" aria-label="Themes" role="menu">
<li role="none"><button role="menuitem" class="theme" id="light">Light</button></li>
<li role="none"><button role="menuitem" class="theme" id="light">Rust</button></li>
</ul></div>
<h1 class="menu-title">The Book</h1>
<div class="right-buttons"><a href="print.html" title="Print this book"><i class="fa fa-print"></i></a></div>
</div>
<div id="search-wrapper" class="hidden"><form id="searchbar-outer" class="searchbar-outer">
<input type="search" id="searchbar" name="searchbar" placeholder="Search this book ..."></form></div>
<main>
<h1 id="chapter"><a class="header" href="#chapter">Chapter {number}</a></h1>
<p>Prose with <em>emphasis</em>, <code>inline code</code> and a <a href="#x">link</a>.</p>
<pre><code class="language-rust hljs">{code}</code></pre>
<h4>A skipped level</h4>
<table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody>
{rows}
</tbody></table>
<img src="figure.svg" class="center" style="width: 50%">
<div role="buton">A misspelt role</div>
<details><summary>More</summary><p>Hidden <span><div>block in inline</div></span></p></details>
<a href="/empty"></a>
<nav class="nav-wrapper" aria-label="Page navigation"><a rel="prev" href="/p" class="mobile-nav-chapters previous"
 title="Previous chapter" aria-keyshortcuts="Left"><i class="fa fa-angle-left"></i></a></nav>
</main>
</div></div>
</body>
</html>
"""


def lint(files: list[Path], *, hooks: bool) -> dict[str, Any]:
    script = files[0].parent / "lint.mjs"
    script.write_text(LINT, encoding="utf-8")
    argv = [node_executable(), *(["--import", (NODE_SCRIPTS / "register.mjs").as_uri()]
                                 if hooks else []),
            str(script), str(ROOT / "node_modules" / "markuplint" / "lib" / "index.js"),
            *map(str, files)]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    directory = tmp_path_factory.mktemp("markuplint-hooks")
    found = []
    for number, links in ((1, 300), (2, 120), (3, 450)):
        page = directory / f"page-{number}.html"
        page.write_text(docs_page(number, links), encoding="utf-8")
        found.append(page)
    small = directory / "small.html"  # under the size the position index starts at
    small.write_text((ROOT / "fixtures" / "site" / "analyze" / "markuplint.html")
                     .read_text("utf-8"), encoding="utf-8")
    return [*found, small]


def test_the_hooks_change_no_violation(pages: list[Path]) -> None:
    plain = lint(pages, hooks=False)
    hooked = lint(pages, hooks=True)
    assert plain["patches"] == []
    assert sorted(hooked["patches"]) == [
        "/@markuplint/ml-spec/lib/algorithm/aria/get-permitted-roles-spec.js",
        "/@markuplint/parser-utils/lib/get-location.js",
        "/@markuplint/selector/lib/selector.js"]
    assert hooked["found"] == plain["found"]
    for violations in plain["found"]:
        assert violations  # every page has findings to compare
    rules = {rule for violations in plain["found"] for rule, *_ in violations}
    assert {"wai-aria", "no-duplicate-dec-attr", "permitted-contents"} & rules
    lines = [line for violations in plain["found"][:3] for _, _, line, *_ in violations]
    assert max(lines) > 100  # positions deep into a long page are compared too
