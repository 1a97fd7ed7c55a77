import numpy as np

from course.engine.checking import assert_close


def test_square_grad_matches_reference(learner, reference, rng):
    x = rng.normal(size=(4,)).astype(np.float32)
    assert_close(learner.call("square_grad", x), reference.call("square_grad", x), what="square_grad(x)")
