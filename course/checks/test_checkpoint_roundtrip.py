"""Checks for checkpoint_roundtrip: models saved to disk, restored bit for bit from the files alone.

The learner's `save_model` saves three models whose state this process drew
(weights and batch-norm statistics); their files come back here as bytes.
Then the learner's process is ended, and in a new one, which never saw the
states, two of those checkpoints (in an order chosen here) are written back as
bytes into new directories and `restore_model` must rebuild each one from the
files alone. The restored state is compared here, bit for bit, with the state
this process drew.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_equal, assert_tree_close, fail
from course.engine.words import _

TIMEOUT = 120
FRESH_LEARNERS = 1
N_SAVED = 3
MAX_FILES = 500
MAX_BYTES = 64 << 20
# (d, hidden, rows of x) from a small fixed set so that compiled programs are reused between runs: within
# each member the three differ (no kernel is square, x is not square); the weights stay drawn per run.
SIZES = [(5, 24, 7), (8, 13, 10)]


def probe_save(module, states, d, hidden):
    import os

    import jax
    import numpy as np
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d, h, rngs):
            self.l1 = nnx.Linear(d, h, rngs=rngs)
            self.bn = nnx.BatchNorm(h, use_running_average=True, rngs=rngs)
            self.l2 = nnx.Linear(h, 1, rngs=rngs)

        def __call__(self, v):
            return self.l2(jax.nn.relu(self.bn(self.l1(v))))

    saved = []
    for i, pure in enumerate(states):
        # Built abstractly (no random initialisation to compile and run: every value is replaced).
        model = nnx.eval_shape(lambda: MLP(d, hidden, nnx.Rngs(i)))
        state = nnx.state(model)
        nnx.replace_by_pure_dict(state, pure)
        nnx.update(model, state)
        path = os.path.abspath(os.path.join("saved", f"run{i}", "ckpt"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        module.save_model(model, path)
        files = {}
        if os.path.isdir(path):
            for root, _, names in os.walk(path):
                for name in names:
                    full = os.path.join(root, name)
                    with open(full, "rb") as f:
                        files[os.path.relpath(full, path)] = np.frombuffer(f.read(), np.uint8)
        saved.append(files)
    return saved


def probe_restore(module, files, d, hidden, x, label):
    import os

    import jax
    import jax.numpy as jnp
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d, h, rngs):
            self.l1 = nnx.Linear(d, h, rngs=rngs)
            self.bn = nnx.BatchNorm(h, use_running_average=True, rngs=rngs)
            self.l2 = nnx.Linear(h, 1, rngs=rngs)

        def __call__(self, v):
            return self.l2(jax.nn.relu(self.bn(self.l1(v))))

    path = os.path.abspath(os.path.join("moved", f"copy-{label}", "ckpt"))
    for rel, data in files.items():
        full = os.path.join(path, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data.tobytes())
    restored = module.restore_model(path, lambda: MLP(d, hidden, nnx.Rngs(int(label, 16) % 100_000)))
    if not isinstance(restored, nnx.Module):
        return {"error": "not_module", "type": type(restored).__name__}
    return {"state": nnx.to_pure_dict(nnx.state(restored)), "out": restored(jnp.asarray(x))}


def _state(rng, d, hidden):
    f32 = np.float32
    return {
        "l1": {"kernel": rng.standard_normal((d, hidden)).astype(f32), "bias": rng.standard_normal(hidden).astype(f32)},
        "bn": {"scale": rng.uniform(0.5, 2, hidden).astype(f32), "bias": rng.standard_normal(hidden).astype(f32),
               "mean": rng.standard_normal(hidden).astype(f32), "var": rng.uniform(0.5, 2, hidden).astype(f32)},
        "l2": {"kernel": rng.standard_normal((hidden, 1)).astype(f32), "bias": rng.standard_normal(1).astype(f32)},
    }


def _forward(s, x):
    h = x.astype(np.float64) @ s["l1"]["kernel"] + s["l1"]["bias"]
    h = (h - s["bn"]["mean"]) / np.sqrt(s["bn"]["var"].astype(np.float64) + 1e-5) * s["bn"]["scale"] + s["bn"]["bias"]
    return np.maximum(h, 0) @ s["l2"]["kernel"] + s["l2"]["bias"]


def _raw_bytes(state):
    return sum(np.asarray(v).nbytes for layer in state.values() for v in layer.values())


def _files(saved, i, call, need):
    files = saved[i] if isinstance(saved, list) and len(saved) == N_SAVED else None
    if not isinstance(files, dict) or not files:
        fail(_("{call} left nothing in the directory `path`: create it and write the model's state there.")
             .format(call=call))
    total = 0
    for rel, data in files.items():
        parts = rel.split("/")
        if rel.startswith("/") or ".." in parts or not isinstance(data, np.ndarray) or data.dtype != np.uint8:
            fail(_("{call} wrote a file the check cannot copy ({rel!r:.80}).").format(call=call, rel=rel))
        total += data.size
    if len(files) > MAX_FILES or total > MAX_BYTES:
        fail(_("{call} wrote {files} files, {total} bytes: far more than a small model needs.")
             .format(call=call, files=len(files), total=total))
    # Random float32 values hardly compress: a checkpoint holding them takes about their size.
    if total < need // 2:
        fail(_("{call} wrote {total} bytes, but the model's variables alone take {need} bytes: the checkpoint "
               "must hold every variable's values, so that the model can be restored from the files alone.")
             .format(call=call, total=total, need=need))
    return files


def test_restored_models_are_the_saved_ones(learner, rng, seed):
    d, hidden, rows = SIZES[int(rng.integers(len(SIZES)))]
    states = [_state(rng, d, hidden) for _ in range(N_SAVED)]
    saved = learner.probe(probe_save, states, d, hidden)
    what = _("MLP {d}->{hidden}->1 with batch norm").format(d=d, hidden=hidden)
    files = [_files(saved, i, _("save_model(model, path) ({what}, model {i})").format(what=what, i=i),
                    _raw_bytes(states[i]))
             for i in range(N_SAVED)]
    for i in range(1, N_SAVED):
        if sorted(files[i]) == sorted(files[0]) and all(np.array_equal(v, files[0][k]) for k, v in files[i].items()):
            fail(_("save_model wrote the same bytes for two models with different weights ({what}): "
                   "save the state of the model you are given.").format(what=what))
    x = rng.standard_normal((rows, d)).astype(np.float32)
    # Restored in a process that never held the states: a model kept in memory (or
    # stashed beside the checkpoint's padding) is gone; only the files come across.
    learner.restart()
    for i in rng.permutation(N_SAVED)[:2]:
        i = int(i)
        # The copy's folder is named by a token, not a number: nothing says which of the
        # saved models this is, except the files themselves.
        label = f"{int(rng.integers(1 << 31)):08x}"
        got = learner.probe(probe_restore, files[i], d, hidden, x, label)
        call = _("restore_model(path, make_model) on a copy of the directory model {i} ({what}) was saved to").format(
            i=i, what=what)
        if "error" in got:
            fail(_("{call}: restore_model returned {type}, not an nnx.Module.").format(call=call, type=got.get("type")))
        state = got["state"]
        if not isinstance(state, dict):
            fail(_("{call}: the restored model's state is {type}.").format(call=call, type=type(state).__name__))
        assert_equal(sorted(state), sorted(states[i]), what=_("{call}: the layers of the restored model").format(call=call))
        for layer in states[i]:
            if not isinstance(state[layer], dict):
                fail(_("{call}: layer {layer!r} of the restored model is {type}.").format(
                    call=call, layer=layer, type=type(state[layer]).__name__))
            assert_equal(sorted(state[layer]), sorted(states[i][layer]),
                         what=_("{call}: the variables of layer {layer!r} (batch-norm statistics included)").format(
                             call=call, layer=layer))
        assert_tree_close(state, states[i], what=_("{call}: every variable, bit for bit").format(call=call),
                          rtol=0, atol=0)
        assert_tree_close(got["out"], _forward(states[i], x).astype(np.float32),
                          what=f"{call}: restored_model(x {x.shape})", rtol=1e-4, atol=1e-4)
