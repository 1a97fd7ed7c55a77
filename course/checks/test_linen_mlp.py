"""Checks for linen_mlp: a Linen port of the NNX MLP, judged by count and output."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_equal, fail, side_by_side

TIMEOUT = 60


def probe_init_apply(module, d_in, hidden, seed, x):
    import jax
    import numpy as np
    import jax.numpy as jnp

    model = module.MLP() if hidden is None else module.MLP(hidden=hidden)
    variables = model.init(jax.random.key(seed), jnp.asarray(x))
    if "params" not in variables:
        return {"error": f"init returned collections {sorted(variables)}, expected a 'params' collection"}
    leaves = [np.asarray(leaf) for leaf in jax.tree.leaves(variables["params"])]
    return {"leaves": leaves, "out": model.apply(variables, jnp.asarray(x))}


def probe_nnx_count(module, d_in, hidden):
    import jax
    from flax import nnx

    model = nnx.Sequential(nnx.Linear(d_in, hidden, rngs=nnx.Rngs(0)), nnx.Linear(hidden, 1, rngs=nnx.Rngs(0)))
    return sum(int(p.size) for p in jax.tree.leaves(nnx.state(model, nnx.Param)))


def _numpy_forward(leaves, d_in, hidden, x):
    by_shape = {tuple(np.shape(leaf)): np.asarray(leaf, np.float64) for leaf in leaves}
    need = [(d_in, hidden), (hidden,), (hidden, 1), (1,)]
    missing = [s for s in need if s not in by_shape]
    if missing or len(leaves) != 4:
        fail(f"MLP(hidden={hidden}).init(key, x of shape {x.shape})['params'] holds arrays of shapes "
             f"{sorted(tuple(np.shape(leaf)) for leaf in leaves)}; expected two kernels {need[0]}, {need[2]} "
             f"and two biases {need[1]}, {need[3]}.")
    h = np.maximum(x.astype(np.float64) @ by_shape[(d_in, hidden)] + by_shape[(hidden,)], 0.0)
    return (h @ by_shape[(hidden, 1)] + by_shape[(1,)]).astype(np.float32)


def test_parameter_count_matches_nnx(learner, reference, rng, seed):
    d_in, hidden = int(rng.integers(2, 12)), int(rng.integers(13, 40))
    x = rng.standard_normal((3, d_in)).astype(np.float32)
    got = learner.probe(probe_init_apply, d_in, hidden, seed, x)
    if "error" in got:
        fail(got["error"] + ".")
    want = reference.probe(probe_nnx_count, d_in, hidden)
    assert_equal(sum(int(np.size(leaf)) for leaf in got["leaves"]), want,
                 what=f"the number of parameters of MLP(hidden={hidden}) initialised on {d_in} input features "
                      f"(the NNX MLP({d_in}, {hidden}) has this many)")


def test_output_follows_the_parameters(learner, rng, seed):
    d_in, hidden, batch = int(rng.integers(2, 12)), int(rng.integers(13, 40)), int(rng.integers(1, 9))
    x = rng.standard_normal((batch, d_in)).astype(np.float32)
    got = learner.probe(probe_init_apply, d_in, hidden, seed, x)
    if "error" in got:
        fail(got["error"] + ".")
    want = _numpy_forward(got["leaves"], d_in, hidden, x)
    assert_close(got["out"], want, what=f"MLP(hidden={hidden}).apply(variables, x of shape {x.shape}): "
                                        "Dense, ReLU, Dense with your own initialised parameters",
                 rtol=1e-4, atol=1e-5)


def test_default_is_the_articles_model(learner, seed):
    x = np.ones((2, 9), np.float32)
    got = learner.probe(probe_init_apply, 9, None, seed, x)
    if "error" in got:
        fail(got["error"] + ".")
    assert_equal(sum(int(np.size(leaf)) for leaf in got["leaves"]), 705,
                 what="the number of parameters of MLP() on 9 features (the article's 9 -> 64 -> 1)")


def test_count_params(learner, reference, rng):
    tree = {"Dense_0": {"kernel": rng.standard_normal((int(rng.integers(1, 9)), int(rng.integers(1, 9)))),
                        "bias": rng.standard_normal(int(rng.integers(1, 9)))},
            "blocks": [{"scale": rng.standard_normal((int(rng.integers(1, 5)),) * 3)} for _ in range(2)]}
    assert_equal(*side_by_side(learner, reference).call("count_params", tree),
                 what="count_params on a nested parameter dict")
