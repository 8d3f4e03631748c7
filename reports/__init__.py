"""The bundled reporters, installed as ``nitpicker_reports`` and registered in the
``nitpicker.report`` entry-point group: ``xlsx`` (:mod:`.xlsx`), ``csv`` (:mod:`.csv_folder`),
``html`` (:mod:`.html`). Each lays out the rows of :mod:`nitpicker.query.report_rows`."""
