import numpy as np

from course.engine.checking import assert_close

TIMEOUT = 30


def test_scale_matches_reference(learner, reference, rng):
    x = rng.normal(size=(int(rng.integers(2, 6)), 3)).astype(np.float32)
    alpha = float(rng.uniform(0.5, 2.0))
    assert_close(learner.call("scale", x, alpha), reference.call("scale", x, alpha),
                 what=f"scale(x of shape {x.shape}, {alpha:.3f})")
