"""Reports of a suite run: ``report.json`` / ``report.md`` / ``report.html`` (``report``, ``pages``, the per-kind
table cells in ``table_cells``), plots (``plots``), certificates (``certify``) and the comparison of two runs
(``compare``)."""
