"""Checks for data_parallel_step: replicated state, sharded batch, same training as one device.

Runs with 4 forced CPU devices; the reference runs in its own child with the same setting.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_equal, assert_tree_close, fail

TIMEOUT = 120
CHILD_ENV = {"XLA_FLAGS": "--xla_force_host_platform_device_count=4"}


def probe_training(module, xs, ys, hidden, seed):
    import jax
    import optax
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d, h, rngs):
            self.l1 = nnx.Linear(d, h, rngs=rngs)
            self.l2 = nnx.Linear(h, 1, rngs=rngs)

        def __call__(self, v):
            return self.l2(jax.nn.relu(self.l1(v)))

    n = len(jax.devices())
    mesh = jax.make_mesh((n,), ("data",))
    model = MLP(xs.shape[-1], hidden, nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
    module.replicate(model, optimizer, mesh)
    leaves = jax.tree.leaves(nnx.state((model, optimizer)))
    not_replicated = sum(
        1 for a in leaves
        if not isinstance(a, jax.Array) or len(a.sharding.device_set) != n or not a.sharding.is_fully_replicated
    )
    losses = [float(module.data_parallel_step(model, optimizer, xs[i], ys[i], mesh)) for i in range(len(xs))]
    return {
        "n_devices": n,
        "not_replicated": not_replicated,
        "n_arrays": len(leaves),
        "losses": losses,
        "params": nnx.to_pure_dict(nnx.state(model, nnx.Param)),
        "step": int(optimizer.step[...]),
    }


def _case(rng):
    steps, rows, d = int(rng.integers(2, 4)), 4 * int(rng.integers(1, 4)), int(rng.integers(3, 10))
    xs = rng.standard_normal((steps, rows, d)).astype(np.float32)
    ys = rng.integers(0, 2, size=(steps, rows)).astype(np.float32)
    return xs, ys, int(rng.integers(4, 17))


def _both(learner, reference, rng, seed):
    xs, ys, hidden = _case(rng)
    got = learner.probe(probe_training, xs, ys, hidden, seed)
    want = reference.probe(probe_training, xs, ys, hidden, seed)
    if got["n_devices"] != 4:
        fail(f"the check expected 4 forced CPU devices but your code saw {got['n_devices']}.")
    return xs, got, want


def test_replicate_puts_every_array_on_every_device(learner, reference, rng, seed):
    _, got, _ = _both(learner, reference, rng, seed)
    if got["not_replicated"]:
        fail(
            f"after replicate(model, optimizer, mesh), {got['not_replicated']} of the {got['n_arrays']} arrays "
            "of the model and optimizer are not fully replicated on all 4 devices "
            "(use NamedSharding(mesh, PartitionSpec()) for all of them)."
        )


def test_training_matches_one_device(learner, reference, rng, seed):
    xs, got, want = _both(learner, reference, rng, seed)
    what = f"{len(xs)} data-parallel steps on batches of {xs.shape[1:]}"
    assert_close(np.array(got["losses"]), np.array(want["losses"]), what=f"{what}: losses", rtol=1e-5, atol=1e-6)
    assert_equal(got["step"], want["step"], what=f"{what}: optimizer.step")
    assert_tree_close(got["params"], want["params"], what=f"{what}: parameters", rtol=1e-5, atol=1e-6)
