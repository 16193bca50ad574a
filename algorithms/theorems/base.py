"""Protocol pieces several theorem classes share (the protocol itself: :mod:`dpverify.theorems.check`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

__all__ = ["FieldParameters", "Property"]


class FieldParameters:
    """For theorem dataclasses: the parameters a check runs at are the dataclass's fields."""

    @property
    def parameters(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]  # subclasses are dataclasses


class Property:
    """An ``"always"`` theorem: a property every instance must have.  It has no bound (``1.0``: every
    instance), and its instances are built to meet the hypotheses, so ``hypotheses()`` has nothing to report."""

    quantity = "always"
    direction = "at_least"

    def hypotheses(self) -> list[str]:
        return []

    def bound(self) -> float:
        return 1.0
