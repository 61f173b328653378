"""What a sample of mutants can say: the chance that a tree whose true share of mutants killed by an assertion
is ``rate`` still passes a sample of ``n`` at the threshold, counted exactly (no normal approximation).

A sample is drawn without replacement from a finite population, so the count killed in it is
hypergeometric; with no population given (or one far larger than the sample) it is binomial.
"""

from __future__ import annotations

import math
from fractions import Fraction

#: The true share of a tree the CI sample is meant to catch, and how rarely such a tree may pass it.
WEAK_RATE = 0.8
GOAL = 0.01


def needed(n: int, threshold: float) -> int:
    """The fewest kills among ``n`` that the command's own test (``killed / n >= threshold``) passes."""
    return next(k for k in range(n + 1) if k / n >= threshold) if n else 0


def pass_chance(n: int, threshold: float, rate: float = WEAK_RATE, population: int | None = None) -> float:
    """P(a sample of ``n`` passes at ``threshold``) for a tree whose true asserted-kill share is ``rate``:
    of a ``population`` of mutants (``round(rate * population)`` of them killed), drawn without replacement;
    with ``population`` None, independent draws."""
    if n <= 0:
        return 1.0
    least = needed(n, threshold) if threshold <= 1 else n + 1
    # Exact integers and fractions, divided once: a population of thousands makes terms no float can hold.
    if population is None:
        p = Fraction(rate).limit_denominator(10**6)  # a share: to a millionth, and the sum stays quick
        return float(sum(math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(least, n + 1)))
    if not 0 < n <= population:
        raise ValueError(f"a sample of {n} from a population of {population}")
    killed = round(rate * population)
    ways = sum(math.comb(killed, k) * math.comb(population - killed, n - k) for k in range(least, min(n, killed) + 1))
    return ways / math.comb(population, n)

