"""Checks for per_example_grads: vmap'd per-example losses and gradients equal a loop.

That the batch is vectorised, not looped over in Python, is read here from the
program: per_example_grads is lowered in the learner's process for 2 and for
8 examples and the StableHLO text comes back; vmap gives one program whose
size does not depend on the batch, a Python loop repeats the gradient per
example (`course.engine.programs`).
"""

from __future__ import annotations

import numpy as np
import pytest

from course.checks.conftest import RUN_PLUGIN
from course.engine.checking import assert_close, assert_tree_close, fail, side_by_side
from course.engine.programs import ProgramError, parse

TIMEOUT = 60
# (examples, features, hidden) from a small fixed set, so that the programs compiled
# for them are reused from one check to the next; the values are drawn fresh.
SIZES = [(3, 4, 8), (6, 7, 16)]


def _batch(rng):
    n, d, hidden = SIZES[int(rng.integers(len(SIZES)))]
    x = rng.standard_normal((n, d)).astype(np.float32)
    # Both labels always present: with one label only, unmapped labels would go unnoticed.
    y = rng.permutation(np.concatenate([[0, 1], rng.integers(0, 2, size=n - 2)])).astype(np.float32)
    return x, y, hidden


def probe_per_example(module, x, y, hidden, seed):
    import jax
    import jax.numpy as jnp
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d, h, rngs):
            self.l1 = nnx.Linear(d, h, rngs=rngs)
            self.l2 = nnx.Linear(h, 1, rngs=rngs)

        def __call__(self, v):
            return self.l2(jax.nn.relu(self.l1(v)))

    model = MLP(x.shape[1], hidden, nnx.Rngs(seed))
    before = jax.tree.map(lambda a: a.copy(), nnx.to_pure_dict(nnx.state(model, nnx.Param)))
    result = module.per_example_grads(model, jnp.asarray(x), jnp.asarray(y))
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return {"error": f"per_example_grads returned {type(result).__name__}, not a pair (losses, grads)"}
    losses, grads = result
    if isinstance(grads, nnx.State):
        grads = nnx.to_pure_dict(grads)
    return {
        "losses": losses,
        "grads": grads,
        "params_before": before,
        "params_after": nnx.to_pure_dict(nnx.state(model, nnx.Param)),
    }


def probe_programs(module, sizes, d, hidden):
    import jax
    import jax.numpy as jnp
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d, h, rngs):
            self.l1 = nnx.Linear(d, h, rngs=rngs)
            self.l2 = nnx.Linear(h, 1, rngs=rngs)

        def __call__(self, v):
            return self.l2(jax.nn.relu(self.l1(v)))

    graphdef, state = nnx.split(MLP(d, hidden, nnx.Rngs(0)))

    def pure(state, x, y):
        return module.per_example_grads(nnx.merge(graphdef, state), x, y)

    return [jax.jit(pure).lower(state, jax.ShapeDtypeStruct((n, d), jnp.float32),
                                jax.ShapeDtypeStruct((n,), jnp.float32)).as_text() for n in sizes]


@pytest.fixture(scope="module")
def both(learner, reference, request):
    """The learner's and the reference's results on one batch, gathered once per check run
    (each run is its own pytest session): the checks below judge different parts of them."""
    seed = request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed
    x, y, hidden = _batch(np.random.default_rng(seed))
    got, want = side_by_side(learner, reference).probe(probe_per_example, x, y, hidden, seed)
    if "error" in got:
        fail(got["error"])
    return x, hidden, got, want


def test_per_example_losses_match_a_loop(both):
    x, hidden, got, want = both
    assert_close(
        got["losses"], want["losses"],
        what=f"per_example_grads(MLP {x.shape[1]}->{hidden}->1, x {x.shape}) losses", rtol=1e-5, atol=1e-6,
    )


def test_per_example_gradients_match_a_loop(both):
    x, hidden, got, want = both
    assert_tree_close(
        got["grads"], want["grads"],
        what=f"per_example_grads(MLP {x.shape[1]}->{hidden}->1, x {x.shape}) grads (leading axis = example)",
        rtol=1e-4, atol=1e-6,
    )


def test_mean_of_per_example_gradients_is_the_batch_gradient(both):
    x, hidden, got, want = both
    mean = {layer: {k: np.mean(np.asarray(v), axis=0) for k, v in leaves.items()} for layer, leaves in got["grads"].items()}
    want_mean = {layer: {k: np.mean(v, axis=0) for k, v in leaves.items()} for layer, leaves in want["grads"].items()}
    assert_tree_close(mean, want_mean, what=f"the mean over the {x.shape[0]} examples of your gradients", rtol=1e-4, atol=1e-6)


def test_the_model_is_left_unchanged(both):
    _, _, got, _ = both
    assert_tree_close(
        got["params_after"], got["params_before"],
        what="the model's parameters after per_example_grads (it must not change them)", rtol=0, atol=0,
    )


def test_the_batch_is_vectorised_not_looped(learner, rng):
    _, d, hidden = SIZES[int(rng.integers(len(SIZES)))]
    texts = learner.probe(probe_programs, [2, 8], d, hidden)
    if not isinstance(texts, list) or len(texts) != 2:
        fail(f"the check could not lower per_example_grads for 2 and 8 examples (got {type(texts).__name__}).")
    try:
        small, large = parse(texts[0]), parse(texts[1])
    except ProgramError as e:
        fail(f"per_example_grads could not be read as a compiled program: {e}.")
    for n, program in ((2, small), (8, large)):
        if not program.takes((n, d)):
            fail(f"per_example_grads lowered for x ({n}, {d}) gave a program that takes "
                 f"{sorted({a.shape for a in program.args})}, not x ({n}, {d}).")
    if large.loops:
        fail(f"per_example_grads lowered for x (8, {d}) holds a loop (stablehlo.while): the examples run one after "
             "another (jax.lax.map, lax.scan or fori_loop). Use jax.vmap (or nnx.vmap) over the per-example "
             "gradient function, so that all examples are computed at once.")
    if large.size > small.size * 1.25 or large.count("dot_general") > small.count("dot_general"):
        fail(f"per_example_grads lowered for x (8, {d}) has {large.size} operations and "
             f"{large.count('dot_general')} matrix products, for x (2, {d}) {small.size} and "
             f"{small.count('dot_general')}: the examples are looped over in Python. Use jax.vmap (or nnx.vmap) "
             "over the per-example gradient function, so that one program serves any batch size.")
