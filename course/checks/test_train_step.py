"""Checks for train_step: an Adam nnx.Optimizer and a step that matches the reference."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_tree_close, fail

TIMEOUT = 90


def probe_steps(module, d_in, hidden, seed, learning_rate, xs, ys):
    import jax
    import jax.numpy as jnp
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d_in, hidden, *, rngs):
            self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
            self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

        def __call__(self, x):
            return self.linear2(jax.nn.relu(self.linear1(x)))

    model = MLP(d_in, hidden, rngs=nnx.Rngs(seed))
    optimizer = module.make_optimizer(model, learning_rate)
    if not isinstance(optimizer, nnx.Optimizer):
        return {"error": f"make_optimizer returned {type(optimizer).__name__}, expected an nnx.Optimizer"}
    losses = []
    for x, y in zip(xs, ys):
        losses.append(module.train_step(model, optimizer, jnp.asarray(x), jnp.asarray(y)))
    return {"losses": losses, "params": nnx.to_pure_dict(nnx.state(model, nnx.Param))}


def _batches(rng, n_steps, d_in):
    sizes = [int(rng.integers(4, 33)) for _ in range(n_steps)]
    xs = [rng.standard_normal((b, d_in)).astype(np.float32) for b in sizes]
    ys = [rng.integers(0, 2, size=b).astype(np.float32) for b in sizes]
    return xs, ys


def _run_both(learner, reference, rng, seed, n_steps):
    d_in, hidden = int(rng.integers(2, 12)), int(rng.integers(3, 24))
    lr = float(10 ** rng.uniform(-3, -1.5))
    xs, ys = _batches(rng, n_steps, d_in)
    got = learner.probe(probe_steps, d_in, hidden, seed, lr, xs, ys)
    if "error" in got:
        fail(got["error"] + ".")
    want = reference.probe(probe_steps, d_in, hidden, seed, lr, xs, ys)
    where = f"MLP({d_in}, {hidden}), make_optimizer(model, {lr:.3g}), {n_steps} train_step call(s)"
    return got, want, where


def test_first_step(learner, reference, rng, seed):
    got, want, where = _run_both(learner, reference, rng, seed, 1)
    assert_close(got["losses"][0], want["losses"][0],
                 what=f"{where}: the returned loss (mean BCE with logits, before the update)", rtol=1e-4, atol=1e-6)
    assert_tree_close(got["params"], want["params"],
                      what=f"{where}: the parameters after one Adam update", rtol=1e-4, atol=1e-6)


def test_several_steps(learner, reference, rng, seed):
    got, want, where = _run_both(learner, reference, rng, seed, 4)
    assert_tree_close(got["losses"], want["losses"], what=f"{where}: the losses returned, step by step",
                      rtol=1e-4, atol=1e-6)
    assert_tree_close(got["params"], want["params"],
                      what=f"{where}: the parameters after the last step (Adam keeps moments between steps)",
                      rtol=1e-4, atol=1e-6)
