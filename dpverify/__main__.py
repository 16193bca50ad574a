"""``python -m dpverify``: the same as the ``dpverify`` console script (see :mod:`dpverify.cli`)."""

from __future__ import annotations

from dpverify.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
