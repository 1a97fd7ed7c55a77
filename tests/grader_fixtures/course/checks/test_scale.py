from course.engine.checking import assert_close

TIMEOUT = 8


def test_scales(learner, reference, rng):
    x, f = rng.normal(size=5), float(rng.uniform(0.5, 3.0))
    assert_close(learner.call("scale", x, f), reference.call("scale", x, f), what=f"scale(x, {f:.3f})")
