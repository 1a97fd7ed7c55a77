"""Checks for per_example_grads: vmap'd per-example losses and gradients equal a loop.

That the batch is vectorised, not looped over in Python, is read here from the
program: per_example_grads is lowered in the learner's process for 2 and for
8 examples and the StableHLO text comes back, with the numbers that very program
computed (lowered, compiled and called in one go); vmap gives one program whose
size does not depend on the batch, a Python loop repeats the gradient per
example (`course.engine.programs`).
"""

from __future__ import annotations

import numpy as np
import pytest

from course.checks.conftest import RUN_PLUGIN
from course.engine.checking import assert_close, assert_tree_close, fail, side_by_side
from course.engine.evidence import read_program

TIMEOUT = 60
# (features, hidden) from a small fixed set, and batches of 2 and of 8 examples, so
# that the programs compiled for them are reused from one check to the next; the
# values are drawn fresh.
SIZES = [(4, 8), (7, 16)]
LENGTHS = (2, 8)


def _batches(rng):
    d, hidden = SIZES[int(rng.integers(len(SIZES)))]
    batches = []
    for n in LENGTHS:
        x = rng.standard_normal((n, d)).astype(np.float32)
        # Both labels always present: with one label only, unmapped labels would go unnoticed.
        y = rng.permutation(np.concatenate([[0, 1], rng.integers(0, 2, size=n - 2)])).astype(np.float32)
        batches.append((x, y))
    return batches, hidden


def probe_per_example(module, batches, hidden, seed):
    """per_example_grads run as the compiled program whose text comes back: the
    numbers and the program judged are those of one and the same trace."""
    import jax
    import jax.numpy as jnp
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d, h, rngs):
            self.l1 = nnx.Linear(d, h, rngs=rngs)
            self.l2 = nnx.Linear(h, 1, rngs=rngs)

        def __call__(self, v):
            return self.l2(jax.nn.relu(self.l1(v)))

    results = []
    for x, y in batches:
        model = MLP(x.shape[1], hidden, nnx.Rngs(seed))
        before = nnx.to_pure_dict(nnx.state(model, nnx.Param))
        graphdef, state = nnx.split(model)

        def pure(state, x, y):
            m = nnx.merge(graphdef, state)
            result = module.per_example_grads(m, x, y)
            return result, nnx.state(m, nnx.Param)

        x, y = jnp.asarray(x), jnp.asarray(y)
        lowered = jax.jit(pure).lower(state, x, y)
        result, after = lowered.compile()(state, x, y)
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            return {"error": f"per_example_grads returned {type(result).__name__}, not a pair (losses, grads)"}
        losses, grads = result
        if isinstance(grads, nnx.State):
            grads = nnx.to_pure_dict(grads)
        results.append({
            "losses": losses,
            "grads": grads,
            "params_before": before,
            "params_after": nnx.to_pure_dict(after),
            "program": lowered.as_text(),
        })
    return {"results": results}


@pytest.fixture(scope="module")
def both(learner, reference, request):
    """The learner's and the reference's results on batches of 2 and 8 examples, gathered once
    per check run (each run is its own pytest session): the checks below judge different parts."""
    seed = request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed
    batches, hidden = _batches(np.random.default_rng(seed))
    got, want = side_by_side(learner, reference).probe(probe_per_example, batches, hidden, seed)
    if "error" in got:
        fail(got["error"])
    return batches, hidden, got["results"], want["results"]


def test_per_example_losses_match_a_loop(both):
    batches, hidden, got, want = both
    for (x, _), g, w in zip(batches, got, want):
        assert_close(
            g["losses"], w["losses"],
            what=f"per_example_grads(MLP {x.shape[1]}->{hidden}->1, x {x.shape}) losses", rtol=1e-5, atol=1e-6,
        )


def test_per_example_gradients_match_a_loop(both):
    batches, hidden, got, want = both
    for (x, _), g, w in zip(batches, got, want):
        assert_tree_close(
            g["grads"], w["grads"],
            what=f"per_example_grads(MLP {x.shape[1]}->{hidden}->1, x {x.shape}) grads (leading axis = example)",
            rtol=1e-4, atol=1e-6,
        )


def test_mean_of_per_example_gradients_is_the_batch_gradient(both):
    batches, hidden, got, want = both
    (x, _), g, w = batches[-1], got[-1], want[-1]
    mean = {layer: {k: np.mean(np.asarray(v), axis=0) for k, v in leaves.items()} for layer, leaves in g["grads"].items()}
    want_mean = {layer: {k: np.mean(v, axis=0) for k, v in leaves.items()} for layer, leaves in w["grads"].items()}
    assert_tree_close(mean, want_mean, what=f"the mean over the {x.shape[0]} examples of your gradients", rtol=1e-4, atol=1e-6)


def test_the_model_is_left_unchanged(both):
    _, _, got, _ = both
    for g in got:
        assert_tree_close(
            g["params_after"], g["params_before"],
            what="the model's parameters after per_example_grads (it must not change them)", rtol=0, atol=0,
        )


def test_the_batch_is_vectorised_not_looped(both):
    batches, _, got, _ = both
    programs = []
    for (x, _), g in zip(batches, got):
        program = read_program(g.get("program"), what="per_example_grads as a compiled program")
        if not program.takes(x.shape):
            fail(f"per_example_grads lowered for x {x.shape} gave a program that takes "
                 f"{sorted({a.shape for a in program.args})}, not x {x.shape}.")
        programs.append(program)
    small, large = programs
    d = batches[0][0].shape[1]
    if large.loops:
        fail(f"per_example_grads lowered for x (8, {d}) holds a loop (stablehlo.while): the examples run one after "
             "another (jax.lax.map, lax.scan or fori_loop). Use jax.vmap (or nnx.vmap) over the per-example "
             "gradient function, so that all examples are computed at once.")
    if large.size > small.size * 1.25 or large.count("dot_general") > small.count("dot_general"):
        fail(f"per_example_grads lowered for x (8, {d}) has {large.size} operations and "
             f"{large.count('dot_general')} matrix products, for x (2, {d}) {small.size} and "
             f"{small.count('dot_general')}: the examples are looped over in Python. Use jax.vmap (or nnx.vmap) "
             "over the per-example gradient function, so that one program serves any batch size.")
