"""hreflang values as search engines read them: ``x-default``, or an ISO 639-1 language,
optionally an ISO 15924 script and an ISO 3166-1 alpha-2 region, joined by hyphens
(``en``, ``en-GB``, ``zh-Hant-TW``), in any case.

The code tables are pycountry's (the Debian ``iso-codes`` data), loaded on first use.
Search engines document the region as ISO 3166-1 alpha-2, so a UN M.49 area (``es-419``) and
the reserved ``UK`` and ``EU`` are not valid regions.
"""

from __future__ import annotations

import functools
import re
from typing import Final

__all__ = ["hreflang_problem"]

_SUBTAGS: Final = re.compile(r"[A-Za-z0-9]+")


@functools.cache
def _codes() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """ISO 639-1 languages, ISO 15924 scripts, ISO 3166-1 alpha-2 regions (lower-case)."""
    import pycountry

    languages = frozenset(
        language.alpha_2.lower() for language in pycountry.languages
        if hasattr(language, "alpha_2"))
    scripts = frozenset(script.alpha_4.lower() for script in pycountry.scripts)
    regions = frozenset(country.alpha_2.lower() for country in pycountry.countries)
    return languages, scripts, regions


def hreflang_problem(value: str) -> str:
    """What is wrong with the hreflang ``value`` (one phrase, naming the bad part), or ``""``
    when it is valid."""
    if value.lower() == "x-default":
        return ""
    if not value:
        return "it is empty"
    if "_" in value:
        return "it separates its parts with '_' where hreflang needs '-'"
    parts = value.split("-")
    if len(parts) > 3 or not all(_SUBTAGS.fullmatch(part) for part in parts):
        return "it is not language[-script][-region]"
    languages, scripts, regions = _codes()
    language, *rest = parts
    if language.lower() not in languages:
        return f"'{language}' is not an ISO 639-1 language code"
    if len(rest) == 2:
        script, region = rest
        if len(script) != 4:
            return "it is not language[-script][-region]"
        if script.lower() not in scripts:
            return f"'{script}' is not an ISO 15924 script code"
    elif rest and len(rest[0]) == 4:
        if rest[0].lower() not in scripts:
            return f"'{rest[0]}' is not an ISO 15924 script code"
        return ""
    elif rest:
        region = rest[0]
    else:
        return ""
    if region.lower() not in regions:
        return f"'{region}' is not an ISO 3166-1 alpha-2 region code"
    return ""
