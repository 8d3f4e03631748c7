"""The security checks a crawl trips only over https (``nitpicker/query/checks/security.py``),
through the command line: ``nitpicker crawl`` of four https fixture sites on 127.0.0.1
(``fixtures/secure.py``) whose certificates the test makes — one signed by a CA the crawl
trusts (``SSL_CERT_FILE``), one from that CA ending in 10 days, one expired, one self-signed —
then ``nitpicker check`` and ``nitpicker query FILE issues``.

``/security/`` on the first has a page made to trip each check and pages made not to; the
three others serve only a clean page, so that their certificates are all they show."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from fixtures.secure import PAGES, SecureSite, make_certificates
from tests.helpers import run

if TYPE_CHECKING:
    from collections.abc import Iterator

SECURITY_RULES = ("security/mixed-content", "security/hsts", "security/cookie-not-secure",
                  "security/cookie-attributes", "security/tls-invalid", "security/tls-expiring",
                  "security/missing-headers")


class Crawled:
    """The archive of the four sites' crawl, and their base URLs by certificate."""

    def __init__(self, archive: Path, bases: dict[str, str]) -> None:
        self.archive = archive
        self.bases = bases

    def findings(self) -> dict[str, list[tuple[str, str | None, str]]]:
        """Security check id -> its (where, element, message), ``where`` a page's slug under
        ``/security/`` of the valid site, else ``<certificate>/`` for another site's root."""
        conn = sqlite3.connect(self.archive)
        try:
            rows = conn.execute("SELECT rule, url, element, message FROM check_findings"
                                " WHERE rule LIKE 'security/%' ORDER BY rule, url, element")
            found: dict[str, list[tuple[str, str | None, str]]] = {}
            for rule, url, element, message in rows:
                found.setdefault(rule, []).append((self.where(url), element, message))
        finally:
            conn.close()
        return found

    def where(self, url: str) -> str:
        for name, base in self.bases.items():
            if url.startswith(base):
                rest = url.removeprefix(base)
                return rest.removeprefix("/security/") if name == "valid" else f"{name}{rest}"
        return url


@pytest.fixture(scope="module")
def crawled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Crawled]:
    directory = tmp_path_factory.mktemp("secure")
    certificates = make_certificates(directory)
    names = ("valid", "expiring", "expired", "self-signed")
    sites = [SecureSite(certificates.pair(name)).start() for name in names]
    try:
        roots = [sites[0].url("/security/")] + [site.url("/security/clean") for site in sites[1:]]
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("SSL_CERT_FILE", str(certificates.ca))
            result = run("crawl", *roots, "-o", "secure", "--retry", "0", "--silent",
                         cwd=directory)
        assert result.returncode == 0, result.stderr
        yield Crawled(directory / "secure.nitpicker",
                      {name: site.base_url for name, site in zip(names, sites, strict=True)})
    finally:
        for site in sites:
            site.stop()


def test_each_security_check_finds_exactly_its_pages(crawled: Crawled) -> None:
    """A page made to trip a check is found by it, with its element; the clean pages, the hub
    and the valid site's certificate trip nothing."""
    found = crawled.findings()
    got = {rule: sorted((where, element) for where, element, _ in rows)
           for rule, rows in found.items()}
    base = crawled.bases["valid"]
    assert got == {
        "security/hsts": [("bad-hsts", None), ("no-hsts", None), ("short-hsts", None)],
        "security/cookie-not-secure": [("cookie-plain", "plain")],
        "security/cookie-attributes": [("cookie-no-samesite", "nosamesite"),
                                       ("cookie-plain", "plain")],
        "security/mixed-content": [("form-http", f"{base.replace('https', 'http')}/security/submit"),
                                   ("script-http", f"{base.replace('https', 'http')}/security/app.js")],
        "security/tls-invalid": [("expired/", None), ("self-signed/", None)],
        "security/tls-expiring": [("expiring/", None)],
    }
    assert {"clean", ""} & {where for rows in found.values() for where, _, _ in rows} == set()
    assert set(PAGES) - {"clean", ""} <= {where for rows in found.values() for where, _, _ in rows}


@pytest.mark.parametrize(("rule", "where", "message"), [
    ("security/hsts", "short-hsts",
     "Strict-Transport-Security max-age=86400 (1 days): shorter than a year"),
    ("security/hsts", "bad-hsts",
     "Strict-Transport-Security without a valid max-age: includeSubDomains"),
    ("security/hsts", "no-hsts", "Served without Strict-Transport-Security"),
    ("security/cookie-not-secure", "cookie-plain", "Sets the cookie plain without Secure"),
    ("security/cookie-attributes", "cookie-plain",
     "Sets the cookie plain without HttpOnly, SameSite"),
    ("security/cookie-attributes", "cookie-no-samesite",
     "Sets the cookie nosamesite without SameSite"),
])
def test_a_finding_says_what_is_wrong(crawled: Crawled, rule: str, where: str,
                                      message: str) -> None:
    messages = {found: text for found, _, text in crawled.findings()[rule]}
    assert messages[where] == message


def test_the_certificates_findings_name_the_verification_error_and_the_days_left(
        crawled: Crawled) -> None:
    found = crawled.findings()
    invalid = {where: message for where, _, message in found["security/tls-invalid"]}
    expired, self_signed = (crawled.bases[name].removesuffix("/")
                            for name in ("expired", "self-signed"))
    assert invalid["expired/"].startswith(
        f"The certificate of {expired} is not valid: certificate has expired (valid until ")
    assert invalid["self-signed/"].startswith(
        f"The certificate of {self_signed} is not valid: self-signed certificate (valid until ")
    [(_, _, expiring)] = found["security/tls-expiring"]
    assert expiring.startswith(f"The certificate of {crawled.bases['expiring']} expires on ")
    assert expiring.endswith((", 9 days after the crawl", ", 10 days after the crawl"))


def test_the_certificates_are_recorded_per_origin(crawled: Crawled) -> None:
    conn = sqlite3.connect(crawled.archive)
    try:
        rows = dict(conn.execute("SELECT origin, error FROM tls_certificates").fetchall())
    finally:
        conn.close()
    assert rows == {crawled.bases["valid"]: None, crawled.bases["expiring"]: None,
                    crawled.bases["expired"]: "certificate has expired",
                    crawled.bases["self-signed"]: "self-signed certificate"}


def test_issues_lists_the_security_checks_and_check_finds_them_again(
        crawled: Crawled, tmp_path: Path) -> None:
    """``query FILE issues --category security`` lists each check with its URL count; a
    ``nitpicker check`` run again finds the same (the facts are in the archive)."""
    before = crawled.findings()
    result = run("query", str(crawled.archive), "issues", "--category", "security",
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    counts = {item["id"]: item["urls"] for item in json.loads(result.stdout)["items"]}
    assert counts == {rule: len({where for where, _, _ in rows}) for rule, rows in before.items()}
    copy = tmp_path / "again.nitpicker"
    copy.write_bytes(crawled.archive.read_bytes())
    assert run("check", str(copy), cwd=tmp_path).returncode == 0
    assert Crawled(copy, crawled.bases).findings() == before


def test_without_the_tls_check_no_certificate_is_judged(tmp_path: Path) -> None:
    """``NITPICKER_TLS_CHECK=false`` (the environment, as any setting): the self-signed site
    crawled, nothing recorded of its certificate."""
    site = SecureSite(make_certificates(tmp_path).pair("self-signed")).start()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("NITPICKER_TLS_CHECK", "false")
            result = run("crawl", site.url("/security/clean"), "-o", "off", "--silent",
                         cwd=tmp_path)
    finally:
        site.stop()
    assert result.returncode == 0, result.stderr
    conn = sqlite3.connect(tmp_path / "off.nitpicker")
    try:
        assert conn.execute("SELECT count(*) FROM tls_certificates").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM pages WHERE status = 200").fetchone()[0] >= 1
    finally:
        conn.close()
