"""The ``dpverify`` command line: ``run``, ``certify``, ``compare``, ``reproduce`` (``main``), its progress display
(``progress``) and the registry of paper reproductions (``reproduce``)."""

from dpverify.cli.commands import main

__all__ = ["main"]
