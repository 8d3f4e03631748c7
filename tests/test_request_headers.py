"""The scoped request headers: which request gets the root's credentials and ``--header``,
how a header is parsed, how a URL with a password is shown, what the config stores."""

from __future__ import annotations

import json

import pytest

from nitpicker.crawl.config import ConfigError, CrawlConfig
from nitpicker.crawl.spider_args import config_from_spider_args
from nitpicker.policy.request_headers import (
    HeaderError,
    RequestHeaders,
    parse_header,
    shown_url,
)
from nitpicker.policy.scope import Scope
from nitpicker.policy.urls import parse_url

ALICE = "Basic YWxpY2U6cHc="  # alice:pw
BOB = "Basic Ym9iOng="  # bob:x
TOKEN = ("X-Token", "t")


@pytest.fixture(scope="module")
def policy() -> RequestHeaders:
    config = CrawlConfig(
        roots=("http://alice:pw@site.test/private/", "http://site.test/private/deeper/",
               "https://bob:x@secure.test/", "http://plain.test/"),
        headers=("X-Token: t",), output="/tmp/unused.nitpicker",
    )
    return RequestHeaders(Scope(config.roots), config.root_credentials, config.request_headers)


@pytest.mark.parametrize(("url", "expected"), [
    ("http://site.test/private/a", (ALICE, TOKEN)),
    ("http://site.test/private/deeper/b", (ALICE, TOKEN)),  # a root without: inherited
    ("https://site.test/private/a", (ALICE, TOKEN)),  # http root, https request: fine
    ("http://site.test/public/", ()),  # same host, outside every root
    ("http://site.test/private", ()),  # the root's directory without its slash: outside
    ("http://site.test:8080/private/a", ()),  # another port
    ("http://other.test/private/a", ()),  # another host
    ("https://secure.test/x", (BOB, TOKEN)),
    ("http://secure.test/x", ()),  # an https root's secrets never go over plain http
    ("http://plain.test/any", (TOKEN,)),  # in scope, no credentials: the header only
])
def test_for_page(policy: RequestHeaders, url: str, expected: tuple[object, ...]) -> None:
    got = policy.for_page(parse_url(url))
    shown = tuple(value if name == "Authorization" else (name, value) for name, value in got)
    assert shown == expected


@pytest.mark.parametrize(("url", "expected"), [
    ("http://site.test/private/a.png", (ALICE, TOKEN)),
    ("http://site.test/static/a.png", (ALICE, TOKEN)),  # the page's host: the page's own
    ("https://site.test/static/a.png", (ALICE, TOKEN)),
    ("http://plain.test/a.png", (TOKEN,)),
    ("http://other.test/a.png", ()),
    ("https://secure.test/a.png", (BOB, TOKEN)),
    ("http://secure.test/a.png", ()),
    ("http://site.test:8080/a.png", ()),
])
def test_for_resource_of_a_page(policy: RequestHeaders, url: str,
                                expected: tuple[object, ...]) -> None:
    got = policy.for_resource(parse_url(url), parse_url("http://site.test/private/a"))
    shown = tuple(value if name == "Authorization" else (name, value) for name, value in got)
    assert shown == expected


def test_a_header_named_authorization_wins_over_the_credentials() -> None:
    config = CrawlConfig(roots=("http://alice:pw@site.test/",), headers=("Authorization: Bearer z",),
                         output="/tmp/unused.nitpicker")
    policy = RequestHeaders(Scope(config.roots), config.root_credentials, config.request_headers)
    assert policy.for_page(parse_url("http://site.test/a")) == (("Authorization", "Bearer z"),)
    assert policy.names == {"authorization"}


@pytest.mark.parametrize(("raw", "expected"), [
    ("X-Token: abc", ("X-Token", "abc")),
    ("X-Token:abc:def", ("X-Token", "abc:def")),
    ("  Accept :  text/html, application/json ", ("Accept", "text/html, application/json")),
    ("X-Empty:", ("X-Empty", "")),
])
def test_parse_header(raw: str, expected: tuple[str, str]) -> None:
    assert parse_header(raw) == expected


@pytest.mark.parametrize(("raw", "message"), [
    ("X-Token abc-secret", '"X-Token…" (no colon)'),
    ("", '"" (no colon)'),
    ("X-Token: abc\nsecret", "X-Token: the value holds a line break"),
    ("X-Token: abc\r\nX-Other: secret", "line break"),
    ("X-Token: a\x00secret", "line break"),
    ("Two Words: secret", '"Two Words" is not a header name'),
    (": secret", '"" is not a header name'),
])
def test_parse_header_refuses_without_showing_the_value(raw: str, message: str) -> None:
    with pytest.raises(HeaderError) as caught:
        parse_header(raw)
    assert message in str(caught.value)
    assert "secret" not in str(caught.value)


@pytest.mark.parametrize(("raw", "shown"), [
    ("https://alice:pw@example.com/a", "https://alice:…@example.com/a"),
    ("https://alice:p@w@example.com/", "https://alice:…@example.com/"),  # an @ in the password
    ("https://alice:@example.com/", "https://alice:…@example.com/"),
    ("https://alice@example.com/", "https://alice@example.com/"),
    ("https://example.com/a@b", "https://example.com/a@b"),  # an @ in the path is not userinfo
    ("not a url", "not a url"),
])
def test_shown_url(raw: str, shown: str) -> None:
    assert shown_url(raw) == shown


def test_the_config_keeps_secrets_out_of_its_json_and_repr() -> None:
    config = CrawlConfig(roots=("https://alice:pa%5Dss@example.com/docs/",),
                         headers=("X-Token: tok-secret",), output="/tmp/unused.nitpicker")
    assert config.roots == ("https://example.com/docs/",)
    assert config.credentials == (("https://example.com/docs/", "alice", "pa]ss"),)
    stored = json.loads(config.to_json())
    assert stored["headers"] == ["X-Token"]
    assert stored["credentials"] == [["https://example.com/docs/", "alice"]]
    for text in (config.to_json(), repr(config)):
        assert "pa]ss" not in text and "pa%5Dss" not in text and "tok-secret" not in text
    again = CrawlConfig.from_json(config.to_json())
    assert (again.headers, again.credentials) == ((), ())


def test_one_root_with_two_credentials_is_refused() -> None:
    with pytest.raises(ConfigError, match="two different credentials for one root") as caught:
        CrawlConfig(roots=("http://a:one@example.com/", "http://a:two@example.com/"),
                    output="/tmp/unused.nitpicker")
    assert "one" not in str(caught.value).replace("one root", "")
    assert "two@" not in str(caught.value)


def test_spider_arguments_one_header_a_line() -> None:
    config = config_from_spider_args({
        "roots": "http://alice:pw@example.com/", "output": "/tmp/unused.nitpicker",
        "header": "X-A: 1, 2\r\nX-B: 3\n",
    })
    assert config.request_headers == (("X-A", "1, 2"), ("X-B", "3"))
    assert config.credentials == (("http://example.com/", "alice", "pw"),)
    with pytest.raises(ConfigError, match="unknown crawl argument 'credentials'"):
        config_from_spider_args({"roots": "http://example.com/", "credentials": "x",
                                 "output": "/tmp/unused.nitpicker"})
    with pytest.raises(ConfigError, match='must be "Name: value"'):
        config_from_spider_args({"roots": "http://example.com/", "headers": "X-A 1",
                                 "output": "/tmp/unused.nitpicker"})
