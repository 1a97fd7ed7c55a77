import numpy as np

from course.engine.checking import assert_close


def test_clip_matches_reference(learner, reference, rng):
    x = rng.normal(size=(5,)).astype(np.float32)
    assert_close(learner.call("clip", x, -0.5, 0.5), reference.call("clip", x, -0.5, 0.5), what="clip(x, -0.5, 0.5)")
