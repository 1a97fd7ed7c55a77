"""Checks for shard_batch: a 1-D "data" mesh, a batch split by rows, and a sharded forward pass.

Runs with 4 forced CPU devices; the reference runs in its own child with the same setting.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_equal, fail

TIMEOUT = 90
CHILD_ENV = {"XLA_FLAGS": "--xla_force_host_platform_device_count=4"}


def probe_shard(module, x, hidden, seed):
    import jax
    import jax.numpy as jnp
    import numpy as np
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d, h, rngs):
            self.l1 = nnx.Linear(d, h, rngs=rngs)
            self.l2 = nnx.Linear(h, 1, rngs=rngs)

        def __call__(self, v):
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
    }


def _case(rng):
    rows = 4 * int(rng.integers(1, 5))
    x = rng.standard_normal((rows, int(rng.integers(2, 8)))).astype(np.float32)
    return x, int(rng.integers(4, 17))


def _both(learner, reference, rng, seed):
    x, hidden = _case(rng)
    got = learner.probe(probe_shard, x, hidden, seed)
    if "error" in got:
        fail(got["error"])
    want = reference.probe(probe_shard, x, hidden, seed)
    if got["n_devices"] != 4:
        fail(f"the check expected 4 forced CPU devices but your code saw {got['n_devices']}.")
    return x, got, want


def test_mesh_spans_all_devices_on_a_data_axis(learner, reference, rng, seed):
    _, got, want = _both(learner, reference, rng, seed)
    assert_equal(got["mesh_shape"], want["mesh_shape"], what="data_mesh().shape (axis name -> size)")


def test_batch_is_split_by_rows(learner, reference, rng, seed):
    x, got, want = _both(learner, reference, rng, seed)
    what = f"shard_batch(x {x.shape}, mesh)"
    assert_equal(got["devices"], want["devices"], what=f"{what}: the devices holding shards")
    assert_equal(got["shard_shapes"], want["shard_shapes"], what=f"{what}: shape of each device's shard")
    assert_equal(got["shard_rows"], want["shard_rows"], what=f"{what}: first row held by each device")
    assert_close(got["value"], x, what=f"{what}: the values (sharding must not change them)", rtol=0, atol=0)


def test_sharded_forward_matches_one_device(learner, reference, rng, seed):
    x, got, want = _both(learner, reference, rng, seed)
    if not got["out_is_numpy"]:
        fail("forward_sharded must return a NumPy array on the host (np.asarray or jax.device_get).")
    assert_close(got["out"], want["out"], what=f"forward_sharded(model, x {x.shape}, mesh)", rtol=1e-5, atol=1e-6)
