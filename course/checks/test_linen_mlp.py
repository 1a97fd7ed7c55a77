"""Checks for linen_mlp: a Linen port of the NNX MLP, judged by count and output."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_equal, fail, side_by_side
from course.engine.words import _

TIMEOUT = 60
# (d_in, hidden, batch) from a small fixed set so that compiled programs are reused between runs. Every
# member keeps d_in < hidden (the four parameter shapes are distinct: a transposed kernel cannot match, and
# the check's values are put in place by shape) and batch different from both; one hidden is odd, one even.
SIZES = [(5, 24, 16), (9, 17, 8)]


def probe_init_apply(module, d_in, hidden, seed, x, given=None):
    import jax
    import numpy as np
    import jax.numpy as jnp

    model = module.MLP() if hidden is None else module.MLP(hidden=hidden)
    variables = model.init(jax.random.key(seed), jnp.asarray(x))
    if "params" not in variables:
        return {"error": "no_params", "collections": sorted(str(name) for name in variables)}
    leaves = [np.asarray(leaf) for leaf in jax.tree.leaves(variables["params"])]
    if given is not None:  # the check's own values, put in place of the initialised ones (matched by shape)
        by_shape = {tuple(v.shape): v for v in given}
        params = jax.tree.map(lambda leaf: jnp.asarray(by_shape.get(tuple(np.shape(leaf)), leaf)),
                              variables["params"])
        variables = {**variables, "params": params}
    return {"leaves": leaves, "out": model.apply(variables, jnp.asarray(x))}


def probe_nnx_count(module, d_in, hidden):
    import jax
    from flax import nnx

    model = nnx.Sequential(nnx.Linear(d_in, hidden, rngs=nnx.Rngs(0)), nnx.Linear(hidden, 1, rngs=nnx.Rngs(0)))
    return sum(int(p.size) for p in jax.tree.leaves(nnx.state(model, nnx.Param)))


def _check_shapes(leaves, d_in, hidden, x):
    need = [(d_in, hidden), (hidden,), (hidden, 1), (1,)]
    shapes = sorted(tuple(np.shape(leaf)) for leaf in leaves)
    if shapes != sorted(need):
        fail(_("MLP(hidden={hidden}).init(key, x of shape {x})['params'] holds arrays of shapes "
               "{shapes}; expected two kernels {k1}, {k2} and two biases {b1}, {b2}.").format(
            hidden=hidden, x=x.shape, shapes=shapes, k1=need[0], k2=need[2], b1=need[1], b2=need[3]))


def _no_params(got):
    """Fail if the probe found no 'params' collection (its finding, told here in the learner's language)."""
    if "error" in got:
        fail(_("init returned collections {collections}, expected a 'params' collection.").format(
            collections=got.get("collections")))


def _numpy_forward(leaves, d_in, hidden, x):
    by_shape = {tuple(np.shape(leaf)): np.asarray(leaf, np.float64) for leaf in leaves}
    h = np.maximum(x.astype(np.float64) @ by_shape[(d_in, hidden)] + by_shape[(hidden,)], 0.0)
    return (h @ by_shape[(hidden, 1)] + by_shape[(1,)]).astype(np.float32)


def test_parameter_count_matches_nnx(learner, reference, rng, seed):
    d_in, hidden, _batch = SIZES[int(rng.integers(len(SIZES)))]
    x = rng.standard_normal((3, d_in)).astype(np.float32)
    got = learner.probe(probe_init_apply, d_in, hidden, seed, x)
    _no_params(got)
    want = reference.probe(probe_nnx_count, d_in, hidden)
    assert_equal(sum(int(np.size(leaf)) for leaf in got["leaves"]), want,
                 what=_("the number of parameters of MLP(hidden={hidden}) initialised on {d_in} input features "
                        "(the NNX MLP({d_in}, {hidden}) has this many)").format(hidden=hidden, d_in=d_in))


def test_kernels_are_drawn_from_the_key(learner, rng, seed):
    """`init` with two keys: each kernel holds random numbers drawn from the key (nn.Dense's default
    initialiser). A constant initialiser (zeros: every hidden unit the same, forever) or one that
    ignores the key gives a network the count and output checks cannot tell apart."""
    d_in, hidden, _batch = SIZES[int(rng.integers(len(SIZES)))]
    x = rng.standard_normal((3, d_in)).astype(np.float32)
    kernels = []
    for key in (seed, (seed + 1) % 2**31):
        got = learner.probe(probe_init_apply, d_in, hidden, key, x)
        _no_params(got)
        _check_shapes(got["leaves"], d_in, hidden, x)
        by_shape = {tuple(np.shape(leaf)): np.asarray(leaf, np.float64) for leaf in got["leaves"]}
        kernels.append([by_shape[(d_in, hidden)], by_shape[(hidden, 1)]])
    for (first, second), shape in zip(zip(*kernels), [(d_in, hidden), (hidden, 1)]):
        if not np.all(np.isfinite(first)) or np.ptp(first) == 0 or np.array_equal(first, second):
            fail(_("MLP(hidden={hidden}).init(key, x of shape {x}): the kernel of shape {shape} is the same for "
                   "two keys, or holds one value throughout. Keep nn.Dense's default kernel initialiser, which "
                   "draws random numbers from the key; a constant one makes every hidden unit alike.").format(
                hidden=hidden, x=x.shape, shape=shape))


def test_output_follows_the_parameters(learner, rng, seed):
    d_in, hidden, batch = SIZES[int(rng.integers(len(SIZES)))]
    x = rng.standard_normal((batch, d_in)).astype(np.float32)
    # Parameters drawn here (biases too, and some of the logits negative), put in place of the initialised ones.
    given = [(rng.standard_normal(shape) / np.sqrt(shape[0] if len(shape) == 2 else 1)).astype(np.float32)
             for shape in [(d_in, hidden), (hidden,), (hidden, 1), (1,)]]
    middle = np.median(_numpy_forward(given[:3] + [np.zeros(1, np.float32)], d_in, hidden, x))
    given[3] = np.float32([-middle + 0.01 * rng.standard_normal()])  # about half the logits below zero
    got = learner.probe(probe_init_apply, d_in, hidden, seed, x, given)
    _no_params(got)
    _check_shapes(got["leaves"], d_in, hidden, x)
    want = _numpy_forward(given, d_in, hidden, x)
    assert_close(got["out"], want, what=_("MLP(hidden={hidden}).apply(variables, x of shape {x}): "
                                          "Dense, ReLU, Dense, with the variables from init holding other "
                                          "values").format(hidden=hidden, x=x.shape),
                 rtol=1e-4, atol=1e-5)


def test_default_is_the_articles_model(learner, seed):
    x = np.ones((2, 9), np.float32)
    got = learner.probe(probe_init_apply, 9, None, seed, x)
    _no_params(got)
    assert_equal(sum(int(np.size(leaf)) for leaf in got["leaves"]), 705,
                 what=_("the number of parameters of MLP() on 9 features (the article's 9 -> 64 -> 1)"))


def test_count_params(learner, reference, rng):
    # Every kernel and cube has two or more entries on each axis: counting len(leaf) or a leaf's
    # shape[0] instead of its size then never adds up right.
    tree = {"Dense_0": {"kernel": rng.standard_normal((int(rng.integers(2, 9)), int(rng.integers(2, 9)))),
                        "bias": rng.standard_normal(int(rng.integers(1, 9)))},
            "blocks": {f"layers_{i}": {"scale": rng.standard_normal((int(rng.integers(2, 5)),) * 3)}
                       for i in range(2)}}
    assert_equal(*side_by_side(learner, reference).call("count_params", tree),
                 what=_("count_params on a nested parameter dict"))
