"""nitpicker.crawl.worker_role and ``--workers`` checked before any worker starts."""

from __future__ import annotations

import multiprocessing

import pytest
from scrapy.settings import BaseSettings

from nitpicker.cli.crawl import _check_workers
from nitpicker.crawl.config import ConfigError, CrawlConfig
from nitpicker.crawl.worker_role import LeaseBudget, WorkerRole
from nitpicker.default_settings import set_defaults
from nitpicker.spiders.site import SiteSpider


@pytest.mark.parametrize(("parallels", "workers", "shares"), [
    (10, 2, [5, 5]), (10, 3, [4, 3, 3]), (2, 2, [1, 1]), (5, 4, [2, 1, 1, 1]),
])
def test_the_workers_shares_of_parallels_add_up_to_it(parallels: int, workers: int,
                                                       shares: list[int]) -> None:
    roles = [WorkerRole(i, workers, f"w{i}") for i in range(workers)]
    assert [role.parallels(parallels) for role in roles] == shares
    assert {role.interval_ms(200) for role in roles} == {200 * workers}


def test_a_worker_reads_its_pages_itself_unless_told_otherwise() -> None:
    """The workers fill the cores already: a page reader each added CPU, not pages/s."""
    config = CrawlConfig(roots=("http://example.com/",), output="x.nitpicker")

    def reader(role: WorkerRole | None, operator: dict[str, object]) -> object:
        settings = BaseSettings()
        set_defaults(settings)
        settings.update(operator, priority="project")
        SiteSpider(config=config, worker_role=role).project_options(settings)
        return settings.getbool("NITPICKER_PAGE_READER")

    assert reader(None, {}) is True
    assert reader(WorkerRole(1, 2, "w1"), {}) is False
    assert reader(WorkerRole(1, 2, "w1"), {"NITPICKER_PAGE_READER": True}) is True


def test_the_lease_budget_is_shared_and_never_overdrawn() -> None:
    value = multiprocessing.get_context("spawn").Value("q", 0)
    one, two = LeaseBudget(50, value), LeaseBudget(50, value)
    assert one.reserve(32) == 32
    assert two.reserve(32) == 18
    assert one.reserve(32) == 0 and two.left == 0
    two.give_back(8)  # the frontier had fewer rows than reserved
    assert one.left == 8 and one.reserve(32) == 8


def test_workers_are_checked_before_any_starts(capsys: pytest.CaptureFixture[str]) -> None:
    config = CrawlConfig(roots=("http://example.com/",), output="x.nitpicker", parallels=3)
    with pytest.raises(ConfigError, match="--workers must be at least 1, got 0"):
        _check_workers(0, config, retry_failed=False)
    with pytest.raises(ConfigError, match="--retry-failed"):
        _check_workers(2, config, retry_failed=True)
    assert _check_workers(1, config, retry_failed=True) == 1
    assert _check_workers(5, config, retry_failed=False) == 3  # one request each at least
    assert "Note: --workers 5 is more than --parallels 3; running 3 workers" in capsys.readouterr().err


def test_a_bad_lease_length_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    config = CrawlConfig(roots=("http://example.com/",), output="x.nitpicker")
    for raw in ("soon", "0", "-5"):
        monkeypatch.setenv("NITPICKER_LEASE_SECONDS", raw)
        with pytest.raises(ValueError, match=f"NITPICKER_LEASE_SECONDS must be .*{raw!r}"):
            _check_workers(2, config, retry_failed=False)
