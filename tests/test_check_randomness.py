"""The statistical tests of random masks that hidden checks use (course/checks/randomness.py):
exact laws, fair sources pass, patterns and repeats fail."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest

from course.checks.randomness import (LEVEL, binomial_pmf, departures, hypergeometric_pmf, keep_rate, line_tests,
                                      mask_tests, overlap, two_sided)


def _all_tests(mask, keep, rng):
    return [keep_rate(mask, keep)] + mask_tests(mask, rng)


def test_the_laws_are_exact():
    pmf = binomial_pmf(12, 0.3)
    want = np.array([comb(12, k) * 0.3**k * 0.7 ** (12 - k) for k in range(13)])
    np.testing.assert_allclose(pmf, want, rtol=1e-12)
    lowest, law = hypergeometric_pmf(20, 7, 15)
    assert lowest == 2
    want = np.array([comb(7, k) * comb(13, 15 - k) / comb(20, 15) for k in range(2, 8)])
    np.testing.assert_allclose(law, want, rtol=1e-12)
    # Tails far out are not rounded to zero before the level used by checks.
    tail = two_sided(0, binomial_pmf(20_000, 0.7), 13_500)
    assert 0.0 < tail < LEVEL


def test_an_overlap_sums_the_exact_laws_of_its_pairs():
    lines = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 0], [0, 0, 1, 1]], bool)
    test = overlap(lines, [(0, 1), (2, 3)], "pairs")
    # Pair (0, 1): 4 positions, 2 and 2 kept, overlap 1; pair (2, 3): 3 and 2 kept, overlap 1.
    _, a = hypergeometric_pmf(4, 2, 2)  # support 0..2
    _, b = hypergeometric_pmf(4, 3, 2)  # support 1..2
    law = np.convolve(a, b)  # support 1..4
    assert test.observed == 2
    assert test.p == pytest.approx(min(1.0, 2 * min(law[:2].sum(), law[1:].sum())))


def test_a_fair_source_passes_over_many_seeds():
    """An i.i.d. source (NumPy's generator, and JAX's bernoulli) at the check's sizes: no departure
    over 100 masks, and the p-values are spread as they should be (not all near 1)."""
    smallest, below_tenth = 1.0, 0
    for seed in range(100):
        rng = np.random.default_rng(seed)
        keep = float(rng.uniform(0.2, 0.9))
        mask = rng.random((int(rng.integers(40, 200)), int(rng.integers(8, 120)))) < keep
        tests = _all_tests(mask, keep, rng)
        assert departures(tests) == [], (seed, [(t.name, t.p) for t in tests])
        smallest = min(smallest, *(t.p for t in tests))
        below_tenth += sum(t.p < 0.1 for t in tests)
    assert smallest > 1e-8
    # About a tenth of 500 valid p-values fall below 0.1 (two-sided tails of discrete laws run a
    # little conservative); a test that could never fail would have almost none.
    assert 20 < below_tenth < 80, below_tenth


def test_a_fair_jax_source_passes():
    import jax

    for seed in range(20):
        mask = np.asarray(jax.random.bernoulli(jax.random.key(seed), 0.7, (150, 90)))
        assert departures(_all_tests(mask, 0.7, np.random.default_rng(seed))) == []


def _weyl(shape, keep, step=0.6180339887498949, offset=0.123):
    index = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
    return np.mod(index * step + offset, 1.0) < keep


@pytest.mark.parametrize("step", [0.6180339887498949, 0.41421356237309503, 0.7548776662466927, 0.0917])
def test_a_fixed_arithmetic_pattern_with_the_right_rate_fails(step):
    rng = np.random.default_rng(1)
    mask = _weyl((180, 100), 0.7, step)
    assert departures([keep_rate(mask, 0.7)]) == []  # the rate is right
    assert departures(mask_tests(mask, rng))


def test_a_periodic_pattern_fails():
    rng = np.random.default_rng(2)
    index = np.arange(160 * 90).reshape(160, 90)
    mask = (index % 10) < 7
    assert departures([keep_rate(mask, 0.7)]) == []
    assert departures(mask_tests(mask, rng))


def test_rows_repeated_fail():
    rng = np.random.default_rng(3)
    row = rng.random(100) < 0.6
    mask = np.broadcast_to(row, (150, 100))
    assert departures(mask_tests(mask, rng))
    # Every row drawn fairly, then each repeated once (rows 2i and 2i + 1 alike).
    mask = np.repeat(rng.random((75, 100)) < 0.6, 2, axis=0)
    found = departures(mask_tests(mask, rng))
    assert found and "{lines}" in found[0].name


def test_members_repeated_fail():
    rng = np.random.default_rng(4)
    member = rng.random(600) < 0.75
    assert departures(line_tests(np.stack([member] * 4), rng, "members"))
    # Two members drawn fairly, each used twice.
    pair = rng.random((2, 600)) < 0.75
    assert departures(line_tests(pair[[0, 0, 1, 1]], rng, "members"))
    fair = rng.random((4, 600)) < 0.75
    assert departures(line_tests(fair, rng, "members")) == []


def test_a_pattern_shifted_by_the_key_fails_across_keys():
    """The same arithmetic pattern with an offset drawn from each key: the masks of two keys overlap
    by how far apart their offsets are, not as independent masks do."""
    rng = np.random.default_rng(5)
    index = np.arange(200 * 100, dtype=np.float64)
    pattern = np.mod(0.6180339887 * index**2 % 1.0 + 0.41421356 * index, 1.0)
    masks = [np.mod(pattern + rng.random(), 1.0) < 0.7 for _ in range(4)]
    flat = np.stack(masks)
    tests = [overlap(flat, [(i, j)], "keys") for i in range(4) for j in range(i + 1, 4)]
    assert departures(tests)
    fair = rng.random((4, 20_000)) < 0.7
    assert departures([overlap(fair, [(i, j)], "keys") for i in range(4) for j in range(i + 1, 4)]) == []


def test_the_level_is_shared_among_the_tests():
    rng = np.random.default_rng(6)
    mask = rng.random((100, 50)) < 0.5
    tests = mask_tests(mask, rng)
    cut = [t.__class__(t.name, t.observed, t.expected, LEVEL / len(tests) * 1.5, t.lines) for t in tests]
    assert departures(cut) == []
    cut[0] = cut[0].__class__(cut[0].name, 0, 0.0, LEVEL / len(tests) * 0.5)
    assert departures(cut) == [cut[0]]
