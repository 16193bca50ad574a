"""The ``dpverify`` command line: ``run``, ``list``, ``certify``, ``compare``, ``reproduce``, ``bench``
(``commands``), the runs that always end with a final report (``running``), SIGINT/SIGTERM handling
(``interrupts``), its progress display (``progress``) and the registry of paper reproductions (``reproduce``)."""

from dpverify.cli.commands import main

__all__ = ["main"]
