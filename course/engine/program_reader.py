"""The evaluator's reading of a program: MLIR's parser and verifier, the cost walk, XLA.

Only the evaluator process (`course.engine.evaluator.serve`) imports this
module: it hands every request it decodes to `evaluate` and sends back what
that returns, plain data, or the `ProgramError` it raises (a template and its
fields, `program_types`). Nothing here forwards anything or knows which
process it is in: the trusted side (`course.engine.programs`) never reads a
program through MLIR or XLA, so it never imports this.

The text is hostile even here, after the trusted side bounded it: every
request bounds it again (`program_types.bounded_text`), MLIR verifies it
before anything walks it, and a program is run only if it holds the
operations in _RUNNABLE, tensors and results within `program_types.bounded_sizes`
and an estimated cost under the request's budget.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import Counter

from course.engine.program_cost import CostWalk, cast as _cast
from course.engine.program_text import MLIR_DTYPES, entry_point, mhlo_spec, tensor_shapes
from course.engine.program_types import (
    DOES_NOT_VERIFY, DOES_NOT_VERIFY_BECAUSE, INPUTS_DIFFER, MAX_COST, MESHES, NESTED_TOO_DEEPLY, NO_DEVICES,
    NO_SUCH_REQUEST, NOT_A_PROGRAM, NOT_RUN_HERE, PARTITIONS, REQUEST_UNREADABLE, SINGLE_DEVICE_ONLY, SURROGATES,
    UNDEFINED_CALL, UNSHARDED_DOES_NOT_VERIFY, XLA_CANNOT_COMPILE, XLA_CANNOT_RUN, Cost,
    OverBudget, Program, ProgramError, Value, bounded_sizes, bounded_text, bounded_to_run,
    op_names,
)


def evaluate(request: object) -> object:
    """One request the trusted side sent (`programs._forward`), answered as plain data."""
    if type(request) is not dict or type(request.get("op")) is not str:
        raise ProgramError(REQUEST_UNREADABLE)
    op, text = request["op"], request.get("text")
    if op == "parse":
        return _program_to_plain(parse(text))
    if op == "matrix_products":
        return list(matrix_products(text))
    if op == "single_device":
        return single_device(text)
    if op == "ops_with_types":
        return [[name, operands, results] for name, operands, results in ops_with_types(text, request.get("names"))]
    if op == "cost":
        c = cost(text)
        return [float(c.flops), float(c.bytes), bool(c.bounded)]
    if op in ("compile", "run"):
        args, budget = request.get("args"), request.get("budget")
        if type(args) is not list or type(budget) is not list or len(budget) != 2:
            raise ProgramError(REQUEST_UNREADABLE)
        from course.engine.wire import to_plain

        outs = run(text, *args, global_view=bool(request.get("global_view")), budget=Cost(*map(float, budget)),
                   compile_only=op == "compile")
        return [to_plain(o) for o in outs]
    raise ProgramError(NO_SUCH_REQUEST, op=repr(op[:40]))


def _value_to_plain(v: Value) -> list:
    spec = None if v.sharding is None else [list(dim) for dim in v.sharding]
    return [list(v.shape), v.dtype, spec, v.raw_sharding, v.mesh]


def _program_to_plain(p: Program) -> dict:
    return {"ops": dict(p.ops), "args": [_value_to_plain(v) for v in p.args],
            "results": [_value_to_plain(v) for v in p.results],
            "meshes": {k: dict(v) for k, v in p.meshes.items()}, "num_partitions": p.num_partitions,
            "constraints": [_value_to_plain(v) for v in p.constraints]}


# -- reading a program through MLIR ----------------------------------------------------


def parse(text: object) -> Program:
    """A lowered module read by MLIR once it parsed and verified: its ops, `@main`'s
    signature, meshes and shardings (see `programs.parse`)."""
    text, _main = entry_point(text)
    program = Program(text=text)
    # From MLIR's own reading: nothing hides on a shared line, and no string (a
    # location, a result's name) can pass for a type or a sharding.
    _read_verified(text, program)
    return program


def _verified_module(text: str):
    """(context, module) from MLIR's parser and verifier, or a ProgramError."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise ProgramError(SURROGATES) from None
    from jax._src.interpreters import mlir
    from jax._src.lib.mlir import ir

    context = mlir.make_ir_context()
    try:
        with context:
            module = ir.Module.parse(text)
            ok = module.operation.verify()
    except Exception as e:  # noqa: BLE001 - MLIR reports every malformation as its own error type
        first = str(e).strip().splitlines()
        detail = next((line.strip() for line in first if "error" in line), first[0] if first else type(e).__name__)
        raise ProgramError(DOES_NOT_VERIFY_BECAUSE, detail=detail[:300]) from None
    if not ok:
        raise ProgramError(DOES_NOT_VERIFY)
    return context, module


def _walk(operation, counts: Counter) -> Counter:
    for region in operation.regions:
        for block in region.blocks:
            for op in block.operations:
                counts[op.operation.name] += 1
                _walk(op.operation, counts)
    return counts


def ops_with_types(text: object, names: object) -> list[tuple[str, list[str], list[str]]]:
    """(op name, operand types, result types) of every operation named in `names`, in every
    function of the verified program, in program order."""
    text = bounded_text(text)
    wanted = op_names(names)
    context, module = _verified_module(text)
    found: list[tuple[str, list[str], list[str]]] = []
    with context:
        def walk(operation):
            for region in operation.regions:
                for block in region.blocks:
                    for op in block.operations:
                        if op.operation.name in wanted:
                            found.append((op.operation.name, [str(v.type) for v in op.operation.operands],
                                          [str(r.type) for r in op.operation.results]))
                        walk(op.operation)
        walk(module.operation)
    return found


def matrix_products(text: object) -> tuple[int, int]:
    """(all, in_loops) matrix products of the verified program (see `programs.matrix_products`)."""
    text = bounded_text(text)
    from jax._src.lib.mlir import ir

    context, module = _verified_module(text)
    with context:
        funcs = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in module.body.operations
                 if op.operation.name == "func.func"}
        memo: dict = {}

        def walk(operation, in_loop, stack):
            total = inside = 0
            for index, region in enumerate(operation.regions):
                body = in_loop or (operation.name == "stablehlo.while" and index == 1)
                for block in region.blocks:
                    for op in block.operations:
                        name = op.operation.name
                        if name in ("stablehlo.dot_general", "stablehlo.dot"):
                            total, inside = total + 1, inside + body
                        elif name == "func.call":
                            t, i = function(ir.FlatSymbolRefAttr(op.attributes["callee"]).value, stack)
                            total, inside = total + t, inside + (t if body else i)
                        t, i = walk(op.operation, body, stack)
                        total, inside = total + t, inside + i
            return total, inside

        def function(name, stack):
            if name not in memo:
                if name in stack or name not in funcs:
                    raise ProgramError(UNDEFINED_CALL, name=name)
                memo[name] = walk(funcs[name].operation, False, stack | {name})
            return memo[name]

        try:
            return function("main", frozenset())
        except RecursionError:
            raise ProgramError(NESTED_TOO_DEEPLY) from None


def _read_verified(text: str, program: Program) -> None:
    """Fill `program` from the verified module: ops, meshes, `@main`'s signature and shardings."""
    from jax._src.lib.mlir import ir

    context, module = _verified_module(text)
    with context:
        program.ops = _walk(module.operation, Counter())
        attrs = module.operation.attributes
        if "mhlo.num_partitions" in attrs:
            program.num_partitions = ir.IntegerAttr(attrs["mhlo.num_partitions"]).value
        main = None
        for op in module.body.operations:
            name = op.operation.name
            if name == "sdy.mesh":
                program.meshes[ir.StringAttr(op.attributes["sym_name"]).value] = _mesh_axes(op.attributes["mesh"])
            elif name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
                main = op
        if main is None:
            raise ProgramError(NOT_A_PROGRAM)
        kind = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        for types, key, out in ((kind.inputs, "arg_attrs", program.args),
                                (kind.results, "res_attrs", program.results)):
            dicts = list(ir.ArrayAttr(main.attributes[key])) if key in main.attributes else []
            for i, t in enumerate(types):
                out.append(_typed_value(t, ir.DictAttr(dicts[i]) if i < len(dicts) else None))
        _collect_constraints(module.operation, program.constraints)


def _mesh_axes(attr) -> dict[str, int]:
    from jax._src.lib.mlir.dialects import sdy

    return {sdy.MeshAxisAttr(a).name: int(sdy.MeshAxisAttr(a).size) for a in sdy.MeshAttr(attr).axes}


def _tensor(t) -> tuple[tuple[int, ...], str]:
    from jax._src.lib.mlir import ir

    ranked = _cast(ir.RankedTensorType, t)
    if ranked is None:
        return (), "unknown"
    element = str(ranked.element_type)
    return tuple(int(d) for d in ranked.shape), MLIR_DTYPES.get(element, element)


def _layout(attr) -> tuple[tuple[tuple[str, ...], ...], str]:
    """(axes per dimension, mesh name) of an `#sdy.sharding` attribute."""
    from jax._src.lib.mlir import ir
    from jax._src.lib.mlir.dialects import sdy

    sharding = sdy.TensorShardingAttr(attr)
    ref = sharding.mesh_or_ref
    symbol = _cast(ir.FlatSymbolRefAttr, ref)
    mesh = symbol.value if symbol is not None else ""
    spec = tuple(tuple(sdy.AxisRefAttr(a).name for a in sdy.DimensionShardingAttr(d).axes)
                 for d in sharding.dimension_shardings)
    return spec, mesh


def _typed_value(t, attrs) -> Value:
    from jax._src.lib.mlir import ir

    shape, dtype = _tensor(t)
    if attrs is not None and "sdy.sharding" in attrs:
        spec, mesh = _layout(attrs["sdy.sharding"])
        return Value(shape, dtype, spec, str(attrs["sdy.sharding"]), mesh)
    raw = _cast(ir.StringAttr, attrs["mhlo.sharding"]) if attrs is not None and "mhlo.sharding" in attrs else None
    if raw is not None:
        return Value(shape, dtype, mhlo_spec(raw.value, len(shape)), raw.value)
    return Value(shape, dtype)


_RELAYOUTS = ("sdy.sharding_constraint", "sdy.reshard")


def _collect_constraints(operation, out: list[Value]) -> None:
    for region in operation.regions:
        for block in region.blocks:
            for op in block.operations:
                if op.operation.name in _RELAYOUTS and "sharding" in op.attributes:
                    shape, dtype = _tensor(op.results[0].type)
                    spec, mesh = _layout(op.attributes["sharding"])
                    out.append(Value(shape, dtype, spec, str(op.attributes["sharding"]), mesh))
                elif op.operation.name == "sdy.manual_computation" and "in_shardings" in op.attributes:
                    # shard_map: each operand enters the per-device code laid out as its in_sharding says.
                    from jax._src.lib.mlir.dialects import sdy

                    layouts = sdy.TensorShardingPerValueAttr(op.attributes["in_shardings"]).shardings
                    for operand, attr in zip(op.operands, layouts):
                        shape, dtype = _tensor(operand.type)
                        spec, mesh = _layout(attr)
                        out.append(Value(shape, dtype, spec, str(attr), mesh))
                _collect_constraints(op.operation, out)


# -- running a program (in the evaluator) --------------------------------------------

# What a program may hold to be run: pure, bounded computation. No custom calls into
# native code or Python, no host transfers, no collectives (but per-device code's, see
# _PER_DEVICE). Every run, loop or not, is under the evaluator's time limit (programs.LOOP_SECONDS).
_RUNNABLE = frozenset(f"stablehlo.{name}" for name in """
abs add and atan2 bitcast_convert broadcast broadcast_in_dim cbrt ceil clamp compare complex
concatenate constant convert cosine count_leading_zeros divide dot dot_general dynamic_slice
dynamic_update_slice exponential exponential_minus_one floor gather get_tuple_element imag iota
is_finite log log_plus_one logistic maximum minimum multiply negate not or pad popcnt power real
reduce reduce_precision remainder reshape return reverse round_nearest_afz round_nearest_even rsqrt
scatter select shift_left shift_right_arithmetic shift_right_logical sign sine slice sort sqrt
subtract tan tanh transpose tuple xor optimization_barrier select_and_scatter reduce_window
convolution case if
""".split()) | {"builtin.module", "func.func", "func.return", "func.call"} | {
    # What jax.numpy and jax.scipy lower to CHLO: pure element-wise maths (jnp.square,
    # exact gelu's erfc, optax.global_norm's square, arcsinh, ...) and top_k.
    f"chlo.{name}" for name in """
    acos acosh asin asinh atan atanh bessel_i1e conj cosh digamma erf erf_inv erfc is_inf is_neg_inf
    is_pos_inf lgamma next_after polygamma sinh square tan top_k zeta
    """.split()}
_LOOPS = frozenset({"stablehlo.while"})

_COMPILED: dict[str, object] = {}
_READ: dict[str, tuple] = {}  # text hash -> (Program, Cost), in the evaluator
_COMPILED_LOCK = threading.Lock()


def run(text: object, *args, global_view: bool = False, budget: Cost | None = None,
        compile_only: bool = False) -> list:
    """Run a program on `args` (see `programs.run`): verified, within the budget, only _RUNNABLE
    operations, arguments exactly as `@main` takes them. With `compile_only`, every check and the
    compilation, then no run and no outputs: the trusted side times compiling apart from running."""
    text = bounded_to_run(text)
    budget = MAX_COST if budget is None else budget
    if global_view and "sdy.manual_computation" in text:
        program = _partitioned(text)
        arrays = _checked_inputs(program, args)
        _within_budget(text, budget)
        if compile_only:
            _mesh_compiled(program, program.num_partitions)
            return []
        return _run_on_mesh(program, arrays, program.num_partitions)
    if global_view:
        text = single_device(text)
    key = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    with _COMPILED_LOCK:
        known = _READ.get(key)
    if known is None:  # a check runs one program on several inputs: read and cost it once
        known = _runnable(text), cost(text)
        with _COMPILED_LOCK:
            if len(_READ) > 256:
                _READ.clear()
            _READ[key] = known
    program, spent = known
    arrays = _checked_inputs(program, args)
    if spent.flops > budget.flops or spent.bytes > budget.bytes:
        raise OverBudget(spent, budget)
    if compile_only:
        _compiled(program.text)
        return []
    return _execute(program, arrays)


def _runnable(text: object) -> "Program":
    program = parse(text)
    refused = sorted(op for op in program.ops if op not in _RUNNABLE and op not in _LOOPS)
    if any(not op.startswith("sdy.") for op in refused):  # what it computes, before where it would run
        raise ProgramError(NOT_RUN_HERE, ops=", ".join(refused[:5]))
    if program.num_partitions != 1 or program.meshes or refused:
        raise ProgramError(SINGLE_DEVICE_ONLY)
    return program


def _execute(program: "Program", arrays: list) -> list:
    import jax
    import numpy as np

    executable, device = _compiled(program.text)
    outs = executable.execute_sharded([jax.device_put(a, device) for a in arrays])
    return [np.asarray(r[0]) for r in outs.disassemble_into_single_device_arrays()]


# What per-device code may add to _RUNNABLE: shard_map's region and the collectives
# between devices, all of which XLA's CPU backend runs among forced host devices.
_PER_DEVICE = frozenset({"sdy.mesh", "sdy.manual_computation", "sdy.return", "sdy.sharding_constraint",
                         "sdy.reshard"}) | {f"stablehlo.{name}" for name in (
                             "all_reduce all_gather reduce_scatter all_to_all collective_permute "
                             "collective_broadcast partition_id replica_id").split()}
MAX_PARTITIONS = 8


def _partitioned(text: str) -> "Program":
    """The checks of `_runnable` for a program with per-device code, on its one mesh."""
    program = parse(text)
    refused = sorted(op for op in program.ops if op not in _RUNNABLE and op not in _LOOPS
                     and op not in _PER_DEVICE)
    if refused:
        raise ProgramError(NOT_RUN_HERE, ops=", ".join(refused[:5]))
    if len(program.meshes) != 1:
        raise ProgramError(MESHES, meshes=len(program.meshes))
    devices = math.prod(next(iter(program.meshes.values())).values())
    if not 1 <= devices <= MAX_PARTITIONS or program.num_partitions != devices:
        raise ProgramError(PARTITIONS, partitions=program.num_partitions, devices=devices, most=MAX_PARTITIONS)
    return program


def _checked_inputs(program: "Program", args: tuple) -> list:
    import numpy as np

    bounded_sizes(tensor_shapes(program.text), program.results)  # the results as MLIR read them
    arrays = [np.asarray(a) for a in args]
    want = [(a.shape, a.dtype) for a in program.args]
    got = [(tuple(a.shape), str(a.dtype)) for a in arrays]
    if want != got:
        raise ProgramError(INPUTS_DIFFER, want=_show(want), got=_show(got))
    return arrays


def _run_on_mesh(program: "Program", arrays: list, devices: int) -> list:
    """In the evaluator (started with MAX_PARTITIONS host devices): compile `program` (read
    by `_partitioned`) for `devices` CPU devices (`_mesh_compiled`) and run it."""
    import jax
    import numpy as np
    from jax._src.sharding_impls import GSPMDSharding

    executable, chosen = _mesh_compiled(program, devices)
    try:
        placed = [jax.device_put(a, GSPMDSharding(chosen, s))
                  for a, s in zip(arrays, executable.get_parameter_shardings())]
        outs = executable.execute_sharded(placed).disassemble_into_single_device_arrays()
    except Exception as e:  # noqa: BLE001 - XLA raises its own types
        detail = str(e).strip().splitlines()
        raise ProgramError(XLA_CANNOT_RUN, devices=devices, detail=detail[0][:200] if detail else type(e).__name__) from None
    return [np.asarray(jax.make_array_from_single_device_arrays(r.shape, GSPMDSharding(chosen, s), shards))
            for r, s, shards in zip(program.results, executable.get_output_shardings(), outs)]


def _mesh_compiled(program: "Program", devices: int):
    """(executable, devices) of a program over a mesh, compiled once per text and mesh size."""
    import numpy as np
    from jax._src import compiler, xla_bridge
    from jax._src.interpreters import mlir
    from jax._src.lib import xla_client as xc

    key = f"{devices}:" + hashlib.sha256(program.text.encode("utf-8")).hexdigest()
    with _COMPILED_LOCK:
        if key in _COMPILED:
            return _COMPILED[key]
    backend = xla_bridge.get_backend("cpu")
    if len(backend.devices()) < devices:
        raise ProgramError(NO_DEVICES, devices=devices)
    chosen = xc.DeviceList(tuple(backend.devices()[:devices]))
    context, module = _verified_module(program.text)
    try:
        with context:
            bytecode = mlir.module_to_bytecode(module)
        # The calls jax.jit makes for a program over a mesh (pinned with JAX, as in `_compiled`).
        options = compiler.get_compile_options(
            num_replicas=1, num_partitions=devices,
            device_assignment=np.array(backend.devices()[:devices]).reshape(1, devices))
        options.executable_build_options.use_shardy_partitioner = True
        executable = backend.compile_and_load(bytecode, chosen, options)
    except Exception as e:  # noqa: BLE001 - XLA raises its own types
        detail = str(e).strip().splitlines()
        raise ProgramError(XLA_CANNOT_RUN, devices=devices, detail=detail[0][:200] if detail else type(e).__name__) from None
    with _COMPILED_LOCK:
        if len(_COMPILED) > 256:
            _COMPILED.clear()
        _COMPILED[key] = (executable, chosen)
    return executable, chosen


# Where a value lives, never what it is: what `single_device` drops.
_LAYOUT_ATTRS = ("sdy.sharding", "mhlo.sharding", "sdy.sharding_rule")


def single_device(text: object) -> str:
    """The computation of a program lowered for a mesh, as a single-device module printed by
    MLIR without locations (see `programs.single_device`)."""
    text = bounded_to_run(text)
    parse(text)  # the checks of an ordinary program first (type, size, MLIR's verifier)
    from jax._src.lib.mlir import ir

    context, module = _verified_module(text)
    with context:
        relayouts, meshes, others = [], [], []

        def visit(operation) -> None:
            for region in operation.regions:
                for block in region.blocks:
                    for op in block.operations:
                        name = op.operation.name
                        if name in _RELAYOUTS:
                            relayouts.append(op)
                        elif name == "sdy.mesh":
                            meshes.append(op)
                        elif name.startswith("sdy."):
                            others.append(name)
                        visit(op.operation)

        visit(module.operation)
        if others:
            raise ProgramError(NOT_RUN_HERE, ops=", ".join(sorted(set(others))[:5]))
        for op in relayouts:  # a change of layout is the identity on values
            op.results[0].replace_all_uses_with(op.operands[0])
            op.operation.erase()
        for op in meshes:
            op.operation.erase()
        for op in module.body.operations:
            if op.operation.name != "func.func":
                continue
            for key in ("arg_attrs", "res_attrs"):
                if key in op.attributes:
                    kept = [ir.DictAttr.get({a.name: a.attr for a in ir.DictAttr(d) if a.name not in _LAYOUT_ATTRS})
                            for d in ir.ArrayAttr(op.attributes[key])]
                    op.attributes[key] = ir.ArrayAttr.get(kept)
        _drop_layouts(module.operation)
        attrs = module.operation.attributes
        for key in ("mhlo.num_partitions", "mhlo.num_replicas"):
            if key in attrs:
                attrs[key] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1)
        if not module.operation.verify():
            raise ProgramError(UNSHARDED_DOES_NOT_VERIFY)
        return module.operation.get_asm(enable_debug_info=False)


def _drop_layouts(operation) -> None:
    for region in operation.regions:
        for block in region.blocks:
            for op in block.operations:
                for key in _LAYOUT_ATTRS:
                    if key in op.attributes:
                        del op.attributes[key]
                _drop_layouts(op.operation)


def _compiled(text: str):
    key = hashlib.sha256(text.encode("utf-8")).hexdigest()
    with _COMPILED_LOCK:
        if key in _COMPILED:
            return _COMPILED[key]
    # JAX has no public API that compiles StableHLO text; these are the calls
    # jax.jit itself makes, pinned with the JAX version in constraints.txt.
    from jax._src import compiler, xla_bridge
    from jax._src.interpreters import mlir
    from jax._src.lib import xla_client as xc

    context, module = _verified_module(text)
    backend = xla_bridge.get_backend("cpu")
    device = backend.devices()[0]
    try:
        with context:
            bytecode = mlir.module_to_bytecode(module)
        options = compiler.get_compile_options(num_replicas=1, num_partitions=1)
        executable = backend.compile_and_load(bytecode, xc.DeviceList((device,)), options)
    except Exception as e:  # noqa: BLE001 - XLA raises its own types
        detail = str(e).strip().splitlines()
        raise ProgramError(XLA_CANNOT_COMPILE, detail=detail[0][:200] if detail else type(e).__name__) from None
    with _COMPILED_LOCK:
        if len(_COMPILED) > 256:
            _COMPILED.clear()
        _COMPILED[key] = (executable, device)
    return executable, device


def _show(types: list) -> str:
    return "(" + ", ".join(f"{dtype}{list(shape)}" for shape, dtype in types) + ")"


# -- cost: what running a program would take, estimated before it runs -------------------


def cost(text: object) -> Cost:
    """The estimated cost of running a program (see `Cost`), from MLIR's reading of it."""
    text = bounded_text(text)
    from jax._src.lib.mlir import ir

    context, module = _verified_module(text)
    with context:
        funcs = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in module.body.operations
                 if op.operation.name == "func.func"}
        if "main" not in funcs:
            raise ProgramError(NOT_A_PROGRAM)
        return CostWalk(funcs).function("main", frozenset())


def _within_budget(text: str, budget: Cost) -> None:
    spent = cost(text)
    if spent.flops > budget.flops or spent.bytes > budget.bytes:
        raise OverBudget(spent, budget)


