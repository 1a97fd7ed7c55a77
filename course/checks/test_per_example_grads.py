"""Checks for per_example_grads: vmap'd per-example losses and gradients equal a loop."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_tree_close, fail

TIMEOUT = 60


def _batch(rng):
    n, d = int(rng.integers(3, 9)), int(rng.integers(3, 10))
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = rng.integers(0, 2, size=n).astype(np.float32)
    return x, y, int(rng.integers(4, 17))


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


def _run_both(learner, reference, rng, seed):
    x, y, hidden = _batch(rng)
    got = learner.probe(probe_per_example, x, y, hidden, seed)
    want = reference.probe(probe_per_example, x, y, hidden, seed)
    if "error" in got:
        fail(got["error"])
    return x, hidden, got, want


def test_per_example_losses_match_a_loop(learner, reference, rng, seed):
    x, hidden, got, want = _run_both(learner, reference, rng, seed)
    assert_close(
        got["losses"], want["losses"],
        what=f"per_example_grads(MLP {x.shape[1]}->{hidden}->1, x {x.shape}) losses", rtol=1e-5, atol=1e-6,
    )


def test_per_example_gradients_match_a_loop(learner, reference, rng, seed):
    x, hidden, got, want = _run_both(learner, reference, rng, seed)
    assert_tree_close(
        got["grads"], want["grads"],
        what=f"per_example_grads(MLP {x.shape[1]}->{hidden}->1, x {x.shape}) grads (leading axis = example)",
        rtol=1e-4, atol=1e-6,
    )


def test_mean_of_per_example_gradients_is_the_batch_gradient(learner, reference, rng, seed):
    x, hidden, got, want = _run_both(learner, reference, rng, seed)
    mean = {layer: {k: np.mean(np.asarray(v), axis=0) for k, v in leaves.items()} for layer, leaves in got["grads"].items()}
    want_mean = {layer: {k: np.mean(v, axis=0) for k, v in leaves.items()} for layer, leaves in want["grads"].items()}
    assert_tree_close(mean, want_mean, what=f"the mean over the {x.shape[0]} examples of your gradients", rtol=1e-4, atol=1e-6)


def test_the_model_is_left_unchanged(learner, reference, rng, seed):
    _, _, got, _ = _run_both(learner, reference, rng, seed)
    assert_tree_close(
        got["params_after"], got["params_before"],
        what="the model's parameters after per_example_grads (it must not change them)", rtol=0, atol=0,
    )
