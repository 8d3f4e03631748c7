"""Meta descriptions (``<meta name=description>``) of the internal pages that answered 2xx:
missing, shared, too long, too short (``DESCRIPTION_MIN``, ``DESCRIPTION_MAX`` characters:
Screaming Frog's defaults)."""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.titles import metadata_checks

__all__ = ["CHECKS", "DESCRIPTION_MAX", "DESCRIPTION_MIN"]

DESCRIPTION_MIN: Final = 70
DESCRIPTION_MAX: Final = 155

CHECKS: Final = metadata_checks(
    "description", "description", minimum=DESCRIPTION_MIN, maximum=DESCRIPTION_MAX,
    family="descriptions",
    missing=(
        "Meta description missing",
        ("The page has no meta description (or an empty one). Search engines then show a "
         "snippet of the page's text of their own choosing under its title, often a menu or "
         "a cookie notice."),
        ("Add <meta name=\"description\" content=\"…\"> to the page's <head>: one or two "
         "sentences that say what the page offers, unique on the site."), "medium"),
    duplicate=(
        "Duplicate meta descriptions",
        ("Several pages have exactly the same meta description, usually a template's default: "
         "their search results look alike and say nothing about each page."),
        ("Write a description for each page, or leave it empty (search engines then quote "
         "the page) rather than repeating the template's."), "low"),
    long=(
        "Meta description too long",
        (f"The description has more than {DESCRIPTION_MAX} characters: search results cut it "
         "off."),
        "Shorten it to the one or two sentences that make a reader click.", "low"),
    short=(
        "Meta description too short",
        (f"The description has fewer than {DESCRIPTION_MIN} characters: it leaves room "
         "unused in search results and may be replaced by a snippet of the page."),
        "Say more: what the page offers and why it is worth a visit.", "low"),
)
