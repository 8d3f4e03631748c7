"""Which element a link's ``#fragment`` asks a browser to scroll to (``links/broken-fragment``).

As the HTML standard's "find a potential indicated element": the fragment, percent-decoded as
UTF-8, names the element whose ``id`` is exactly that, else the ``<a>`` whose ``name`` is.
Some fragments name no element and are never broken: an empty one (``#``) and ``top`` (in any
case) scroll to the top of the page, a text fragment (``#:~:text=…``) highlights text, and a
fragment that starts with ``/`` or ``!`` is a single-page application's route (``#/about``,
``#!/about``), read by its script.
"""

from __future__ import annotations

from urllib.parse import unquote

__all__ = ["fragment_target"]


def fragment_target(fragment: str | None) -> str | None:
    """The id (or ``<a name>``) the fragment (without its ``#``) must find on the page;
    ``None`` when it needs none."""
    if not fragment:
        return None
    name = unquote(fragment, errors="replace")
    if name.lower() == "top" or name.startswith((":~:", "/", "!")):
        return None
    return name
