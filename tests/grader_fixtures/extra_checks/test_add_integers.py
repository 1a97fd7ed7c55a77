"""An instructor's extra hidden check: integer inputs keep an integer dtype."""

from course.engine.checking import assert_close


def test_adds_integers(learner, reference, rng):
    a, b = rng.integers(-5, 5, size=4), rng.integers(-5, 5, size=4)
    assert_close(learner.call("add", a, b), reference.call("add", a, b), what="add(a, b) for integer vectors")
