"""Checks for shard_batch: a 1-D "data" mesh, a batch split by rows, and a sharded forward pass.

Runs with 4 forced CPU devices; the reference runs in its own child with the same setting.
Where an array lives is judged here from programs, never from what the
learner's process says about its arrays (`addressable_shards`, `.sharding`,
`jax.debug.inspect_array_sharding` are all its own code to patch):
- the mesh: a program lowered on a value placed on `data_mesh()` declares
  that mesh (`sdy.mesh`), axis names and sizes;
- the batch: a program lowered on the array `shard_batch` returns declares
  its layout (`sdy.sharding` of the argument);
- the forward pass: the programs XLA compiled while `forward_sharded` ran
  (JAX writes each module it compiles to a folder, `jax_dump_ir_to`) declare
  how the batch enters the model; the one that computes the model is run here,
  without its annotations, on a batch the learner's process never saw, and
  must give the MLP's outputs. A forward pass written with shard_map is
  per-device code: it is run here on 4 CPU devices, and its operands must
  enter it split by rows, with nothing moved between devices.
The annotations are read by MLIR here (`course.engine.programs`). A text is
the learner's process's to forge, but a verified module that declares the
batch split by rows over a 4-device "data" mesh and computes the model on
fresh inputs is a sharded forward pass: forging one costs the exercise.
"""

from __future__ import annotations

import numpy as np
import pytest

from course.checks.conftest import RUN_PLUGIN
from course.engine.checking import assert_close, assert_equal, fail, side_by_side
from course.engine.evidence import mlp_forward, read_program
from course.engine.programs import Program, ProgramError, run
from course.engine.words import N_, _, probe_said

TIMEOUT = 90
CHILD_ENV = {"XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
# What probe_shard reports: [key, fields], worded here in the learner's language.
PROBE_ERRORS = {"not_array": N_("shard_batch returned {type}, not a jax.Array")}
# (rows, features, hidden) from a small fixed set, so that the programs compiled for
# them are reused from one check to the next; the values are drawn fresh.
SIZES = [(8, 3, 16), (16, 5, 8)]
MESH = {"data": 4}
COLLECTIVES = {f"stablehlo.{name}" for name in
               "all_gather all_reduce all_to_all collective_permute collective_broadcast reduce_scatter".split()}


def probe_shard(module, x, hidden, seed):
    import os
    import shutil
    import tempfile

    import jax
    import numpy as np
    from flax import nnx
    from jax.sharding import NamedSharding, PartitionSpec

    class MLP(nnx.Module):
        def __init__(self, d, h, rngs):
            self.l1 = nnx.Linear(d, h, rngs=rngs)
            self.l2 = nnx.Linear(h, 1, rngs=rngs)

        def __call__(self, v):
            return self.l2(jax.nn.relu(self.l1(v)))

    mesh = module.data_mesh()
    on_mesh = jax.ShapeDtypeStruct((2,), np.float32, sharding=NamedSharding(mesh, PartitionSpec()))
    mesh_program = jax.jit(lambda a: a).lower(on_mesh).as_text()
    arr = module.shard_batch(x, mesh)
    if not isinstance(arr, jax.Array):
        return {"error": ["not_array", {"type": type(arr).__name__}]}
    layout = jax.jit(lambda a: a).lower(arr).as_text()
    # Which device holds which rows: the process's own account, for the message only.
    shards = sorted(([int(s.device.id), int(s.index[0].start or 0)] for s in arr.addressable_shards))
    model = MLP(x.shape[1], hidden, nnx.Rngs(seed))
    folder = tempfile.mkdtemp()
    jax.config.update("jax_dump_ir_to", folder)
    try:
        out = module.forward_sharded(model, x, mesh)
    finally:
        jax.config.update("jax_dump_ir_to", "")
    programs = []
    for name in sorted(os.listdir(folder))[:20]:
        if name.endswith(".mlir"):
            with open(os.path.join(folder, name)) as f:
                programs.append(f.read(2_000_000))
    shutil.rmtree(folder, ignore_errors=True)
    return {
        "n_devices": len(jax.devices()),
        "mesh_program": mesh_program,
        "layout": layout,
        "shards": shards,
        "value": np.asarray(arr),
        "out_is_numpy": isinstance(out, np.ndarray),
        "out": np.asarray(out),
        "programs": programs,
        "params": nnx.to_pure_dict(nnx.state(model, nnx.Param)),
    }


def _case(rng):
    rows, d, hidden = SIZES[int(rng.integers(len(SIZES)))]
    return rng.standard_normal((rows, d)).astype(np.float32), hidden


@pytest.fixture(scope="module")
def both(learner, reference, request):
    """The learner's and the reference's evidence, gathered once per check run (each run
    is its own pytest session): the checks below judge different parts of it."""
    seed = request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed
    rng = np.random.default_rng(seed)
    x, hidden = _case(rng)
    got, want = side_by_side(learner, reference).probe(probe_shard, x, hidden, seed)
    if "error" in got:
        fail(probe_said(got["error"], PROBE_ERRORS) or str(got["error"])[:300])
    if got["n_devices"] != 4:
        fail(_("the check expected 4 forced CPU devices but your code saw {n_devices}.").format(
            n_devices=got['n_devices']))
    fresh = rng.standard_normal(x.shape).astype(np.float32)  # for the forward program, drawn after it
    return x, fresh, got, want


def _mesh_of_value(program: Program, value, what: str) -> dict:
    mesh = program.mesh_of(value)
    if not mesh:  # none, or JAX's empty mesh for an array committed to one device
        fail(_("{what} lives on no device mesh (it is on one device): place it on the mesh with "
               "NamedSharding(mesh, PartitionSpec(\"data\")).").format(what=what))
    return mesh


def test_mesh_spans_all_devices_on_a_data_axis(both):
    __, __, got, want = both
    program = read_program(got["mesh_program"], what=_("a value placed on data_mesh()"))
    meshes = list(program.meshes.values())
    assert_equal(meshes[0] if len(meshes) == 1 else meshes, MESH,
                 what=_("data_mesh(), as a program lowered on it declares it (axis name -> size)"))
    assert_equal(list(read_program(want["mesh_program"], what=_("the reference mesh")).meshes.values()), [MESH],
                 what=_("the reference mesh"))


def test_batch_is_split_by_rows(both):
    x, __, got, want = both
    what = f"shard_batch(x {x.shape}, mesh)"
    program = read_program(got["layout"], what=what)
    if len(program.args) != 1 or (program.args[0].shape, program.args[0].dtype) != (x.shape, "float32"):
        fail(_("{what}: a program lowered on the result takes {inputs}; expected one float32 array of shape "
               "{shape}.").format(
            
            what=what, inputs=[(a.shape, a.dtype) for a in program.args], shape=x.shape))
    arg = program.args[0]
    mesh = _mesh_of_value(program, arg, _("{what}: the result").format(what=what))
    assert_equal(mesh, MESH, what=_("{what}: the mesh the result is placed on (axis name -> size)").format(what=what))
    expected = read_program(want["layout"], what=_("the reference layout")).args[0].sharding
    if arg.sharding != expected:
        layout = (_("whole on every device") if arg.sharding and not arg.sharded_axes
                  else _("split as {sharding}").format(sharding=arg.sharding))
        fail(_("{what}: the result is {layout} (mesh axes per dimension); expected axis 0 split over \"data\" and "
               "the other axes whole, {expected}: shard the rows with NamedSharding(mesh, "
               "PartitionSpec(\"data\")).").format(
                   
                   what=what, layout=layout, expected=expected))
    assert_equal(got["shards"], want["shards"], what=_("{what}: [device id, first row] of each shard").format(
        what=what))
    assert_close(got["value"], x, what=_("{what}: the values (sharding must not change them)").format(
        what=what), rtol=0, atol=0)


def test_sharded_forward_matches_one_device(both):
    x, fresh, got, want = both
    call = f"forward_sharded(model, x {x.shape}, mesh)"
    if not got["out_is_numpy"]:
        fail(_("forward_sharded must return a NumPy array on the host (np.asarray or jax.device_get)."))
    assert_close(got["out"], want["out"], what=call, rtol=1e-5, atol=1e-6)
    programs = got.get("programs")
    forward = [p for p in (read_program(t, what=call) for t in programs if isinstance(t, str))
               if p.takes(x.shape) and any(r.shape == (x.shape[0], 1) for r in p.results)] \
        if isinstance(programs, list) else []
    if not forward:
        fail(_("{call}: XLA compiled no program that runs the model on a batch of shape {shape}. Shard the batch "
               "(shard_batch) and run the model on the sharded array under nnx.jit.").format(call=call, shape=x.shape))
    for program in forward:
        _require_split_input(program, x.shape, call)
        _require_the_model(program, want["params"], fresh, call)


def _require_split_input(program: Program, shape, call: str) -> None:
    """The batch enters the compiled model split by rows over the 4 devices, and stays split."""
    batch = [a for a in program.args if a.shape == tuple(shape) and a.dtype == "float32"]
    rows = (("data",),) + ((),) * (len(shape) - 1)
    for arg in batch:
        if arg.sharding != rows or program.mesh_of(arg) != MESH:
            laid = (_("on one device") if arg.sharding is None or not program.mesh_of(arg)
                    else _("whole on every device") if not arg.sharded_axes
                    else _("as {sharding} over the mesh {mesh}").format(sharding=arg.sharding,
                                                                         mesh=program.mesh_of(arg)))
            fail(_("{call}: the compiled model takes the batch {laid}; expected each of the 4 devices to hold "
                   "{rows} rows. Shard the batch (shard_batch) and run the model on the sharded array.").format(
                       call=call, laid=laid, rows=shape[0] // 4))
    for c in program.constraints:
        if c.shape[:1] == (shape[0],) and len(c.shape) == 2 and c.shape[1] != 1 and (
                (c.sharding or ((),))[0] != ("data",) or program.mesh_of(c) != MESH):
            fail(_("{call}: the compiled model lays a {shape} value of the batch out as {sharding} before the "
                   "model is done with it: every device would compute on all the rows. Run the model on the "
                   "sharded batch as it is.").format(call=call, shape=c.shape, sharding=c.sharding))
    # Per-device code (shard_map) names its communication: a forward pass on split rows needs none.
    moved = sorted(op.split(".", 1)[1] for op in program.ops if op in COLLECTIVES)
    if moved:
        fail(_("{call}: the compiled model moves values between the devices ({moves}): it gathers rows "
               "another device holds, so devices compute on rows that are not theirs. Each device needs only its "
               "own rows: run the model on the sharded batch as it is.").format(call=call, moves=', '.join(moved)))


def _require_the_model(program: Program, params: dict, x: np.ndarray, call: str) -> None:
    """Run the forward program here on a batch drawn after it was lowered: it must compute the MLP."""
    values = [np.asarray(params[layer][name], np.float32) for layer in ("l1", "l2") for name in ("kernel", "bias")]
    by_shape = {(v.shape, "float32"): v for v in [*values, x]}
    args = []
    for a in program.args:
        if (a.shape, a.dtype) not in by_shape:
            fail(_("{call}: the compiled model takes an input {dtype}{shape} that is neither the batch nor "
                   "a parameter of the model: pass the model and the sharded batch to the jitted function.").format(
                       call=call, dtype=a.dtype, shape=list(a.shape)))
        args.append(by_shape[(a.shape, a.dtype)])
    try:
        outs = run(program.text, *args, global_view=True)
    except ProgramError as e:
        fail(_("{call}: the check cannot run the program XLA compiled for the model: {e}.").format(call=call, e=e))
    rows = [o for o, r in zip(outs, program.results) if r.shape == (x.shape[0], 1)]
    want = mlp_forward(params, x, first="l1", second="l2").astype(np.float32)
    assert_close(rows[-1], want, what=_("{call}: the compiled model, run by the check on a new batch").format(
        call=call),
                 rtol=1e-4, atol=1e-5)
