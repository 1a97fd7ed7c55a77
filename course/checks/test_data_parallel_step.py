"""Checks for data_parallel_step: replicated state, sharded batch, same training as one device.

Runs with 4 forced CPU devices; the reference runs in its own child with the same setting.
Where arrays live is judged here from programs, never from what the learner's
process says about its arrays (`.sharding`, `jax.debug.inspect_array_sharding`
are its own code to patch):
- after `replicate`, a program lowered on every array of the model and the
  optimizer declares each one's layout (`sdy.sharding` of its arguments);
- the step: the programs XLA compiled while `data_parallel_step` ran (JAX
  writes each module it compiles to a folder, `jax_dump_ir_to`) declare how
  the batch enters the step; the step's program is run here, without its
  annotations, from the reference's starting state on a batch the learner's
  process never saw, and must give the model's loss on it.
The annotations are read by MLIR here (`course.engine.programs`). Forging a
verified module that declares the batch split over a 4-device "data" mesh and
computes the step on fresh inputs costs the exercise. Losses, parameters and
the step count after a few steps are compared with the reference's.
"""

from __future__ import annotations

import numpy as np
import pytest

from course.checks.conftest import RUN_PLUGIN
from course.engine.checking import assert_close, assert_equal, assert_tree_close, fail, side_by_side
from course.engine.evidence import bce_with_logits, mlp_forward, read_program
from course.engine.programs import Program, ProgramError, run
from course.engine.words import _

TIMEOUT = 120
CHILD_ENV = {"XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
# (rows, features, hidden) from a small fixed set, so that the programs compiled for
# them are reused from one check to the next; the values (and the number of steps,
# which compiles nothing new) are drawn fresh.
SIZES = [(8, 3, 16), (16, 6, 8)]
MESH = {"data": 4}


def probe_training(module, xs, ys, hidden, seed):
    import os
    import shutil
    import tempfile

    import jax
    import numpy as np
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
    state = jax.tree.leaves(nnx.state((model, optimizer)))
    placement = jax.jit(lambda *a: a).lower(*state).as_text()
    start = {"state": [np.asarray(a) for a in state], "params": nnx.to_pure_dict(nnx.state(model, nnx.Param))}
    folder = tempfile.mkdtemp()
    jax.config.update("jax_dump_ir_to", folder)
    try:
        losses = [float(module.data_parallel_step(model, optimizer, xs[i], ys[i], mesh)) for i in range(len(xs))]
    finally:
        jax.config.update("jax_dump_ir_to", "")
    programs = []
    for name in sorted(os.listdir(folder))[:20]:
        if name.endswith(".mlir"):
            with open(os.path.join(folder, name)) as f:
                programs.append(f.read(2_000_000))
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "n_devices": n,
        "placement": placement,
        "start": start,
        "programs": programs,
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
        fail(_("the check expected 4 forced CPU devices but your code saw {n}.").format(n=got["n_devices"]))
    rng = np.random.default_rng([seed, 1])  # for the step's program, drawn after it
    fresh = (rng.standard_normal(xs.shape[1:]).astype(np.float32),
             rng.integers(0, 2, size=xs.shape[1]).astype(np.float32))
    return xs, fresh, got, want


def test_replicate_puts_every_array_on_every_device(both):
    got = both[2]
    program = read_program(got.get("placement"),
                           what=_("the model and optimizer after replicate(model, optimizer, mesh)"))
    if not program.args:
        fail(_("after replicate(model, optimizer, mesh) the model and optimizer hold no arrays."))
    bad = sum(1 for a in program.args
              if a.sharding is None or a.sharded_axes or program.mesh_of(a) != MESH)
    if bad:
        fail(_("after replicate(model, optimizer, mesh), {bad} of the {n} arrays of the model and "
               "optimizer are not fully replicated on all 4 devices "
               "(use NamedSharding(mesh, PartitionSpec()) for all of them).").format(bad=bad, n=len(program.args)))


def test_the_batch_is_split_over_the_devices(both):
    xs, fresh, got, want = both
    rows, d = xs.shape[1:]
    call = f"data_parallel_step(model, optimizer, x {(rows, d)}, y, mesh)"
    programs = got.get("programs")
    steps = [p for p in (read_program(t, what=call) for t in programs if isinstance(t, str))
             if p.takes((rows, d)) and p.takes((rows,))] if isinstance(programs, list) else []
    if not steps:
        fail(_("{call}: XLA compiled no program that takes the batch x {x} and y {y}. "
               "Run the given train_step on the batch.").format(call=call, x=(rows, d), y=(rows,)))
    for program in steps:
        for a in program.args:
            if (a.shape in ((rows, d), (rows,)) and a.dtype == "float32"
                    and (a.sharding != (("data",),) + ((),) * (len(a.shape) - 1) or program.mesh_of(a) != MESH)):
                laid = (_("on one device") if a.sharding is None or not program.mesh_of(a)
                        else _("whole on every device") if not a.sharded_axes
                        else _("as {sharding} over the mesh {mesh}").format(sharding=a.sharding,
                                                                            mesh=program.mesh_of(a)))
                fail(_("{call}: the compiled step takes its {shape} batch input {laid}; expected each of the 4 "
                       "devices to hold {rows} rows. Shard x and y with "
                       "NamedSharding(mesh, PartitionSpec(\"data\")) before calling train_step.").format(
                    call=call, shape=a.shape, laid=laid, rows=rows // 4))
        for c in program.constraints:
            if len(c.shape) == 2 and c.shape[0] == rows and c.shape[1] != 1 and (
                    c.sharding[0] != ("data",) or program.mesh_of(c) != MESH):
                fail(_("{call}: the compiled step lays a {shape} value of the batch out as {sharding}: every "
                       "device would compute on all the rows. Shard x and y and let train_step run on them as they "
                       "are.").format(call=call, shape=c.shape, sharding=c.sharding))
        _require_the_step(program, want["start"], fresh, call)


def _require_the_step(program: Program, start: dict, fresh: tuple, call: str) -> None:
    """Run the step's program here, from the reference's start, on a batch drawn after it was
    lowered: its loss must be the model's loss on that batch."""
    x, y = fresh
    args = [*start["state"], x, y]
    if [(a.shape, a.dtype) for a in program.args] != [(np.shape(v), str(np.asarray(v).dtype)) for v in args]:
        fail(_("{call}: the compiled step takes {args}, not the model, "
               "the optimizer and the batch: call the given train_step(model, optimizer, x, y).").format(
            call=call, args=[(a.shape, a.dtype) for a in program.args]))
    losses = [i for i, r in enumerate(program.results) if r.shape == () and r.dtype == "float32"]
    if len(losses) != 1:
        fail(_("{call}: the compiled step returns {n} float32 scalars; expected one, the loss.").format(
            call=call, n=len(losses)))
    try:
        outs = run(program.text, *args, global_view=True)
    except ProgramError as e:
        fail(_("{call}: the check cannot run the program XLA compiled for the step: {error}.").format(
            call=call, error=e))
    logits = mlp_forward(start["params"], x, first="l1", second="l2")[:, 0]
    assert_close(outs[losses[0]], np.float32(bce_with_logits(logits, y).mean()),
                 what=_("{call}: the loss of the compiled step, run by the check on a new batch").format(call=call),
                 rtol=1e-4, atol=1e-6)


def test_training_matches_one_device(both):
    xs, got, want = both[0], both[2], both[3]
    what = _("{n} data-parallel steps on batches of {shape}").format(n=len(xs), shape=xs.shape[1:])
    assert_close(np.array(got["losses"]), np.array(want["losses"]), what=_("{what}: losses").format(what=what),
                 rtol=1e-5, atol=1e-6)
    assert_equal(got["step"], want["step"], what=f"{what}: optimizer.step")
    assert_tree_close(got["params"], want["params"], what=_("{what}: parameters").format(what=what),
                      rtol=1e-5, atol=1e-6)
