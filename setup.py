"""Package discovery that pyproject.toml cannot express.

The bundled analyze plugins live in the top-level ``plugins/`` directory (the layout of
docs/ARCHITECTURE.md) and install as the package ``nitpicker_plugins``, registered through
the entry-point group ``nitpicker.analyze`` like a third party's; the bundled reporters in
``reports/`` install as ``nitpicker_reports`` (entry-point group ``nitpicker.report``).
Everything else is in pyproject.toml.
"""

from setuptools import find_packages, setup

PLUGINS = [f"nitpicker_plugins{p[len('plugins'):]}"
           for p in find_packages(include=["plugins", "plugins.*"])]

REPORTS = [f"nitpicker_reports{p[len('reports'):]}"
           for p in find_packages(include=["reports", "reports.*"])]

setup(
    packages=find_packages(include=["nitpicker", "nitpicker.*"]) + PLUGINS + REPORTS,
    package_dir={"nitpicker_plugins": "plugins", "nitpicker_reports": "reports"},
    # the Node worker scripts the markuplint, textlint and Lighthouse plugins start
    package_data={"nitpicker_plugins": ["node/*.mjs"]},
)
