"""Statistical checks of random masks, with exact tails, for the hidden checks.

A statement that says "each entry kept with probability 1 - rate, independently"
is judged here from the masks themselves (read off outputs on inputs drawn here),
never from what the learner's process says about how they were drawn. A fixed
arithmetic pattern can have exactly the right keep rate; what it cannot have is
the joint law of independent draws. So a check asks two questions:

- the keep rate: the number kept against its exact binomial law;
- independence: for disjoint pairs of lines (rows, columns, members), the number
  of positions where both are kept. Under the null (entries i.i.d. Bernoulli,
  whatever the probability), given each line's count, every line is a uniformly
  random subset of its positions, independent of the others, so each pair's
  overlap is hypergeometric and the sum over disjoint pairs has the exact law of
  their convolution. No normal approximation, no unknown parameter: the tails
  are exact at any size, and a check can fail at a rate like 1e-10 per test.

Pairs are taken side by side (line 2i with 2i + 1: a pattern that drifts along an
axis) and at random (from the check's own generator: a dependence between lines
far apart). Identical or broadcast lines sit at the top of the overlap's range.

Tails are two-sided (`2 * min(lower, upper)`, which never exceeds the level), and
`departures` divides the level among the tests it is given (Bonferroni), so the
false-failure rate of a whole check is at most the level it names.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import log

import numpy as np

from course.engine.words import N_, _

# The false-failure rate a check may have, for all its statistical tests together.
LEVEL = 1e-10


@dataclass(frozen=True)
class Test:
    """One statistical test: what it looked at (`name`, a catalog message with a `{lines}` field
    that `lines` fills), what it counted, and its two-sided p-value."""

    name: str
    observed: int
    expected: float
    p: float
    lines: str = ""

    def label(self) -> str:
        """What the test looked at, in the learner's language."""
        return _(self.name).format(lines=_(self.lines) if self.lines else "")


# What the tests look at, for the messages of the checks.
KEEP_RATE = N_("the keep rate")
NEIGHBOURS = N_("pairs of neighbouring {lines}")
AT_RANDOM = N_("pairs of {lines} chosen at random")
ROWS, COLUMNS = N_("rows"), N_("columns")


def _log_factorials(n: int) -> np.ndarray:
    """log(k!) for k = 0..n (a running sum of logs: its rounding error, about n * 1e-16, is far
    below what could move a tail at the levels used here)."""
    return np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)))])


def _log_choose(n: int, k: np.ndarray, table: np.ndarray) -> np.ndarray:
    return table[n] - table[k] - table[n - k]


def _normalised(logpmf: np.ndarray) -> np.ndarray:
    pmf = np.exp(logpmf - logpmf.max())
    return pmf / pmf.sum()


def binomial_pmf(n: int, p: float) -> np.ndarray:
    """P(X = k) for k = 0..n, X ~ Binomial(n, p), from log-space terms."""
    ks = np.arange(n + 1)
    if p <= 0.0 or p >= 1.0:
        pmf = np.zeros(n + 1)
        pmf[0 if p <= 0.0 else n] = 1.0
        return pmf
    return _normalised(_log_choose(n, ks, _log_factorials(n)) + ks * log(p) + (n - ks) * log(1 - p))


def hypergeometric_pmf(total: int, marked: int, drawn: int,
                       table: np.ndarray | None = None) -> tuple[int, np.ndarray]:
    """(lowest, pmf): P(X = lowest + i) for X the number of marked items among `drawn` taken
    without replacement from `total` of which `marked` are marked."""
    lowest, highest = max(0, marked + drawn - total), min(marked, drawn)
    ks = np.arange(lowest, highest + 1)
    table = _log_factorials(total) if table is None else table
    # C(marked, k) C(total - marked, drawn - k) / C(total, drawn); the divisor goes in the normalisation.
    return lowest, _normalised(_log_choose(marked, ks, table) + _log_choose(total - marked, drawn - ks, table))


def two_sided(lowest: int, pmf: np.ndarray, observed: int) -> float:
    """min(1, 2 * min(P(X <= observed), P(X >= observed))) for X with P(X = lowest + i) = pmf[i]."""
    i = observed - lowest
    if i < 0 or i >= len(pmf):
        return 0.0
    below, above = float(pmf[: i + 1].sum()), float(pmf[i:].sum())
    return min(1.0, 2.0 * min(below, above))


def keep_rate(mask: np.ndarray, keep: float, name: str = KEEP_RATE) -> Test:
    """The number of True entries of `mask` against Binomial(mask.size, keep)."""
    mask = np.asarray(mask, bool)
    n, k = mask.size, int(mask.sum())
    return Test(name, k, n * keep, two_sided(0, binomial_pmf(n, keep), k))


def overlap(lines: np.ndarray, pairs: list[tuple[int, int]], name: str, what: str = "") -> Test:
    """How many positions both lines of each pair keep, summed over `pairs` (disjoint), against
    its exact law given every line's count (a convolution of hypergeometric laws)."""
    lines = np.asarray(lines, bool)
    width = lines.shape[1]
    counts = lines.sum(axis=1)
    table = _log_factorials(width)
    lowest, pmf, observed, expected = 0, np.ones(1), 0, 0.0
    for a, b in pairs:
        low, law = hypergeometric_pmf(width, int(counts[a]), int(counts[b]), table)
        lowest, pmf = lowest + low, np.convolve(pmf, law)
        pmf /= pmf.sum()
        observed += int(np.sum(lines[a] & lines[b]))
        expected += counts[a] * counts[b] / width
    return Test(name, observed, float(expected), two_sided(lowest, pmf, observed), what)


def line_tests(lines: np.ndarray, rng: np.random.Generator, what: str) -> list[Test]:
    """Overlap tests between the lines (rows) of a 2-D mask: side by side, and paired at random.
    `what` (a catalog message) says what the lines are: ROWS, COLUMNS, members..."""
    lines = np.asarray(lines, bool)
    count = lines.shape[0]
    if count < 2 or lines.shape[1] == 0:
        return []
    side_by_side = [(i, i + 1) for i in range(0, count - 1, 2)]
    order = rng.permutation(count)
    at_random = [(int(order[i]), int(order[i + 1])) for i in range(0, count - 1, 2)]
    return [overlap(lines, side_by_side, NEIGHBOURS, what), overlap(lines, at_random, AT_RANDOM, what)]


def mask_tests(mask: np.ndarray, rng: np.random.Generator) -> list[Test]:
    """Independence tests of one mask with two or more axes: its rows (the first axis against the
    rest) and its columns (the last axis against the rest)."""
    mask = np.asarray(mask, bool)
    rows = mask.reshape(mask.shape[0], -1)
    columns = mask.reshape(-1, mask.shape[-1]).T
    return line_tests(rows, rng, ROWS) + line_tests(columns, rng, COLUMNS)


def departures(tests: list[Test], level: float = LEVEL) -> list[Test]:
    """The tests whose p-value is below `level` shared among all of them (Bonferroni), so that a
    mask of independent entries fails any of them with probability at most `level`."""
    return [t for t in tests if t.p < level / max(len(tests), 1)]
