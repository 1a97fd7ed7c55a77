from course.engine.checking import assert_close

TIMEOUT = 8


def test_adds_vectors(learner, reference, rng):
    n = int(rng.integers(2, 9))
    a, b = rng.normal(size=n), rng.normal(size=n)
    assert_close(learner.call("add", a, b), reference.call("add", a, b), what=f"add(a, b) for vectors of length {n}")


def test_adds_matrices(learner, reference, rng):
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    assert_close(learner.call("add", a, b), reference.call("add", a, b), what="add(a, b) for 3x4 matrices")
