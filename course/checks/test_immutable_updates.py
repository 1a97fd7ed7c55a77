"""Checks for immutable_updates: masked fill and row scatter-add as pure functions,
called under jax.jit (where in-place writes and boolean-mask indexing fail)."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, fail


def probe_masked_fill(module, x, mask, value):
    import jax
    import jax.numpy as jnp

    x = jnp.asarray(x)
    out = jax.jit(module.masked_fill)(x, jnp.asarray(mask), value)
    return {"out": out, "input_after": x}


def probe_scatter_add(module, x, index, src):
    import jax
    import jax.numpy as jnp

    x = jnp.asarray(x)
    out = jax.jit(module.scatter_add_rows)(x, jnp.asarray(index), jnp.asarray(src))
    return {"out": out, "input_after": x}


def _shape(rng, ndim):
    return tuple(int(d) for d in rng.integers(2, 8, size=ndim))


def test_masked_fill_under_jit(learner, reference, rng):
    for ndim in (1, 2, 3):
        x = rng.standard_normal(_shape(rng, ndim)).astype(np.float32)
        mask = rng.random(x.shape) < 0.4
        value = float(np.round(rng.uniform(-5, 5), 2))
        what = f"jax.jit(masked_fill)(x, mask, {value}) with x of shape {x.shape}"
        got = learner.probe(probe_masked_fill, x, mask, value)
        want = reference.probe(probe_masked_fill, x, mask, value)
        assert_close(got["out"], want["out"], what=what)
        assert_close(got["input_after"], x, what=what + ": x itself must not change")


def test_masked_fill_keeps_the_dtype(learner, reference, rng):
    x = rng.standard_normal((int(rng.integers(3, 9)),)).astype(np.float32)
    mask = rng.random(x.shape) < 0.5
    got = learner.probe(probe_masked_fill, x, mask, 1.0)["out"]
    if np.asarray(got).dtype != np.float32:
        fail(f"masked_fill on a float32 x of shape {x.shape} returned dtype {np.asarray(got).dtype}, expected float32.")


def test_scatter_add_rows_accumulates_repeated_indices(learner, reference, rng):
    for trailing in ((), (int(rng.integers(2, 5)),)):
        n = int(rng.integers(3, 8))
        k = int(rng.integers(n + 2, 3 * n))  # more updates than rows: indices repeat
        x = rng.standard_normal((n,) + trailing).astype(np.float32)
        index = rng.integers(0, n, size=k).astype(np.int32)
        index[:2] = index[0]  # at least one row gets two contributions
        src = rng.standard_normal((k,) + trailing).astype(np.float32)
        what = (f"jax.jit(scatter_add_rows)(x, index, src) with x of shape {x.shape}, "
                f"index {index.tolist()}, src of shape {src.shape}")
        got = learner.probe(probe_scatter_add, x, index, src)
        want = reference.probe(probe_scatter_add, x, index, src)
        assert_close(got["out"], want["out"], what=what)
        assert_close(got["input_after"], x, what=what + ": x itself must not change")
