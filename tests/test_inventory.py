"""``--inventory FILE``: URLs known from elsewhere, crawled like sitemap URLs and labelled
(``nitpicker/crawl/inventory.py``), and the orphans among them (``links --type orphaned``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from nitpicker.crawl.config import ConfigError
from nitpicker.crawl.inventory import is_resource_path, read_inventory
from nitpicker.crawl.spider_args import config_from_spider_args
from tests.helpers import Archive, run

if TYPE_CHECKING:
    from fixtures.site import FixtureSite


def write_inventory(tmp_path: Path, site: FixtureSite) -> Path:
    inventory = tmp_path / "cms-export.txt"
    inventory.write_text(
        "# exported from the CMS\n"
        f"{site.url('/inventory/unlinked')}\n"
        f"{site.url('/inventory/linked')}   # also linked from the top\n"
        "\n"
        f"{site.external_url}/about\n"
        f"{site.url('/inventory/missing')}\n"
        f"{site.url('/inventory/unlinked')}\n",
        encoding="utf-8",
    )
    return inventory


def test_inventory_urls_are_crawled_labelled_and_their_orphans_listed(site: FixtureSite,
                                                                       tmp_path: Path) -> None:
    inventory = write_inventory(tmp_path, site)
    result = run("crawl", site.url("/inventory/"), "-o", "inv", "--inventory", inventory.name,
                 "--silent", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    archive = Archive(tmp_path / "inv.nitpicker")
    unlinked = archive.page(site.url("/inventory/unlinked"))
    assert unlinked is not None
    assert (unlinked["is_target"], unlinked["title"], unlinked["in_inventory"],
            unlinked["in_sitemap"]) == (1, "Inventory Unlinked", 1, 0)
    # crawled fully: its links are followed
    beyond = archive.page(site.url("/inventory/beyond"))
    assert beyond is not None and beyond["title"] == "Inventory Beyond"
    assert beyond["in_inventory"] == 0
    assert archive.page(site.url("/inventory/linked"))["in_inventory"] == 1
    assert archive.page(site.url("/inventory/missing"))["status"] == 404
    assert archive.page(site.url("/inventory/"))["in_inventory"] == 0
    # out of scope: labelled, not crawled
    external = archive.page(f"{site.external_url}/about")
    assert (external["in_inventory"], external["is_external"], external["status"]) == (1, 1, None)
    # the stored config names the file, not its URLs
    config = json.loads(archive.rows("SELECT config FROM info")[0]["config"])
    assert config["inventory"] == str(inventory)
    assert "inventory_urls" not in config

    orphans = run("query", "inv.nitpicker", "links", "--type", "orphaned", cwd=tmp_path)
    assert orphans.returncode == 0, orphans.stderr
    items = {item["url"]: item for item in json.loads(orphans.stdout)["items"]}
    assert items[site.url("/inventory/unlinked")] == {
        "url": site.url("/inventory/unlinked"), "title": "Inventory Unlinked", "status": 200,
        "in_sitemap": False, "in_inventory": True}
    # the inventory's one page that nothing links to (the 404 is no HTML page of the site)
    assert [url for url in items if "/inventory/" in url] == [site.url("/inventory/unlinked")]


def test_excluded_inventory_urls_are_skipped_rows(site: FixtureSite, tmp_path: Path) -> None:
    inventory = write_inventory(tmp_path, site)
    result = run("crawl", site.url("/inventory/"), "-o", "inv", "--inventory", inventory.name,
                 "--exclude", "/inventory/unl*", "--silent", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    archive = Archive(tmp_path / "inv.nitpicker")
    unlinked = archive.page(site.url("/inventory/unlinked"))
    assert (unlinked["in_inventory"], unlinked["is_skipped"], unlinked["skip_reason"],
            unlinked["status"]) == (1, 1, "excluded", None)
    assert archive.page(site.url("/inventory/beyond")) is None


def test_inventory_file_reading(tmp_path: Path) -> None:
    good = tmp_path / "urls.txt"
    good.write_text("HTTP://Example.com/a#x\n  # comment\nhttp://example.com/a\n"
                    "http://example.com/b?q=1 # note\n", encoding="utf-8")
    assert read_inventory(good) == ("http://example.com/a", "http://example.com/b?q=1")
    assert read_inventory(good, disable_queries=True) == ("http://example.com/a",
                                                          "http://example.com/b")
    bad = tmp_path / "bad.txt"
    bad.write_text("http://example.com/a\nftp://example.com/b\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.txt, line 2: Invalid URL: \"ftp://"):
        read_inventory(bad)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--inventory", "missing.txt"], "Error: Cannot read inventory file: "),
        (["--inventory", "empty.txt"], "Error: No URLs found in inventory file: "),
        (["--inventory", "latin1.txt"], "Error: Inventory file is not UTF-8 text: "),
        (["--inventory", "junk.txt"], "line 1: Invalid URL"),
        (["--inventory", "empty.txt", "--single"], "--inventory needs a crawl that follows"),
        (["--inventory-label", "May"],
         "Error: --inventory-label names an --inventory: give the file too"),
    ],
)
def test_inventory_bad_input(site: FixtureSite, tmp_path: Path, args: list[str],
                             message: str) -> None:
    (tmp_path / "empty.txt").write_text("# nothing\n\n", encoding="utf-8")
    (tmp_path / "latin1.txt").write_bytes("http://example.com/caf\xe9\n".encode("latin-1"))
    (tmp_path / "junk.txt").write_text("not a url\n", encoding="utf-8")
    if "--single" in args:
        (tmp_path / "empty.txt").write_text(site.url("/about") + "\n", encoding="utf-8")
    result = run("crawl", site.url("/inventory/"), "-o", "inv", *args, cwd=tmp_path)
    assert result.returncode == 1
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "inv.nitpicker").exists()


def test_inventory_cannot_change_on_resume(site: FixtureSite, tmp_path: Path) -> None:
    inventory = write_inventory(tmp_path, site)
    assert run("crawl", site.url("/inventory/"), "-o", "inv", "--max-pages", "1", "--silent",
               cwd=tmp_path).returncode == 0
    archive = tmp_path / "inv.nitpicker"
    before = hashlib.sha256(archive.read_bytes()).hexdigest()
    refused = run("crawl", "--resume", "inv.nitpicker", "--inventory", inventory.name,
                  cwd=tmp_path)
    assert refused.returncode == 1
    assert refused.stderr.startswith("Error: --inventory cannot change with --resume")
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == before


def test_spider_argument_inventory(site: FixtureSite, tmp_path: Path) -> None:

    inventory = write_inventory(tmp_path, site)
    config = config_from_spider_args({"roots": site.url("/inventory/"),
                                      "output": str(tmp_path / "x"),
                                      "inventory": str(inventory)})
    assert config.inventory == str(inventory)
    assert site.url("/inventory/unlinked") in config.inventory_urls
    with pytest.raises(ConfigError, match="unknown crawl argument 'inventory_urls'"):
        config_from_spider_args({"roots": site.url("/"), "output": str(tmp_path / "y"),
                                 "inventory_urls": site.url("/about")})


def test_one_url_in_both_schemes_is_one_page_in_the_roots_scheme(site: FixtureSite,
                                                                  tmp_path: Path) -> None:
    """The https form listed first, the http one after: one page row, in the scheme of the
    root whose scope it is in (http here), fetched once; out of scope, the first form."""
    https = site.url("/inventory/unlinked").replace("http://", "https://", 1)
    external = f"{site.external_url}/about"
    inventory = tmp_path / "both.txt"
    inventory.write_text(f"{https}\n{site.url('/inventory/unlinked')}\n"
                         f"{external.replace('http://', 'https://', 1)}\n{external}\n",
                         encoding="utf-8")
    site.clear_log()
    result = run("crawl", site.url("/inventory/"), "-o", "both", "--inventory", inventory.name,
                 "--silent", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    archive = Archive(tmp_path / "both.nitpicker")
    assert archive.urls("in_inventory = 1") == {
        site.url("/inventory/unlinked"), external.replace("http://", "https://", 1)}
    assert archive.urls("url LIKE ?", "%/inventory/unlinked") == {site.url("/inventory/unlinked")}
    assert archive.page(site.url("/inventory/unlinked"))["status"] == 200
    assert [t for m, _, t in site.request_log if t == "/inventory/unlinked"] == [
        "/inventory/unlinked"]


def test_each_inventory_file_has_an_audit_record(site: FixtureSite, tmp_path: Path) -> None:
    inventory = write_inventory(tmp_path, site)
    with inventory.open("a", encoding="utf-8") as file:
        file.write(f"{site.url('/inventory/brochure.pdf')}\n{site.url('/inventory/')}\n")
    result = run("crawl", site.url("/inventory/"), "-o", "inv", "--inventory", inventory.name,
                 "--inventory-label", "CMS export, May", "--exclude", "/inventory/link*",
                 "--silent", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    answer = run("query", "inv.nitpicker", "inventory-runs", cwd=tmp_path)
    assert answer.returncode == 0, answer.stderr
    [record] = json.loads(answer.stdout)["items"]
    created = record.pop("created_at")
    assert created.startswith("20")
    assert record == {
        "run_id": 1, "label": "CMS export, May", "path": str(inventory),
        "sha256": hashlib.sha256(inventory.read_bytes()).hexdigest(),
        "lines_read": 7,  # the repeated /inventory/unlinked counted as read, once as a URL
        "urls": 6,
        "new_pages": 2,  # unlinked, missing (linked is excluded, the root is not new)
        "new_resources": 1,  # brochure.pdf
        "scope_skipped": 1,  # the other host's /about
        "excluded": 1,  # linked
    }
    # a resume reads no file: no new record
    assert run("crawl", "--resume", "inv.nitpicker", "--silent", cwd=tmp_path).returncode == 0
    again = json.loads(run("query", "inv.nitpicker", "inventory-runs", cwd=tmp_path).stdout)
    assert again["total"] == 1


@pytest.mark.parametrize(
    ("path", "resource"),
    [("/a/brochure.pdf", True), ("/img/x.PNG", True), ("/page.html", False), ("/dir/", False),
     ("/about", False), ("/page.php", False), ("/feed.xml", True)],
)
def test_a_resource_by_its_extension(path: str, resource: bool) -> None:
    assert is_resource_path(path) is resource
