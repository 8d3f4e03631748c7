"""``nitpicker view``: a local web viewer over archives (Starlette + Jinja2, served by uvicorn).

Server-rendered HTML that needs no JavaScript, every view a thin layer over
:mod:`nitpicker.query`; the archives are opened read-only and named only on the command line.
"""

from __future__ import annotations

from nitpicker.viewer.app import APP_CSP, LOOPBACK_NAMES, SNAPSHOT_CSP, create_app
from nitpicker.viewer.views import OpenArchive

__all__ = ["APP_CSP", "LOOPBACK_NAMES", "SNAPSHOT_CSP", "OpenArchive", "create_app"]
