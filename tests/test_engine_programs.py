"""Programs as evidence: lowered modules are read on the trusted side, hostile text included."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

import numpy as np

from course.engine.programs import ProgramError, parse, run, sharding_of, single_device

# Lowered on a 4-device CPU mesh (XLA_FLAGS=--xla_force_host_platform_device_count=4):
# jax.jit(lambda x, w: (x * 2) @ w, in_shardings=(P("data"), P()), out_shardings=P("data")).
SHARDED = """module @jit__lambda attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<3x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<8x2xf32> {jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) {
    %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<8x3xf32>
    %1 = stablehlo.multiply %arg0, %0 : tensor<8x3xf32>
    %2 = stablehlo.dot_general %1, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x3xf32>, tensor<3x2xf32>) -> tensor<8x2xf32>
    return %2 : tensor<8x2xf32>
  }
}
"""

# The same mesh, per-device code: jax.jit(jax.shard_map(lambda x, w: ((x * 2) @ w,
# jax.lax.psum(x.sum(0), "data")), in_specs=(P("data"), P()), out_specs=(P("data"), P()))).
MANUAL = """module @jit_local attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["data"=4]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}]}}
  func.func public @main(%arg0: tensor<8x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg1: tensor<3x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<8x2xf32> {jax.result_info = "result[0]", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, tensor<3xf32> {jax.result_info = "result[1]", sdy.sharding = #sdy.sharding<@mesh, [{}]>}) {
    %0:2 = sdy.manual_computation(%arg0, %arg1) in_shardings=[<@mesh, [{"data"}, {}]>, <@mesh, [{}, {}]>] out_shardings=[<@mesh, [{"data"}, {}]>, <@mesh, [{}]>] manual_axes={"data"} (%arg2: tensor<2x3xf32>, %arg3: tensor<3x2xf32>) {
      %cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>
      %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
      %2 = stablehlo.multiply %arg2, %1 : tensor<2x3xf32>
      %3 = stablehlo.dot_general %2, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
      %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
      %4 = stablehlo.reduce(%arg2 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
      %5 = "stablehlo.all_reduce"(%4) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
      ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):
        %6 = stablehlo.add %arg4, %arg5 : tensor<f32>
        stablehlo.return %6 : tensor<f32>
      }) : (tensor<3xf32>) -> tensor<3xf32>
      sdy.return %3, %5 : tensor<2x2xf32>, tensor<3xf32>
    } : (tensor<8x3xf32>, tensor<3x2xf32>) -> (tensor<8x2xf32>, tensor<3xf32>)
    return %0#0, %0#1 : tensor<8x2xf32>, tensor<3xf32>
  }
}
"""


def _lower(fn, *shapes):
    return jax.jit(fn).lower(*(jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes)).as_text()


def _scanned(xs, w):
    return jax.lax.scan(lambda c, x: (c + jnp.tanh(x @ w).sum(), None), 0.0, xs)[0]


def _unrolled(xs, w):
    total = 0.0
    for i in range(xs.shape[0]):
        total = total + jnp.tanh(xs[i] @ w).sum()
    return total


def test_a_scan_is_one_loop_and_an_unrolled_python_loop_is_none():
    scanned = parse(_lower(_scanned, (6, 3, 4), (4, 2)))
    unrolled = parse(_lower(_unrolled, (6, 3, 4), (4, 2)))
    assert scanned.loops == 1
    assert unrolled.loops == 0
    assert unrolled.count("dot_general") == 6
    assert scanned.count("dot_general") == 1
    assert unrolled.size > scanned.size


def test_entry_signature_shapes_and_dtypes():
    program = parse(jax.jit(lambda x, n: (x * n).astype(jnp.float16)).lower(
        jax.ShapeDtypeStruct((5, 7), jnp.float32), jax.ShapeDtypeStruct((), jnp.int32)).as_text())
    assert [(a.shape, a.dtype) for a in program.args] == [((5, 7), "float32"), ((), "int32")]
    assert [(r.shape, r.dtype) for r in program.results] == [((5, 7), "float16")]
    assert program.args[0].sharding is None


def test_shardings_of_arguments_and_results():
    program = parse(SHARDED)
    assert program.meshes == {"mesh": {"data": 4}}
    assert program.num_partitions == 4
    assert [a.sharding for a in program.args] == [(("data",), ()), ((), ())]
    assert program.args[0].sharded_axes == ("data",)
    assert program.args[1].sharded_axes == ()
    assert program.results[0].sharding == (("data",), ())
    assert program.results[0].shape == (8, 2)


def test_gspmd_sharding_strings_are_read_without_axis_names():
    text = SHARDED.replace('{sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}',
                           '{mhlo.sharding = "{devices=[4,1]<=[4]}"}', 1)
    assert parse(text, verify=False).args[0].sharding == (("*4",), ())


def test_a_signature_edited_to_claim_other_shapes_does_not_verify():
    text = _lower(_unrolled, (2, 3, 4), (4, 2))
    assert parse(text).takes((2, 3, 4))
    forged = text.replace("%arg0: tensor<2x3x4xf32>", "%arg0: tensor<8x3x4xf32>", 1)
    assert forged != text
    assert parse(forged, verify=False).takes((8, 3, 4))  # the scan alone would believe it
    with pytest.raises(ProgramError, match="does not verify"):
        parse(forged)


@pytest.mark.parametrize("bad", [
    None, 42, b"module {}", "", "hello", "module @m {\n  func.func private @f() {\n  }\n}",
    "module @m { func.func public @main(%arg0: tensor<3xf32> ",
    "\udcff module \x00 func.func public @main(",
])
def test_text_that_is_not_a_program_is_a_clear_error(bad):
    with pytest.raises(ProgramError):
        parse(bad)


def test_hostile_text_inside_a_valid_module_parses_without_crashing():
    text = SHARDED.replace('"result"', '"\udcff\x1b[2J\\"}), -> ((("')
    program = parse(text, verify=False)
    assert program.args[0].sharding == (("data",), ())
    with pytest.raises(ProgramError):
        parse(text)


def test_oversized_text_is_refused():
    with pytest.raises(ProgramError, match="characters"):
        parse("module " + "x" * 20_000_001)


def test_sharding_evidence_is_validated():
    assert sharding_of({"spec": [["data"], []]}) == (("data",), ())
    for bad in (None, {"spec": "data"}, {"spec": [[1]]}, {"spec": ["data"]}, {}):
        assert sharding_of(bad) is None


def _batched(xs, w):
    return jnp.tanh(xs @ w).sum()


def test_a_program_runs_on_the_trusted_side_on_inputs_chosen_afterwards():
    text = _lower(_batched, (6, 3, 4), (4, 2))
    rng = np.random.default_rng(0)
    xs, w = rng.standard_normal((6, 3, 4)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32)
    (out,) = run(text, xs, w)
    np.testing.assert_allclose(out, np.tanh(xs @ w).sum(), rtol=1e-5)


def test_a_loop_runs_and_one_that_never_ends_is_a_program_error(monkeypatch):
    xs = np.random.default_rng(0).standard_normal((6, 3, 4)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((4, 2)).astype(np.float32)
    (out,) = run(_lower(_scanned, (6, 3, 4), (4, 2)), xs, w)  # a correct scan or fori_loop is not refused
    np.testing.assert_allclose(out, np.tanh(xs @ w).sum(), rtol=1e-5)
    # A float32 counter stops growing at 2**24 (c + 1 == c there) and never turns negative: the
    # loop never ends. An int32 counter wraps after 2**31 steps, which an idle CPU runs in
    # under 5 s: that loop ended, and the test failed, whenever the machine was not busy.
    endless = jax.jit(lambda x: jax.lax.while_loop(lambda c: c[0] >= 0, lambda c: (c[0] + 1.0, c[1] * 1.5),
                                                   (jnp.float32(0), x))[1]
                      ).lower(jax.ShapeDtypeStruct((3,), jnp.float32)).as_text()
    monkeypatch.setattr("course.engine.programs.LOOP_SECONDS", 5.0)
    # Run here, it would hang the checking process; in the evaluator, it is ended.
    with pytest.raises(ProgramError, match="took longer than 5 s to run"):
        run(endless, np.ones(3, np.float32))
    (out,) = run(_lower(_scanned, (6, 3, 4), (4, 2)), xs, w)  # a fresh evaluator runs the next program
    np.testing.assert_allclose(out, np.tanh(xs @ w).sum(), rtol=1e-5)


def test_run_refuses_wrong_inputs_custom_calls_and_sharded_programs():
    text = _lower(_batched, (6, 3, 4), (4, 2))
    with pytest.raises(ProgramError, match="its inputs are"):
        run(text, np.zeros((6, 3, 4), np.float32), np.zeros((4, 2), np.float64))
    with pytest.raises(ProgramError, match="its inputs are"):
        run(text, np.zeros((6, 3, 4), np.float32))
    custom = jax.jit(lambda a: jax.lax.linalg.cholesky(a @ a.T + 4 * jnp.eye(3))).lower(
        jax.ShapeDtypeStruct((3, 3), jnp.float32)).as_text()
    assert "custom_call" in custom  # the CPU Cholesky calls into LAPACK
    with pytest.raises(ProgramError, match="not run here"):
        run(custom, np.eye(3, dtype=np.float32))
    with pytest.raises(ProgramError, match="only programs under"):
        run(text + " " * 1_000_001, np.zeros((6, 3, 4), np.float32), np.zeros((4, 2), np.float32))
    with pytest.raises(ProgramError, match="single-device"):
        run(SHARDED, np.zeros((8, 3), np.float32), np.zeros((3, 2), np.float32))


@pytest.mark.parametrize("fn", [jnp.square, jnp.arcsinh, jax.scipy.special.erf,
                                lambda x: jax.nn.gelu(x, approximate=False), lambda x: jax.lax.top_k(x, 2)[0]],
                         ids=["square", "arcsinh", "erf", "exact_gelu", "top_k"])
def test_chlo_maths_runs(fn):
    x = np.array([0.3, -0.7, 0.1, 0.9], np.float32)
    text = jax.jit(fn).lower(jax.ShapeDtypeStruct((4,), jnp.float32)).as_text()
    assert "chlo." in text
    (out,) = run(text, x)
    np.testing.assert_allclose(out, np.asarray(fn(jnp.asarray(x))), rtol=1e-5)


def test_ops_counted_by_mlir_cannot_hide_on_one_line():
    text = _lower(_unrolled, (3, 3, 4), (4, 2))
    squeezed = text.replace("\n    %", " %")  # several ops on one line: still one module to MLIR
    assert parse(squeezed).count("dot_general") == 3


def test_shardings_are_read_by_mlir_so_no_string_passes_for_one():
    # A location or a result's name may hold any text: only MLIR's attributes count.
    hostile = SHARDED.replace('%arg1: tensor<3x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}',
                              '%arg1: tensor<3x2xf32> loc("sdy.sharding = #sdy.sharding<@mesh, [{\\"data\\"}, {}]>")')
    hostile = hostile.replace('jax.result_info = "result", sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>',
                              'jax.result_info = "sdy.sharding = #sdy.sharding<@mesh, [{\\"data\\"}, {}]>"')
    program = parse(hostile)
    assert program.args[0].sharding == (("data",), ()) and program.args[0].mesh == "mesh"
    assert program.args[1].sharding is None
    assert program.results[0].sharding is None
    assert program.mesh_of(program.args[0]) == {"data": 4}


def test_modules_written_with_locations_parse_and_constraints_are_listed():
    text = ('#loc1 = loc("x")\n' + SHARDED.replace(
        "%1 = stablehlo.multiply %arg0, %0 : tensor<8x3xf32>",
        "%m = stablehlo.multiply %arg0, %0 : tensor<8x3xf32> loc(#loc1)\n"
        '    %1 = sdy.sharding_constraint %m <@mesh, [{}, {}]> : tensor<8x3xf32>'))
    program = parse(text)
    assert [(c.shape, c.sharding, c.mesh) for c in program.constraints] == [((8, 3), ((), ()), "mesh")]


def test_a_mesh_program_runs_here_as_its_global_computation():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((8, 3)).astype(np.float32), rng.standard_normal((3, 2)).astype(np.float32)
    constrained = SHARDED.replace(
        "%2 = stablehlo.dot_general %1,",
        '%c = sdy.sharding_constraint %1 <@mesh, [{}, {}]> : tensor<8x3xf32>\n    %2 = stablehlo.dot_general %c,')
    for text in (SHARDED, constrained):
        (out,) = run(text, x, w, global_view=True)
        np.testing.assert_allclose(out, (x * 2) @ w, rtol=1e-5)
    single = single_device(constrained)
    assert "sdy" not in single and "num_partitions = 1" in single
    manual = SHARDED.replace("%2 = stablehlo.dot_general %1,",
                             '%p = sdy.propagation_barrier %1 allowed_direction=NONE : tensor<8x3xf32>\n'
                             "    %2 = stablehlo.dot_general %p,")
    with pytest.raises(ProgramError, match="not run here: sdy.propagation_barrier"):
        run(manual, x, w, global_view=True)


def test_per_device_code_runs_on_as_many_devices_as_its_mesh_collectives_included():
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((8, 3)).astype(np.float32), rng.standard_normal((3, 2)).astype(np.float32)
    rows, sums = run(MANUAL, x, w, global_view=True)
    np.testing.assert_allclose(rows, (x * 2) @ w, rtol=1e-5)
    np.testing.assert_allclose(sums, x.sum(0), rtol=1e-5)  # the all_reduce over the 4 devices
    # Each operand's layout on entering the per-device code is listed with the constraints.
    assert [(c.shape, c.sharding) for c in parse(MANUAL).constraints] == [((8, 3), (("data",), ())), ((3, 2), ((), ()))]
    with pytest.raises(ProgramError, match="inputs are"):
        run(MANUAL, x[:4], w, global_view=True)
    with pytest.raises(ProgramError, match="not run here"):
        run(MANUAL, x, w)  # without global_view, a mesh program is not run


@pytest.mark.parametrize("edit, error", [
    (("%cst = stablehlo.constant dense<2.000000e+00> : tensor<f32>",
      '%cst = stablehlo.custom_call @cb() {has_side_effect = true} : () -> tensor<f32>'),
     "not run here: stablehlo.custom_call"),
    (('"data"=4]>', '"data"=16]>'), "verify|partitioned|devices"),
])
def test_per_device_code_is_refused_with_foreign_calls_or_a_mesh_it_does_not_fill(edit, error):
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((8, 3)).astype(np.float32), rng.standard_normal((3, 2)).astype(np.float32)
    with pytest.raises(ProgramError, match=error):
        run(MANUAL.replace(*edit), x, w, global_view=True)
