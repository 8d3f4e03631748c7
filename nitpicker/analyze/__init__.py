"""The analyze plugin host: plugins read archived snapshots and record findings.

``nitpicker.analyze.plugin`` is the contract a plugin implements (bundled or third party).
"""

from __future__ import annotations
