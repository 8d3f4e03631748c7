"""Technology detection: which CMS, frameworks, analytics, CDNs and servers a page uses.

Pure functions over what the archive keeps of a page (no network, no browser): the
fingerprint data set (:mod:`.fingerprints`) and the matcher (:mod:`.detect`). Storing what
they find is the archive's (:mod:`nitpicker.archive.technology_store`), reading it the query
library's (:mod:`nitpicker.query.technologies`).
"""

from __future__ import annotations

from nitpicker.technologies.detect import Detection, PageEvidence, detect
from nitpicker.technologies.fingerprints import DataSet, DataSetMissingError, load_data_set

__all__ = ["DataSet", "DataSetMissingError", "Detection", "PageEvidence", "detect",
           "load_data_set"]
