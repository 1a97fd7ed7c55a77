"""Checks for checkpoint_roundtrip: a trained model saved, moved on disk, restored bit for bit."""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_equal, assert_tree_close, fail

TIMEOUT = 120


def probe_roundtrip(module, x, y, hidden, seed):
    import os
    import shutil
    import tempfile

    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d, h, rngs):
            self.l1 = nnx.Linear(d, h, rngs=rngs)
            self.l2 = nnx.Linear(h, 1, rngs=rngs)

        def __call__(self, v):
            return self.l2(jax.nn.relu(self.l1(v)))

    def loss_fn(m):
        return optax.sigmoid_binary_cross_entropy(m(x).squeeze(-1), y).mean()

    def train(m, opt, steps):
        for _ in range(steps):
            opt.update(m, nnx.grad(loss_fn)(m))

    d = x.shape[1]
    model = MLP(d, hidden, nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
    train(model, optimizer, 3)
    saved = jax.tree.map(np.asarray, nnx.to_pure_dict(nnx.state(model)))
    saved_out = np.asarray(model(jnp.asarray(x)))

    root = tempfile.mkdtemp(prefix="jaxlings-ckpt-")
    try:
        first, moved = os.path.join(root, "run", "ckpt"), os.path.join(root, "elsewhere")
        os.makedirs(os.path.dirname(first))
        module.save_model(model, first)
        if not os.path.isdir(first) or not os.listdir(first):
            return {"error": f"save_model(model, path) left nothing in the directory `path`"}
        # Training goes on after a save: the restored model must be the saved one, not this.
        train(model, optimizer, 2)
        shutil.copytree(first, moved)
        shutil.rmtree(first)
        restored = module.restore_model(moved, lambda: MLP(d, hidden, nnx.Rngs(seed + 1)))
        if restored is model:
            return {"error": "restore_model returned the very model object that was saved, not a new one"}
        if not isinstance(restored, nnx.Module):
            return {"error": f"restore_model returned {type(restored).__name__}, not an nnx.Module"}
        return {
            "saved": saved,
            "restored": nnx.to_pure_dict(nnx.state(restored)),
            "saved_out": saved_out,
            "restored_out": restored(jnp.asarray(x)),
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _case(rng):
    n, d = int(rng.integers(4, 12)), int(rng.integers(3, 10))
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = rng.integers(0, 2, size=n).astype(np.float32)
    return x, y, int(rng.integers(4, 33))


def _roundtrip(learner, rng, seed):
    x, y, hidden = _case(rng)
    got = learner.probe(probe_roundtrip, x, y, hidden, seed)
    if "error" in got:
        fail(got["error"])
    return x, hidden, got


def test_restored_model_is_the_saved_one(learner, rng, seed):
    x, hidden, got = _roundtrip(learner, rng, seed)
    assert_tree_close(
        got["restored"], got["saved"],
        what=f"parameters of the restored MLP {x.shape[1]}->{hidden}->1 (saved, directory moved, restored)",
        rtol=0, atol=0,
    )
    assert_close(got["restored_out"], got["saved_out"], what=f"restored_model(x {x.shape}) against the saved model", rtol=0, atol=0)


def test_reference_round_trip_agrees(learner, reference, rng, seed):
    # The learner's saved state has the structure the reference saves: nothing dropped, nothing extra.
    x, y, hidden = _case(rng)
    got = learner.probe(probe_roundtrip, x, y, hidden, seed)
    want = reference.probe(probe_roundtrip, x, y, hidden, seed)
    if "error" in got:
        fail(got["error"])
    assert_equal(sorted(got["restored"]), sorted(want["restored"]), what="the layers of the restored model")
    assert_tree_close(got["restored"], want["restored"], what="the restored state", rtol=0, atol=0)
