"""An instructor's extra check that runs the learner's `add` as the program jax.jit lowers it to."""

import numpy as np

from course.engine.checking import assert_close
from course.engine.evidence import run_lowered


def probe_lower(module):
    import jax
    import jax.numpy as jnp

    spec = jax.ShapeDtypeStruct((4,), jnp.float32)
    return jax.jit(module.add).lower(spec, spec).as_text()


def test_add_lowered(learner, rng):
    program = learner.probe(probe_lower)
    a, b = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    (out,) = run_lowered(program, [a, b], what="jax.jit(add)(a, b)")
    assert_close(out, a + b, what="jax.jit(add)(a, b)")
