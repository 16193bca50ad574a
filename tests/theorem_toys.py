"""Toy theorems with known answers, for the tests of dpverify.theorems.check (module level, so a process pool can
pickle them)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


class LaplaceTail:
    """P(|Lap(1)| > t) = e^{-t}, claimed ``<= factor * e^{-t}`` (``direction`` may be changed)."""

    name = "toy Laplace tail"
    statement = "P(|Lap(1)| > t) <= factor * exp(-t)"
    quantity = "probability"

    def __init__(self, t: float = 1.0, factor: float = 1.0, direction: str = "at_most") -> None:
        self.t, self.factor, self.direction = float(t), float(factor), direction
        self.parameters: dict[str, Any] = {"t": self.t, "factor": self.factor}
        self.size = self.t

    def hypotheses(self) -> list[str]:
        return [] if self.t >= 0 else [f"t = {self.t} < 0: the tail bound is stated for t >= 0; use t >= 0"]

    def bound(self) -> float:
        return self.factor * math.exp(-self.t)

    def exact(self) -> float:
        return math.exp(-self.t)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.abs(rng.laplace(size=n)) > self.t


class ExponentialValue:
    """An Exp(1) variable: mean 1, level-quantile -ln(1 - level); claimed ``<= bound``."""

    name = "toy exponential"
    statement = "the mean / quantile of Exp(1) is at most the bound"
    direction = "at_most"

    def __init__(self, claimed: float, quantity: str = "mean", level: float = 0.9) -> None:
        self.claimed, self.quantity, self.level = float(claimed), quantity, level
        self.parameters = {"claimed": self.claimed, "quantity": quantity}

    def hypotheses(self) -> list[str]:
        return []

    def bound(self) -> float:
        return self.claimed

    def exact(self) -> float:
        return 1.0 if self.quantity == "mean" else -math.log(1 - self.level)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.exponential(size=n)


class ConditionalCoin:
    """P(heads | die shows <= 3) for a fair coin independent of a fair die: NaN outside the condition."""

    name = "toy conditional coin"
    statement = "P(heads | die <= 3) >= bound"
    quantity = "probability"
    direction = "at_least"

    def __init__(self, claimed: float) -> None:
        self.claimed = float(claimed)
        self.parameters = {"claimed": self.claimed}

    def hypotheses(self) -> list[str]:
        return []

    def bound(self) -> float:
        return self.claimed

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        heads = rng.random(n) < 0.5
        die = rng.integers(1, 7, size=n)
        return np.where(die <= 3, heads.astype(np.float64), np.nan)


class SquaresBelow:
    """'n^2 <= limit for every n in 1..top': a deterministic grid; fails for n > sqrt(limit)."""

    name = "toy squares"
    statement = "n^2 <= limit for all n <= top"
    quantity = "always"
    deterministic = True

    def __init__(self, limit: int, top: int = 20) -> None:
        self.limit, self.top = int(limit), int(top)
        self.parameters = {"limit": self.limit, "top": self.top}

    def hypotheses(self) -> list[str]:
        return []

    def bound(self) -> float:
        return 1.0

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, list[dict[str, Any]]]:
        grid = np.arange(self.top, 0, -1)  # largest first: the smallest counterexample is not the first one
        ok = grid**2 <= self.limit
        return ok, [{"size": int(k), "square": int(k * k)} for k in grid[~ok]]


class Broken:
    """A theorem whose parts misbehave on request (for the error messages)."""

    name = "toy broken"
    statement = "nothing"

    def __init__(self, how: str, quantity: str = "probability", direction: str = "at_most") -> None:
        self.how, self.quantity, self.direction = how, quantity, direction
        self.parameters = {"how": how}

    def hypotheses(self) -> list[str]:
        return ["the graph is not connected; connect it"] if self.how == "hypotheses" else []

    def bound(self) -> float:
        return math.nan if self.how == "nan" else 0.5

    def sample(self, n: int, rng: np.random.Generator) -> Any:
        if self.how == "shape":
            return np.zeros(n + 1, dtype=bool)
        if self.how == "values":
            return np.full(n, 0.5)
        if self.how == "raise":
            raise ZeroDivisionError("boom")
        if self.how == "always-tuple":
            return np.ones(n, dtype=bool)
        if self.how == "nonfinite":
            return np.full(n, np.inf)
        if self.how == "never-conditioned":
            return np.full(n, np.nan)
        return rng.random(n) < 0.5
