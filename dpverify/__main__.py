"""``python -m dpverify``: the same as the ``dpverify`` console script (see :mod:`dpverify.cli.commands`)."""

from __future__ import annotations

from dpverify.cli.commands import main

if __name__ == "__main__":
    raise SystemExit(main())
