"""Checks for shard_batch: a 1-D "data" mesh, a batch split by rows, and a sharded forward pass.

Runs with 4 forced CPU devices; the reference runs in its own child with the same setting.
The learner's process reports plain data (shard shapes, device ids, values,
and how XLA laid out the model's input when it compiled the forward pass, from
`jax.debug.inspect_array_sharding`); every judgment is made here.
"""

from __future__ import annotations

import numpy as np
import pytest

from course.checks.conftest import RUN_PLUGIN
from course.engine.checking import assert_close, assert_equal, fail, side_by_side

TIMEOUT = 90
CHILD_ENV = {"XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
# (rows, features, hidden) from a small fixed set, so that the programs compiled for
# them are reused from one check to the next; the values are drawn fresh.
SIZES = [(8, 3, 16), (16, 5, 8)]


def probe_shard(module, x, hidden, seed):
    import jax
    import jax.numpy as jnp
    import numpy as np
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

    mesh = module.data_mesh()
    arr = module.shard_batch(x, mesh)
    if not isinstance(arr, jax.Array):
        return {"error": f"shard_batch returned {type(arr).__name__}, not a jax.Array"}
    shards = sorted(arr.addressable_shards, key=lambda s: s.device.id)
    out = module.forward_sharded(MLP(x.shape[1], hidden, nnx.Rngs(seed)), x, mesh)
    return {
        "n_devices": len(jax.devices()),
        "mesh_shape": {str(k): int(v) for k, v in mesh.shape.items()},
        "shard_shapes": [list(s.data.shape) for s in shards],
        "shard_rows": [int(s.index[0].start or 0) for s in shards],
        "devices": sorted(int(d.id) for d in arr.sharding.device_set),
        "value": np.asarray(arr),
        "out_is_numpy": isinstance(out, np.ndarray),
        "out": np.asarray(out),
        "model_inputs": seen,
    }


def _case(rng):
    rows, d, hidden = SIZES[int(rng.integers(len(SIZES)))]
    return rng.standard_normal((rows, d)).astype(np.float32), hidden


@pytest.fixture(scope="module")
def both(learner, reference, request):
    """The learner's and the reference's evidence, gathered once per check run (each run
    is its own pytest session): the checks below judge different parts of it."""
    seed = request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed
    x, hidden = _case(np.random.default_rng(seed))
    got, want = side_by_side(learner, reference).probe(probe_shard, x, hidden, seed)
    if "error" in got:
        fail(got["error"])
    if got["n_devices"] != 4:
        fail(f"the check expected 4 forced CPU devices but your code saw {got['n_devices']}.")
    return x, got, want


def test_mesh_spans_all_devices_on_a_data_axis(both):
    _, got, want = both
    assert_equal(got["mesh_shape"], want["mesh_shape"], what="data_mesh().shape (axis name -> size)")


def test_batch_is_split_by_rows(both):
    x, got, want = both
    what = f"shard_batch(x {x.shape}, mesh)"
    assert_equal(got["devices"], want["devices"], what=f"{what}: the devices holding shards")
    assert_equal(got["shard_shapes"], want["shard_shapes"], what=f"{what}: shape of each device's shard")
    assert_equal(got["shard_rows"], want["shard_rows"], what=f"{what}: first row held by each device")
    assert_close(got["value"], x, what=f"{what}: the values (sharding must not change them)", rtol=0, atol=0)


def test_sharded_forward_matches_one_device(both):
    x, got, want = both
    if not got["out_is_numpy"]:
        fail("forward_sharded must return a NumPy array on the host (np.asarray or jax.device_get).")
    _require_split_input(got.get("model_inputs"), x.shape, f"forward_sharded(model, x {x.shape}, mesh)")
    assert_close(got["out"], want["out"], what=f"forward_sharded(model, x {x.shape}, mesh)", rtol=1e-5, atol=1e-6)


def _require_split_input(seen, shape, call):
    """The model's input, as compiled, must be split by rows over the 4 devices."""
    want = [[shape[0] // 4, *shape[1:]], 4]
    if not isinstance(seen, list) or not seen:
        fail(f"{call}: the model was never run on the batch. Run it on the sharded batch under nnx.jit.")
    for record in seen:
        if record != want:
            fail(f"{call}: the model ran on an input laid out as shards of {record[0] if isinstance(record, list) else record} "
                 f"on {record[1] if isinstance(record, list) else '?'} device(s); expected each of the 4 devices to "
                 f"hold {want[0]} rows. Shard the batch (shard_batch) and run the model on the sharded array.")
