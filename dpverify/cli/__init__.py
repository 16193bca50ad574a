"""The ``dpverify`` command line: ``run``, ``list``, ``certify``, ``compare``, ``reproduce``, ``bench``
(``commands``), its progress display (``progress``) and the registry of paper reproductions (``reproduce``)."""

from dpverify.cli.commands import main

__all__ = ["main"]
