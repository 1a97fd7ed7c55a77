"""Checks for data_parallel_step: replicated state, sharded batch, same training as one device.

Runs with 4 forced CPU devices; the reference runs in its own child with the same setting.
The learner's process reports plain data (each array's device count and
whether it is replicated, how XLA laid out the model's input when it compiled
the step, from `jax.debug.inspect_array_sharding`, losses and parameters);
every judgment is made here.
"""

from __future__ import annotations

import numpy as np
import pytest

from course.checks.conftest import RUN_PLUGIN
from course.engine.checking import assert_close, assert_equal, assert_tree_close, fail, side_by_side

TIMEOUT = 120
CHILD_ENV = {"XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
# (rows, features, hidden) from a small fixed set, so that the programs compiled for
# them are reused from one check to the next; the values (and the number of steps,
# which compiles nothing new) are drawn fresh.
SIZES = [(8, 3, 16), (16, 6, 8)]


def probe_training(module, xs, ys, hidden, seed):
    import jax
    import optax
    from flax import nnx

    seen = []

    class MLP(nnx.Module):
        def __init__(self, d, h, rngs):
            self.l1 = nnx.Linear(d, h, rngs=rngs)
            self.l2 = nnx.Linear(h, 1, rngs=rngs)

        def __call__(self, v):
            # How XLA laid out the model's input: per device, the shard it holds.
            shape = tuple(v.shape)
            jax.debug.inspect_array_sharding(
                v, callback=lambda sh: seen.append([list(sh.shard_shape(shape)), len(sh.device_set)]))
            return self.l2(jax.nn.relu(self.l1(v)))

    n = len(jax.devices())
    mesh = jax.make_mesh((n,), ("data",))
    model = MLP(xs.shape[-1], hidden, nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
    module.replicate(model, optimizer, mesh)
    leaves = jax.tree.leaves(nnx.state((model, optimizer)))
    placement = [[len(a.sharding.device_set), bool(a.sharding.is_fully_replicated)]
                 if isinstance(a, jax.Array) else [0, False] for a in leaves]
    losses = [float(module.data_parallel_step(model, optimizer, xs[i], ys[i], mesh)) for i in range(len(xs))]
    return {
        "n_devices": n,
        "placement": placement,
        "model_inputs": seen,
        "losses": losses,
        "params": nnx.to_pure_dict(nnx.state(model, nnx.Param)),
        "step": int(optimizer.step[...]),
    }


def _case(rng):
    rows, d, hidden = SIZES[int(rng.integers(len(SIZES)))]
    steps = int(rng.choice([2, 3]))
    xs = rng.standard_normal((steps, rows, d)).astype(np.float32)
    ys = rng.integers(0, 2, size=(steps, rows)).astype(np.float32)
    return xs, ys, hidden


@pytest.fixture(scope="module")
def both(learner, reference, request):
    """The learner's and the reference's evidence, gathered once per check run (each run
    is its own pytest session): the checks below judge different parts of it."""
    seed = request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed
    xs, ys, hidden = _case(np.random.default_rng(seed))
    got, want = side_by_side(learner, reference).probe(probe_training, xs, ys, hidden, seed)
    if got["n_devices"] != 4:
        fail(f"the check expected 4 forced CPU devices but your code saw {got['n_devices']}.")
    return xs, got, want


def test_replicate_puts_every_array_on_every_device(both):
    _, got, _ = both
    placement = got.get("placement")
    if not isinstance(placement, list) or not placement:
        fail("after replicate(model, optimizer, mesh) the model and optimizer hold no arrays.")
    bad = sum(1 for p in placement if p != [4, True])
    if bad:
        fail(f"after replicate(model, optimizer, mesh), {bad} of the {len(placement)} arrays of the model and "
             "optimizer are not fully replicated on all 4 devices "
             "(use NamedSharding(mesh, PartitionSpec()) for all of them).")


def test_the_batch_is_split_over_the_devices(both):
    xs, got, _ = both
    rows, d = xs.shape[1:]
    seen = got.get("model_inputs")
    call = f"data_parallel_step(model, optimizer, x {(rows, d)}, y, mesh)"
    if not isinstance(seen, list) or not seen:
        fail(f"{call}: the model was never compiled on the batch. Run the given train_step.")
    want = [[rows // 4, d], 4]
    for record in seen:
        if record != want:
            fail(f"{call}: the step compiled the model for an input held as {record!r:.60} (shard shape, devices); "
                 f"expected each of the 4 devices to hold {rows // 4} rows. Shard x and y with "
                 "NamedSharding(mesh, PartitionSpec(\"data\")) before calling train_step.")


def test_training_matches_one_device(both):
    xs, got, want = both
    what = f"{len(xs)} data-parallel steps on batches of {xs.shape[1:]}"
    assert_close(np.array(got["losses"]), np.array(want["losses"]), what=f"{what}: losses", rtol=1e-5, atol=1e-6)
    assert_equal(got["step"], want["step"], what=f"{what}: optimizer.step")
    assert_tree_close(got["params"], want["params"], what=f"{what}: parameters", rtol=1e-5, atol=1e-6)
