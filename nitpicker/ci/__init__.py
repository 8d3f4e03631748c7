"""What a CI system reads from an archive: the ``--fail-on`` gates, the accepted findings of a
suppressions file, and the findings written for a CI tool (SARIF, JUnit, Markdown, GitHub
workflow commands).

- :mod:`nitpicker.ci.gates`: the gate names of ``--fail-on`` (parsed once), the absolute gates
  counted over an archive's findings, and the ``new-*`` gates over a comparison;
- :mod:`nitpicker.ci.suppressions`: ``.nitpicker-baseline.json``, findings accepted by their
  fingerprint with a reason and an optional expiry date;
- :mod:`nitpicker.ci.source`: the findings an export lists, each with its suppression and, in
  a comparison, whether it is new;
- :mod:`nitpicker.ci.sarif`, :mod:`~nitpicker.ci.junit`, :mod:`~nitpicker.ci.markdown`,
  :mod:`~nitpicker.ci.github`: one writer each, the standard library only.

The findings are read through :mod:`nitpicker.query.findings`; the commands are
``nitpicker export``, ``nitpicker baseline`` and the ``--fail-on`` of ``crawl``, ``pipeline``,
``check`` and ``diff`` (:mod:`nitpicker.cli.gate`).
"""
