"""The bundled ``nitpicker analyze`` plugins (installed as ``nitpicker_plugins``).

Each registers through the entry-point group ``nitpicker.analyze`` in pyproject.toml, the
same way a third party's plugin does (see ``nitpicker.analyze.plugin``).
"""

from __future__ import annotations
