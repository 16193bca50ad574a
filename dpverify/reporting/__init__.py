"""Reports of a suite run: ``report.json`` / ``report.md`` / ``report.html`` (``report``, ``pages``), plots
(``plots``), certificates and the comparison of two runs (``certify``).
"""
