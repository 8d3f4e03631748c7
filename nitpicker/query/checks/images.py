"""Images of the internal pages that answered 2xx: no ``alt`` attribute, no width and height,
files too large. One finding per page and image (the image's ``src`` is the element: an image
recorded at several device widths is one finding)."""

from __future__ import annotations

from typing import Final

from nitpicker.query.checks.model import OK_PAGE, Check
from nitpicker.query.images import FILE_SIZE_SQL, MISSING_DIMENSIONS_SQL

__all__ = ["CHECKS", "IMAGE_FILE_MAX"]

IMAGE_FILE_MAX: Final = 200 * 1024
"""Bytes: an image file larger is oversized, unless the crawl set its own
``--image-file-size-threshold``."""

_SRC: Final = "substr(i.src, 1, 300)"
"""The element: the image's URL (a ``data:`` URL cut at 300 characters)."""


def _sql(where: str, message: str) -> str:
    return (f"SELECT p.id AS page_id, p.url AS url, {_SRC} AS element, {message} AS message"
            f" FROM pages p JOIN images i ON i.page_id = p.id WHERE {OK_PAGE} AND {where}"
            f" GROUP BY p.id, {_SRC}")


_NO_DIMENSIONS: Final = (
    f"CASE WHEN i.viewport_width IS NULL THEN {MISSING_DIMENSIONS_SQL}"
    " ELSE NOT (i.source_code LIKE '% width=%' AND i.source_code LIKE '% height=%') END")
"""Read from markup (no browser): a width or height attribute absent or 0. Rendered: the
element's markup lacks one of the two attributes (its width and height are then the rendered
size, which says nothing about the attributes)."""

_THRESHOLD: Final = (
    "coalesce((SELECT json_extract(config, '$.image_file_size_threshold') FROM info"
    " WHERE id = 1), :largest)")

CHECKS: Final = (
    Check(
        id="images/missing-alt",
        title="Images without alt attribute",
        explanation=(
            "These images have no alt attribute at all. Screen readers then read out the "
            "file name or skip the image without saying, and search engines do not know what "
            "it shows. (An empty alt=\"\" is right for a decorative image and is not listed.)"),
        fix=(
            "Give each image an alt text that says what it shows or does (a linked image: "
            "where the link goes), or alt=\"\" when it is only decoration."),
        priority="medium", category="accessibility",
        sql=_sql("i.alt IS NULL", "'An image has no alt attribute: ' || " + _SRC),
    ),
    Check(
        id="images/missing-dimensions",
        title="Images without width and height",
        explanation=(
            "These images have no width or height attribute, so the browser cannot reserve "
            "their space before they load: the text around them jumps when they arrive (a "
            "layout shift, counted against the page by Core Web Vitals)."),
        fix=(
            "Write the image's intrinsic width and height as attributes (CSS can still scale "
            "it: height: auto keeps the ratio)."),
        priority="low", category="performance",
        sql=_sql(_NO_DIMENSIONS, "'An image has no width or height: ' || " + _SRC),
    ),
    Check(
        id="images/oversized",
        title="Image files too large",
        explanation=(
            f"These image files are larger than {IMAGE_FILE_MAX // 1024} KiB (or the crawl's "
            "--image-file-size-threshold): they slow the page down, on mobile connections "
            "most."),
        fix=(
            "Resize each image to the largest size it is shown at, compress it (WebP or "
            "AVIF, a lower quality), and serve smaller variants with srcset."),
        priority="medium", category="performance",
        sql=_sql(f"{FILE_SIZE_SQL} > {_THRESHOLD}",
                 f"printf('%d KiB: ', {FILE_SIZE_SQL} / 1024) || {_SRC}"),
        params={"largest": IMAGE_FILE_MAX},
    ),
)
