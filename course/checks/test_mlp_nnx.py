"""Checks for mlp_nnx: the Titanic MLP in Flax NNX, judged by its parameters and outputs."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_equal, fail, side_by_side
from course.engine.evidence import mlp_forward

TIMEOUT = 60


# (d_in, hidden, d_out, batch) from a small fixed set, so that the programs compiled
# for them are reused from one check to the next; the values are drawn fresh. The
# three sizes differ, so that every parameter is identified by its shape alone; one
# batch is a single row.
SIZES = [(6, 11, 3, 5), (9, 4, 2, 1)]


def _sizes(rng):
    return SIZES[int(rng.integers(len(SIZES)))]


def probe_param_shapes(module, sizes, seed, names=None):
    from flax import nnx

    rngs = nnx.Rngs(seed)
    if names:  # by keyword, with the names of the statement's signature
        model = module.MLP(**dict(zip(names, sizes)), rngs=rngs)
    else:
        model = module.MLP(*sizes, rngs=rngs) if sizes else module.MLP(rngs=rngs)
    flat = nnx.to_flat_state(nnx.state(model, nnx.Param))
    return sorted(list(var.shape) for _, var in flat)


def probe_forward(module, sizes, seed, values, x):
    import jax.numpy as jnp
    from flax import nnx

    model = module.MLP(*sizes, rngs=nnx.Rngs(seed))
    by_shape = {tuple(v.shape): v for v in values}
    for path, var in nnx.to_flat_state(nnx.state(model, nnx.Param)):
        if tuple(var.shape) not in by_shape:
            return {"error": f"parameter {'.'.join(map(str, path))} has shape {tuple(var.shape)}, "
                             f"which is none of the expected {sorted(by_shape)}"}
        var[...] = jnp.asarray(by_shape[tuple(var.shape)])
    return {"out": model(jnp.asarray(x))}


def probe_seeds(module, sizes, seed):
    import jax
    from flax import nnx

    def leaves(s):
        return jax.tree.leaves(nnx.state(module.MLP(*sizes, rngs=nnx.Rngs(s)), nnx.Param))

    return {"a": leaves(seed), "b": leaves(seed), "c": leaves(seed + 1)}


def test_default_sizes_are_the_articles(learner, reference, seed):
    got, want = side_by_side(learner, reference).probe(probe_param_shapes, [], seed)
    assert_equal(got, want, what="shapes of the nnx.Param arrays of MLP(rngs=nnx.Rngs(seed)) (sorted)")


def test_parameter_shapes(learner, reference, rng, seed):
    sizes = _sizes(rng)[:3]
    got, want = side_by_side(learner, reference).probe(probe_param_shapes, list(sizes), seed)
    assert_equal(got, want, what=f"shapes of the nnx.Param arrays of MLP{sizes} (sorted): "
                                 "two kernels (in, out) and two biases")
    # Later code builds the model by keyword, with the signature's names.
    names = ["in_features", "hidden", "out_features"]
    call = "MLP(" + ", ".join(f"{k}={v}" for k, v in zip(names, sizes)) + ", rngs=rngs)"
    got, want = side_by_side(learner, reference).probe(probe_param_shapes, list(sizes), seed, names)
    assert_equal(got, want, what=f"shapes of the nnx.Param arrays of {call} (sorted)")


def test_forward_with_parameters_set_by_the_check(learner, rng, seed):
    d_in, hidden, d_out, batch = _sizes(rng)
    sizes = (d_in, hidden, d_out)
    values = [
        rng.standard_normal((d_in, hidden)).astype("float32"),
        rng.standard_normal((hidden,)).astype("float32"),
        rng.standard_normal((hidden, d_out)).astype("float32"),
        rng.standard_normal((d_out,)).astype("float32"),
    ]
    x = rng.standard_normal((batch, d_in)).astype("float32")
    got = learner.probe(probe_forward, list(sizes), seed, values, x)
    if "error" in got:
        fail(f"MLP{sizes}: {got['error']}.")
    # The expected logits are computed here, in float64, from the values the check chose.
    params = {"linear1": {"kernel": values[0], "bias": values[1]}, "linear2": {"kernel": values[2], "bias": values[3]}}
    want = mlp_forward(params, x)
    what = (f"MLP{sizes}(x) for x of shape {x.shape}, with the check's parameter values "
            "(linear, ReLU, linear; no sigmoid)")
    out = got["out"]
    if isinstance(out, np.ndarray) and out.shape == want.shape and np.all((out > 0) & (out < 1)) \
            and np.allclose(out, 1 / (1 + np.exp(-want)), rtol=1e-4, atol=1e-5):
        fail(f"{what}: the outputs are sigmoid(logits). Return the logits: the loss applies the sigmoid.")
    assert_close(out, want.astype(np.float32), what=what, rtol=1e-4, atol=1e-4, dtype=np.float32)


def test_initialisation_comes_from_rngs(learner, rng, seed):
    sizes = _sizes(rng)[:3]
    got = learner.probe(probe_seeds, list(sizes), seed)
    same = len(got["a"]) == len(got["b"]) and all(
        a.shape == b.shape and (a == b).all() for a, b in zip(got["a"], got["b"]))
    if not same:
        fail(f"MLP{sizes} built twice with rngs=nnx.Rngs({seed}) has different parameters: "
             "take every random key from `rngs`.")
    differ = len(got["a"]) != len(got["c"]) or any(
        a.shape != c.shape or not (a == c).all() for a, c in zip(got["a"], got["c"]))
    if not differ:
        fail(f"MLP{sizes} built with nnx.Rngs({seed}) and nnx.Rngs({seed + 1}) has the same parameters: "
             "pass `rngs` to the layers instead of a fixed key.")
