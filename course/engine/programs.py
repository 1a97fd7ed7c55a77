"""Programs as evidence: the learner's function, lowered in the child, read by the evaluator.

Some things a check must judge live in the *program*, not in its outputs: is
the epoch one `while` loop or thirty unrolled steps, is the batch sharded over
the mesh, which shapes was the step compiled for. Measuring them inside the
learner's process (counting `make_jaxpr` equations, reading `.sharding`,
recording traces) is worthless: learner code ran there first and can patch
anything. Instead the probe lowers the learner's function on shapes the check
chose and returns the StableHLO text; this module has the evaluator
(`course.engine.evaluator`) parse it, never the learner's process. The text is the program XLA would compile for those inputs:
forging one that says "loop" or "sharded" while computing the right numbers
costs as much as writing the loop or the sharding, and the check compares
outputs separately.

Probe-side recipe (probes cannot import `course`, so it is written out inline):

    import jax
    specs = [jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in shapes]
    text = jax.jit(fn).lower(*specs).as_text()   # or fn.lower(...) for a jitted fn
    return {"program": text}

`jax.jit(fn)` over a learner function that is already jitted nests it; what the
program does is the same either way. For a sharded input, pass arrays placed
with `jax.device_put(x, sharding)` instead of `ShapeDtypeStruct`s (or give the
struct a `sharding=`), and the lowered module carries the shardings.

Everything here treats the text as hostile, and no trusted process ever hands
it to a parser or a compiler. The trusted side (`parse`, `run`,
`matrix_products`, `single_device`, `cost`, called by the checks) only bounds
the text in plain Python (`bounded_text`: its size and the nesting depth of its
brackets, the two things that overflow MLIR's parser) and forwards it, with the
check's inputs, to the evaluator (`course.engine.evaluator`): a disposable
process, in the check sandbox where one works, that parses it with MLIR's
parser and verifier (the same ones XLA runs before compiling), estimates what
running it costs, compiles and runs it under a time limit. Whatever goes wrong
there (a malformed module, a program over its budget, a crash, a timeout) is a
`ProgramError` whose message a check can show. The verifier is what makes
edited text useless: a module whose signature was rewritten to claim other
shapes than its body computes does not verify.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections import Counter
from dataclasses import dataclass, field

from course.engine.words import N_, fill, plain_fields, shown_field

# What the trusted side lets through to the evaluator (`bounded_text`): lowered programs of
# the course's exercises are tens of kilobytes; a program is run only under MAX_RUN_CHARS.
MAX_PROGRAM_CHARS = 2_000_000
MAX_RUN_CHARS = 1_000_000
# Brackets ( { [ < nested deeper than this: MLIR's parser recurses once per level (about
# 20,000 nested `case` regions overflow its stack); JAX's programs nest a few dozen deep.
MAX_NESTING = 256
# True in the evaluator process (course.engine.evaluator), the only one that parses and runs.
HERE = False
# Programs this process has sent the evaluator (to read, cost or run): `jaxlings dev check` reads it
# around each test, to tell whether a check that says it judges from programs had any read or run.
REQUESTS_DONE = 0

# `%0:4 = stablehlo.while(...)`, `stablehlo.return ...`, `"stablehlo.foo"(...)`, `func.call @f(...)`.
_OP = re.compile(r'^\s*(?:%[\w#:.,% ]+=\s*)?"?([a-z][a-z0-9_]*\.[a-z][a-z0-9_.]*)"?[\s(<{]')
_MAIN = re.compile(r"func\.func\s+public\s+@main\(")
# Attribute aliases may come before the module (`#loc1 = loc("x")`, as JAX writes modules with locations).
_ALIASES = re.compile(r"^\s*#[\w.$-]+\s*=[^\n]*\n", re.M)
_MESH = re.compile(r"sdy\.mesh\s+@([\w.$-]+)\s*=\s*<\[([^\]]*)\]")
_MESH_AXIS = re.compile(r'"([^"]+)"\s*=\s*(\d+)')
_TENSOR = re.compile(r"tensor<([^>]*)>")
_SDY = re.compile(r"sdy\.sharding\s*=\s*#sdy\.sharding<@([\w.$-]+)\s*,\s*\[(.*?)\](?:\s*,[^>]*)?>")
_MHLO = re.compile(r'mhlo\.sharding\s*=\s*"([^"]*)"')
_DIM = re.compile(r"\{([^{}]*)\}")
_AXIS_NAME = re.compile(r'"([^"]+)"')

MLIR_DTYPES = {
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
    "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "ui8": "uint8", "ui16": "uint16", "ui32": "uint32", "ui64": "uint64",
    "complex<f32>": "complex64", "complex<f64>": "complex128",
}


# What a ProgramError says: English templates, marked for the catalog and put into the
# learner's language where they are shown (`ProgramError.__str__`). The evaluator sends
# one of these and its fields; the trusted side builds the text (`ProgramError.from_reply`).

NOT_TEXT = N_("expected the lowered program as text, got {type}")
TOO_LONG = N_("the lowered program is {size} characters, more than the {limit} a program may have to be "
              "read by the check")
TOO_DEEP = N_("the lowered program nests its brackets more than {depth} deep")
NOT_A_PROGRAM = N_("the text is not a lowered JAX program (no `module` with a public `@main`)")
SURROGATES = N_("the lowered program is not valid text (it holds lone surrogates)")
DOES_NOT_VERIFY_BECAUSE = N_("the lowered program does not verify: {detail}")
DOES_NOT_VERIFY = N_("the lowered program does not verify")
NOT_OP_NAMES = N_("ops_with_types takes a collection of operation names")
REPLY_UNREADABLE = N_("the evaluator sent a reply the check cannot read")
UNDEFINED_CALL = N_("it calls @{name}, which it does not define (or which calls itself)")
NESTED_TOO_DEEPLY = N_("its operations are nested too deeply to be read")
TOO_LONG_TO_RUN = N_("the lowered program is {size} characters; only programs under {limit} are run by the check")
NOT_RUN_HERE = N_("the lowered program uses operations that are not run here: {ops}")
SINGLE_DEVICE_ONLY = N_("only single-device programs are run by the check")
MESHES = N_("the lowered program declares {meshes} meshes; only programs over one mesh are run by the check")
PARTITIONS = N_("the lowered program is partitioned {partitions} ways over a mesh of {devices} devices; only "
                "meshes of up to {most} devices, all used, are run here")
TENSOR_TOO_LARGE = N_("a tensor of shape {shape} is larger than any this exercise needs")
INPUTS_DIFFER = N_("its inputs are {want}, but the check calls it with {got}")
NO_DEVICES = N_("the check could not make {devices} CPU devices to run it on")
XLA_CANNOT_RUN = N_("XLA cannot run it on {devices} devices: {detail}")
UNSHARDED_DOES_NOT_VERIFY = N_("the lowered program does not verify once its shardings are dropped")
XLA_CANNOT_COMPILE = N_("XLA cannot compile it: {detail}")
SIGNATURE_NOT_CLOSED = N_("the lowered program's `@main` signature is not closed")
REQUEST_UNREADABLE = N_("the evaluator got a request it cannot read")
NO_SUCH_REQUEST = N_("the evaluator has no request {op}")
TOO_MANY_FLOPS = N_("your program would do about {work:.2g} arithmetic operations, more than the {limit:.2g} "
                    "the check allows for it")
TOO_MANY_BYTES = N_("your program would move about {work:.2g} bytes of memory, more than the {limit:.2g} "
                    "the check allows for it")
# Said by the evaluator's loop (course.engine.evaluator.serve) about what it was sent or could not send.
REQUEST_UNDECODABLE = N_("the evaluator could not read the request: {error}")
RESULT_UNSENDABLE = N_("the evaluator could not send its result: {error}")
# The templates the evaluator may send back: no other text is ever used as a format string here.
MESSAGES = frozenset({
    NOT_TEXT, TOO_LONG, TOO_DEEP, NOT_A_PROGRAM, SURROGATES, DOES_NOT_VERIFY_BECAUSE, DOES_NOT_VERIFY,
    NOT_OP_NAMES, REPLY_UNREADABLE, UNDEFINED_CALL, NESTED_TOO_DEEPLY, TOO_LONG_TO_RUN, NOT_RUN_HERE,
    SINGLE_DEVICE_ONLY, MESHES, PARTITIONS, TENSOR_TOO_LARGE, INPUTS_DIFFER, NO_DEVICES, XLA_CANNOT_RUN,
    UNSHARDED_DOES_NOT_VERIFY, XLA_CANNOT_COMPILE, SIGNATURE_NOT_CLOSED, REQUEST_UNREADABLE, NO_SUCH_REQUEST,
    TOO_MANY_FLOPS, TOO_MANY_BYTES, REQUEST_UNDECODABLE, RESULT_UNSENDABLE,
})


class ProgramError(ValueError):
    """The text the learner's process sent is not a lowered JAX program, or it cannot be run.

    It holds a template (an English text marked with N_) and its fields (numbers, and text
    made safe by `words.shown_field`); `str(e)` is the template in the language in use with
    the fields put in, so the same error reads in each learner's language wherever it is
    shown. The fields are values: a `{` in one (an op name, XLA's words) is shown as it is."""

    def __init__(self, template: str, **fields: object) -> None:
        super().__init__(template)
        self.template = template
        self.fields = {name: shown_field(value) for name, value in fields.items()}

    def __str__(self) -> str:
        return fill(self.template, self.fields)

    def to_reply(self) -> list:
        """What the evaluator sends back for this error: [template, fields], plain data."""
        return [self.template, dict(self.fields)]

    @classmethod
    def from_reply(cls, reply: object) -> "ProgramError | None":
        """The error the evaluator sent (`to_reply`), if it is one of MESSAGES with exactly its
        fields; None for anything else (the caller says the reply cannot be read)."""
        if type(reply) is not list or len(reply) != 2 or type(reply[0]) is not str or reply[0] not in MESSAGES:
            return None
        fields = plain_fields(reply[1])
        if fields is None:
            return None
        try:
            reply[0].format(**fields)
        except (KeyError, IndexError, ValueError, TypeError, AttributeError):
            return None
        if set(fields) != _names(reply[0]):
            return None
        return cls(reply[0], **fields)


def _names(template: str) -> set[str]:
    import string

    return {field.split(".")[0].split("[")[0] for _text, field, _spec, _conversion
            in string.Formatter().parse(template) if field}


class EvaluatorFailure(ProgramError):
    """The evaluator could not run a program: it crashed, passed a limit or timed out."""


class OverBudget(ProgramError):
    """A program whose estimated cost is over the budget it is run with."""

    def __init__(self, cost: "Cost", budget: "Cost") -> None:
        if cost.flops > budget.flops:
            super().__init__(TOO_MANY_FLOPS, work=float(cost.flops), limit=float(budget.flops))
        else:
            super().__init__(TOO_MANY_BYTES, work=float(cost.bytes), limit=float(budget.bytes))
        self.cost, self.budget = cost, budget


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NOT_BRACKET = re.compile(r"[^(){}\[\]<>]+")
_DEPTH_STEP = str.maketrans({c: "+" for c in "({[<"} | {c: "-" for c in ")}]>"})


def bounded_text(text: object, limit: int = MAX_PROGRAM_CHARS) -> str:
    """`text`, if it is a program text the evaluator may be handed: a str of at most `limit`
    characters, brackets nested at most MAX_NESTING deep. Plain Python on the
    trusted side, linear in the text's length: no parser sees a text that fails this."""
    if not isinstance(text, str):
        raise ProgramError(NOT_TEXT, type=type(text).__name__)
    if len(text) > limit:
        raise ProgramError(TOO_LONG, size=len(text), limit=limit)
    steps = _NOT_BRACKET.sub("", _STRING.sub("", text).replace("->", "")).translate(_DEPTH_STEP)
    depth = 0
    # Runs of openings are where depth grows: only their ends need a look.
    for run in re.finditer(r"\++|-+", steps):
        depth = max(0, depth + (len(run.group()) if run.group()[0] == "+" else -len(run.group())))
        if depth > MAX_NESTING:
            raise ProgramError(TOO_DEEP, depth=MAX_NESTING)
    return text


@dataclass(frozen=True)
class Value:
    """One argument or result of the program's entry point."""

    shape: tuple[int, ...]
    dtype: str
    # Per dimension, the mesh axes it is split over ((), for a dimension kept whole);
    # None when the program says nothing about this value's sharding.
    sharding: tuple[tuple[str, ...], ...] | None = None
    raw_sharding: str = ""
    # The `sdy.mesh` the sharding names ("" for GSPMD strings or none).
    mesh: str = ""

    @property
    def sharded_axes(self) -> tuple[str, ...]:
        return tuple(a for dim in self.sharding or () for a in dim)


@dataclass
class Program:
    text: str
    ops: Counter = field(default_factory=Counter)
    args: list[Value] = field(default_factory=list)
    results: list[Value] = field(default_factory=list)
    meshes: dict[str, dict[str, int]] = field(default_factory=dict)
    num_partitions: int = 1
    # Every `sdy.sharding_constraint` and `sdy.reshard` in the module, and every operand of
    # an `sdy.manual_computation` (shard_map), in order: the shape of the value laid out
    # and the layout (read by MLIR; empty without `verify`).
    constraints: list[Value] = field(default_factory=list)

    def mesh_of(self, value: Value) -> dict[str, int] | None:
        """The axes (name -> size) of the mesh a value's sharding names, if the module declares it."""
        return self.meshes.get(value.mesh) if value.mesh else None

    def takes(self, shape: tuple[int, ...], dtype: str = "float32") -> bool:
        """Whether one of the entry point's arguments has this shape and dtype."""
        return any(a.shape == tuple(shape) and a.dtype == dtype for a in self.args)

    def count(self, op: str) -> int:
        """How many times `op` ("stablehlo.while", "dot_general") appears in the module."""
        if "." not in op:
            op = f"stablehlo.{op}"
        return self.ops.get(op, 0)

    @property
    def loops(self) -> int:
        return self.count("stablehlo.while")

    @property
    def size(self) -> int:
        """Compute operations in the module (constants, returns and calls not counted)."""
        skip = {"stablehlo.constant", "stablehlo.return", "func.return", "func.call", "func.func"}
        return sum(n for op, n in self.ops.items() if op.startswith("stablehlo.") and op not in skip)


def parse(text: object, *, verify: bool = True) -> Program:
    """Read a lowered module (`Lowered.as_text()`): its ops, entry signature and shardings.

    With `verify`, MLIR parses and verifies the module first: types must agree
    between every definition and use, so a signature edited by hand is refused.
    """
    text = bounded_text(text)
    main = _MAIN.search(text)
    if main is None or not _ALIASES.sub("", text[:main.start()]).lstrip().startswith("module"):
        raise ProgramError(NOT_A_PROGRAM)
    if verify and not HERE:
        return _program_from_plain(text, _forward("parse", text))
    program = Program(text=text)
    if verify:
        # From MLIR's own reading: nothing hides on a shared line, and no string (a
        # location, a result's name) can pass for a type or a sharding.
        _read_verified(text, program)
        return program
    for line in text.splitlines():
        m = _OP.match(line)
        if m:
            program.ops[m.group(1)] += 1
    for m in _MESH.finditer(text):
        program.meshes[m.group(1)] = {a: int(n) for a, n in _MESH_AXIS.findall(m.group(2))}
    parts = re.search(r"mhlo\.num_partitions\s*=\s*(\d+)", text[: main.start()])
    program.num_partitions = int(parts.group(1)) if parts else 1
    args_text, results_text = _signature(text, main.end())
    program.args = [_value(a) for a in _split_top(args_text)]
    program.results = [_value(r) for r in _split_top(results_text)]
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
    function of a verified program, in program order. Read through MLIR in the evaluator, so no
    string in the text can pass for an operation or a type; a ProgramError when it cannot be read."""
    text = bounded_text(text)
    if type(names) not in (list, tuple, set, frozenset) or not all(type(n) is str for n in names):
        raise ProgramError(NOT_OP_NAMES)
    wanted = sorted(set(names))
    if not HERE:
        got = _forward("ops_with_types", text, names=wanted)
        ok = type(got) is list and all(
            type(item) is list and len(item) == 3 and type(item[0]) is str
            and all(type(t) is list and all(type(x) is str for x in t) for t in item[1:]) for item in got)
        if not ok:
            raise EvaluatorFailure(REPLY_UNREADABLE)
        return [(name, operands, results) for name, operands, results in got]
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
    """(all, in_loops): the matrix products (`dot_general`, `dot`) a verified program runs, and
    how many of them sit in a while loop's body. A private function is counted once per call,
    so a jitted helper called in a Python loop counts as many products as it is called.
    Read through MLIR, not from the text; a ProgramError when the program cannot be read."""
    text = bounded_text(text)
    if not HERE:
        got = _forward("matrix_products", text)
        if type(got) is not list or len(got) != 2 or not all(type(n) is int and n >= 0 for n in got):
            raise EvaluatorFailure(REPLY_UNREADABLE)
        return got[0], got[1]
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
        return Value(shape, dtype, _mhlo_spec(raw.value, len(shape)), raw.value)
    return Value(shape, dtype)


def _cast(kind, thing):
    """`kind(thing)` (an MLIR type or attribute class), or None when `thing` is not one."""
    try:
        return kind(thing)
    except (ValueError, TypeError):
        return None


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
# _PER_DEVICE). Every run, loop or not, is under the evaluator's time limit (LOOP_SECONDS).
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
MAX_TENSOR_ELEMENTS = 4_000_000
# Seconds the evaluator may take to compile and run one program before it is ended.
LOOP_SECONDS = 30.0
# Seconds it may take to read one (parse, verify, count, estimate): no program runs then.
READ_SECONDS = 30.0

_COMPILED: dict[str, object] = {}
_READ: dict[str, tuple] = {}  # text hash -> (Program, Cost), in the evaluator
_COMPILED_LOCK = threading.Lock()


@dataclass(frozen=True)
class Cost:
    """What running a program costs, estimated from its operations' shapes (`cost`):
    arithmetic operations and bytes its operations read and write. `bounded` is False
    when a loop's trip count could not be read (it is then counted once; the time
    limit bounds the rest)."""

    flops: float
    bytes: float
    bounded: bool = True

    def times(self, factor: float) -> "Cost":
        """A budget `factor` times this cost (a reference program's), never below MIN_BUDGET."""
        return Cost(max(self.flops * factor, MIN_BUDGET.flops), max(self.bytes * factor, MIN_BUDGET.bytes))


# The budget of a program run without a reference's (`run(..., budget=None)`): about ten
# seconds of one CPU core at the worst; the course's programs cost less than 1e8.
MAX_COST = Cost(flops=2e10, bytes=2e10)
# The least budget derived from a reference: small programs differ by constant overheads.
MIN_BUDGET = Cost(flops=1e7, bytes=1e8)


def run(text: object, *args, global_view: bool = False, budget: Cost | None = None) -> list:
    """Compile a lowered single-device program and run it on `args` (NumPy arrays), in the evaluator.

    For evidence that must not be computed in the learner's process: the
    program is fixed (lowered on shapes only) before the inputs are chosen,
    so its outputs on them were never seen there. The text is hostile: it is
    bounded here (`bounded_text`), then in the evaluator verified by MLIR,
    bounded in the size of every tensor and in its estimated cost (`budget`,
    e.g. `cost(reference).times(20)`; MAX_COST without one), and only the
    operations in _RUNNABLE are run; anything else, or arguments that do not
    match `args` exactly, is a ProgramError. Compiling and running are under a
    time limit (LOOP_SECONDS), loop or not. The evaluator keeps compiled
    programs (by the text's hash) for the next check that sends the same one.

    With `global_view`, a program lowered for a mesh is run too: such a module
    is the whole computation on global shapes, and its shardings (`sdy.mesh`,
    `sdy.sharding` on values, `sdy.sharding_constraint` and `sdy.reshard`) only
    say where each piece would live, which changes no value. They are dropped
    (`single_device`) and the same computation runs on one device. Read the
    shardings from `parse` before: running proves what the program computes,
    the annotations where. A program with per-device code (`sdy.manual_computation`,
    from shard_map, and the collectives in it) has no single-device form: it is
    compiled for its mesh and run on that many of the evaluator's CPU devices.
    """
    if isinstance(text, str) and len(text) > MAX_RUN_CHARS:
        raise ProgramError(TOO_LONG_TO_RUN, size=len(text), limit=MAX_RUN_CHARS)
    text = bounded_text(text, MAX_RUN_CHARS)
    budget = MAX_COST if budget is None else budget
    if not HERE:
        import numpy as np

        arrays = [np.asarray(a) for a in args]
        got = _forward("run", text, seconds=LOOP_SECONDS, args=arrays, global_view=bool(global_view),
                       budget=[float(budget.flops), float(budget.bytes)])
        if type(got) is not list or not all(type(a) is np.ndarray for a in got):
            raise EvaluatorFailure(REPLY_UNREADABLE)
        return got
    if global_view and "sdy.manual_computation" in text:
        program = _partitioned(text)
        arrays = _checked_inputs(program, args)
        _within_budget(text, budget)
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

    for spec in _TENSOR.findall(program.text):
        shape = _value(f"tensor<{spec}>").shape
        if math.prod(shape) > MAX_TENSOR_ELEMENTS:
            raise ProgramError(TENSOR_TOO_LARGE, shape=str(shape))
    arrays = [np.asarray(a) for a in args]
    want = [(a.shape, a.dtype) for a in program.args]
    got = [(tuple(a.shape), str(a.dtype)) for a in arrays]
    if want != got:
        raise ProgramError(INPUTS_DIFFER, want=_show(want), got=_show(got))
    return arrays


def _run_on_mesh(program: "Program", arrays: list, devices: int) -> list:
    """In the evaluator (started with MAX_PARTITIONS host devices): compile `program` (read
    by `_partitioned`) for `devices` CPU devices and run it."""
    import jax
    import numpy as np
    from jax._src import compiler, xla_bridge
    from jax._src.interpreters import mlir
    from jax._src.lib import xla_client as xc
    from jax._src.sharding_impls import GSPMDSharding

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
        placed = [jax.device_put(a, GSPMDSharding(chosen, s))
                  for a, s in zip(arrays, executable.get_parameter_shardings())]
        outs = executable.execute_sharded(placed).disassemble_into_single_device_arrays()
    except Exception as e:  # noqa: BLE001 - XLA raises its own types
        detail = str(e).strip().splitlines()
        raise ProgramError(XLA_CANNOT_RUN, devices=devices, detail=detail[0][:200] if detail else type(e).__name__) from None
    return [np.asarray(jax.make_array_from_single_device_arrays(r.shape, GSPMDSharding(chosen, s), shards))
            for r, s, shards in zip(program.results, executable.get_output_shardings(), outs)]


# Where a value lives, never what it is: what `single_device` drops.
_LAYOUT_ATTRS = ("sdy.sharding", "mhlo.sharding", "sdy.sharding_rule")


def single_device(text: object) -> str:
    """The computation of a program lowered for a mesh, as a single-device module (see `run`).

    The result is printed by MLIR without locations: the same computation gives
    the same text, whatever the files it was lowered from.
    """
    if isinstance(text, str) and len(text) > MAX_RUN_CHARS:
        raise ProgramError(TOO_LONG_TO_RUN, size=len(text), limit=MAX_RUN_CHARS)
    text = bounded_text(text, MAX_RUN_CHARS)
    if not HERE:
        got = _forward("single_device", text)
        if type(got) is not str:
            raise EvaluatorFailure(REPLY_UNREADABLE)
        return got
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


def _signature(text: str, start: int) -> tuple[str, str]:
    """The argument list and result list of `@main`, found by bracket matching."""
    end = _matching(text, start - 1)
    args = text[start:end]
    rest = text[end + 1:end + 4096 + 200_000]
    m = re.match(r"\s*->\s*", rest)
    if m is None:
        return args, ""
    rest = rest[m.end():]
    if rest.startswith("("):
        close = _matching(rest, 0)
        return args, rest[1:close]
    brace = rest.find("{")
    return args, rest[:brace if brace >= 0 else len(rest)]


def _matching(text: str, open_at: int) -> int:
    pairs = {"(": ")", "{": "}", "[": "]", "<": ">"}
    stack: list[str] = []
    in_str = False
    for i in range(open_at, min(len(text), open_at + MAX_PROGRAM_CHARS)):
        c = text[i]
        if in_str:
            if c == "\\":
                continue
            if c == '"':
                in_str = False
            continue
        if c == '"':
            in_str = True
        elif c in pairs:
            stack.append(pairs[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return i
        elif c == ">" and text[i - 1:i] == "-":
            continue  # `->` is not a closing bracket
    raise ProgramError(SIGNATURE_NOT_CLOSED)


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets and strings."""
    parts, depth, in_str, cur = [], 0, False, []
    for i, c in enumerate(text):
        if in_str:
            cur.append(c)
            if c == '"' and text[i - 1] != "\\":
                in_str = False
            continue
        if c == '"':
            in_str = True
        elif c in "([{<":
            depth += 1
        elif c in ")]}>" and not (c == ">" and text[i - 1:i] == "-"):
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def _value(text: str) -> Value:
    t = _TENSOR.search(text)
    if t is None:
        return Value((), "unknown")
    *dims, dtype = t.group(1).split("x") if "x" in t.group(1) else ["", t.group(1)]
    dims = [d for d in dims if d != ""]
    try:
        shape = tuple(int(d) for d in dims)
    except ValueError:
        shape = ()
    dtype = MLIR_DTYPES.get(dtype.strip(), dtype.strip())
    sdy = _SDY.search(text)
    if sdy is not None:
        spec = tuple(tuple(_AXIS_NAME.findall(dim)) for dim in _DIM.findall(sdy.group(2)))
        return Value(shape, dtype, spec, sdy.group(0))
    mhlo = _MHLO.search(text)
    if mhlo is not None:
        return Value(shape, dtype, _mhlo_spec(mhlo.group(1), len(shape)), mhlo.group(1))
    return Value(shape, dtype)


def _mhlo_spec(raw: str, rank: int) -> tuple[tuple[str, ...], ...] | None:
    """GSPMD strings name no axes: a split dimension is reported as split over `"*N"`."""
    if "replicated" in raw or "maximal" in raw:
        return tuple(() for _ in range(rank))
    m = re.search(r"devices=\[([\d,]+)\]", raw)
    if m is None:
        return None
    tiles = [int(n) for n in m.group(1).split(",")][:rank]
    return tuple((f"*{n}",) if n > 1 else () for n in tiles)


# -- cost: what running a program would take, estimated before it runs -------------------


def cost(text: object) -> Cost:
    """The estimated cost of running a program (read by the evaluator; see `Cost`). A check
    may run a learner's program with `budget=cost(reference_text).times(k)`."""
    text = bounded_text(text)
    if not HERE:
        got = _forward("cost", text)
        if (type(got) is not list or len(got) != 3 or not all(type(x) is float and x >= 0 for x in got[:2])
                or type(got[2]) is not bool):
            raise EvaluatorFailure(REPLY_UNREADABLE)
        return Cost(got[0], got[1], got[2])
    from jax._src.lib.mlir import ir

    context, module = _verified_module(text)
    with context:
        funcs = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in module.body.operations
                 if op.operation.name == "func.func"}
        if "main" not in funcs:
            raise ProgramError(NOT_A_PROGRAM)
        return _CostWalk(funcs).function("main", frozenset())


def _within_budget(text: str, budget: Cost) -> None:
    spent = cost(text)
    if spent.flops > budget.flops or spent.bytes > budget.bytes:
        raise OverBudget(spent, budget)


_ITEMSIZE = {"i1": 1, "i8": 1, "ui8": 1, "f16": 2, "bf16": 2, "i16": 2, "ui16": 2, "f32": 4, "i32": 4,
             "ui32": 4, "f64": 8, "i64": 8, "ui64": 8, "complex<f32>": 8, "complex<f64>": 16}
_INTS = re.compile(r"-?\d+")


def _elements(t) -> int:
    from jax._src.lib.mlir import ir

    ranked = _cast(ir.RankedTensorType, t)
    if ranked is None:
        return 1
    return math.prod(max(int(d), 0) for d in ranked.shape)


def _nbytes(t) -> int:
    from jax._src.lib.mlir import ir

    ranked = _cast(ir.RankedTensorType, t)
    if ranked is None:
        return 8
    return _elements(t) * _ITEMSIZE.get(str(ranked.element_type), 8)


def _attr_ints(op, name: str) -> list[int]:
    if name not in op.attributes:
        return []
    return [int(n) for n in _INTS.findall(str(op.attributes[name]).split(":")[-1])]


class _CostWalk:
    """Sums an estimate of every operation's work, a private function once per call.

    Per operation, from its operand and result shapes: a matrix product
    2*M*N*K, a convolution 2 * output * (kernel / output features), a windowed
    reduction output * window * its body, a reduction or scatter its inputs
    times its body, a sort n*log2(n) times its comparator, a loop its body times
    the trip count its condition compares with (once when that is not a constant),
    a branch its dearest branch; any other operation one per output element.
    Bytes are those every operation reads and writes."""

    def __init__(self, funcs: dict) -> None:
        self.funcs = funcs
        self.memo: dict[str, Cost] = {}

    def function(self, name: str, stack: frozenset) -> Cost:
        if name not in self.memo:
            if name in stack or name not in self.funcs:
                raise ProgramError(UNDEFINED_CALL, name=name)
            self.memo[name] = self.regions(self.funcs[name].operation, stack | {name})
        return self.memo[name]

    def regions(self, operation, stack) -> Cost:
        flops = moved = 0.0
        bounded = True
        for region in operation.regions:
            c = self.region(region, stack)
            flops, moved, bounded = flops + c.flops, moved + c.bytes, bounded and c.bounded
        return Cost(flops, moved, bounded)

    def region(self, region, stack) -> Cost:
        flops = moved = 0.0
        bounded = True
        for block in region.blocks:
            for op in block.operations:
                c = self.op(op, stack)
                flops, moved, bounded = flops + c.flops, moved + c.bytes, bounded and c.bounded
        return Cost(flops, moved, bounded)

    def op(self, op, stack) -> Cost:
        from jax._src.lib.mlir import ir

        name = op.operation.name
        out = sum(_elements(r.type) for r in op.results)
        moved = float(sum(_nbytes(r.type) for r in op.results) + sum(_nbytes(v.type) for v in op.operands))
        regions = list(op.operation.regions)
        if name == "func.call":
            return self.function(ir.FlatSymbolRefAttr(op.attributes["callee"]).value, stack)
        if name == "stablehlo.while":
            cond, body = self.region(regions[0], stack), self.region(regions[1], stack)
            trips = _trip_count(regions[0])
            n = 1 if trips is None else trips
            return Cost((cond.flops + body.flops) * n, moved + (cond.bytes + body.bytes) * n,
                        trips is not None and cond.bounded and body.bounded)
        if name in ("stablehlo.case", "stablehlo.if"):
            branches = [self.region(r, stack) for r in regions] or [Cost(0.0, 0.0)]
            return Cost(max(b.flops for b in branches), moved + max(b.bytes for b in branches),
                        all(b.bounded for b in branches))
        body = self.regions(op.operation, stack) if regions else Cost(0.0, 0.0)
        per = max(body.flops, 1.0)  # what the region does per application (scalar ops)
        operands = [v.type for v in op.operands]
        if name in ("stablehlo.dot_general", "stablehlo.dot") and len(operands) >= 2:
            lhs = _cast(ir.RankedTensorType, operands[0])
            if name == "stablehlo.dot_general" and lhs is not None:
                text = str(op.attributes["dot_dimension_numbers"]) if "dot_dimension_numbers" in op.attributes else ""
                m = re.search(r"lhs_contracting_dimensions = \[([\d, ]*)\]", text)
                dims = [int(d) for d in _INTS.findall(m.group(1))] if m else []
                k = math.prod(int(lhs.shape[d]) for d in dims if 0 <= d < lhs.rank)
            else:
                k = int(lhs.shape[-1]) if lhs is not None and lhs.rank else 1
            return Cost(2.0 * out * max(k, 1), moved)
        if name == "stablehlo.convolution" and len(operands) >= 2:
            kernel = _cast(ir.RankedTensorType, operands[1])
            per_output = _elements(operands[1])
            spec = str(op.attributes["dimension_numbers"]) if "dimension_numbers" in op.attributes else ""
            m = re.search(r"x\[([^\]]*)\]", spec)
            if kernel is not None and m:
                names = [d.strip() for d in m.group(1).split(",")]
                if "o" in names and names.index("o") < kernel.rank:
                    per_output //= max(int(kernel.shape[names.index("o")]), 1)
            return Cost(2.0 * out * max(per_output, 1), moved)
        if name == "stablehlo.reduce_window":
            window = math.prod(_attr_ints(op, "window_dimensions") or [1])
            return Cost(float(out) * window * per, moved)
        if name == "stablehlo.select_and_scatter":
            window = math.prod(_attr_ints(op, "window_dimensions") or [1])
            return Cost(float(_elements(operands[0])) * window * per, moved)
        if name == "stablehlo.sort":
            n = _elements(operands[0]) if operands else 1
            ranked = _cast(ir.RankedTensorType, operands[0]) if operands else None
            along = max((int(d) for d in ranked.shape), default=1) if ranked is not None else 1
            return Cost(float(n) * max(math.log2(max(along, 2)), 1.0) * per, moved)
        if name in ("stablehlo.reduce", "stablehlo.scatter", "stablehlo.all_reduce", "stablehlo.reduce_scatter"):
            inputs = max((_elements(t) for t in operands), default=1)
            return Cost(float(inputs) * per, moved)
        if regions:  # any other operation with a body: each output element may run it
            return Cost(float(out) * per, moved + body.bytes, body.bounded)
        return Cost(float(out), moved)


def _trip_count(cond) -> int | None:
    """The constant a loop's condition compares its counter with (JAX's fori_loop and scan), if any."""
    for block in cond.blocks:
        for op in block.operations:
            if op.operation.name != "stablehlo.compare":
                continue
            for value in op.operands:
                owner = value.owner
                name = getattr(getattr(owner, "operation", owner), "name", "")
                if name == "stablehlo.constant":
                    text = str(owner.attributes["value"])
                    m = re.match(r"dense<(-?[\d.e+]+)>", text)
                    if m:
                        try:
                            return max(int(float(m.group(1))), 1)
                        except (ValueError, OverflowError):
                            return None
    return None


# -- the trusted side's half: bounded text to the evaluator, plain data back ----------


def _forward(op: str, text: str, *, seconds: float | None = None, **payload) -> object:
    from course.engine.evaluator import shared

    global REQUESTS_DONE
    REQUESTS_DONE += 1
    return shared().call(op, {"text": text, **payload}, seconds=READ_SECONDS if seconds is None else seconds)


def evaluate(request: object) -> object:
    """In the evaluator: one request from `_forward`, answered as plain data."""
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
    if op == "run":
        args, budget = request.get("args"), request.get("budget")
        if type(args) is not list or type(budget) is not list or len(budget) != 2:
            raise ProgramError(REQUEST_UNREADABLE)
        from course.engine.wire import to_plain

        outs = run(text, *args, global_view=bool(request.get("global_view")), budget=Cost(*map(float, budget)))
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


def _unreadable() -> EvaluatorFailure:
    return EvaluatorFailure(REPLY_UNREADABLE)


def _value_from_plain(raw: object) -> Value:
    if type(raw) is not list or len(raw) != 5:
        raise _unreadable()
    shape, dtype, spec, raw_sharding, mesh = raw
    if (type(shape) is not list or not all(type(n) is int for n in shape) or type(dtype) is not str
            or type(raw_sharding) is not str or type(mesh) is not str):
        raise _unreadable()
    if spec is not None:
        if type(spec) is not list or not all(type(d) is list and all(type(a) is str for a in d) for d in spec):
            raise _unreadable()
        spec = tuple(tuple(d) for d in spec)
    return Value(tuple(shape), dtype, spec, raw_sharding, mesh)


def _program_from_plain(text: str, raw: object) -> Program:
    """A Program from the evaluator's reply, every field checked: the reply is data too."""
    if type(raw) is not dict:
        raise _unreadable()
    ops, meshes, parts = raw.get("ops"), raw.get("meshes"), raw.get("num_partitions")
    if (type(ops) is not dict or not all(type(n) is int for n in ops.values()) or type(meshes) is not dict
            or type(parts) is not int):
        raise _unreadable()
    for axes in meshes.values():
        if type(axes) is not dict or not all(type(n) is int for n in axes.values()):
            raise _unreadable()
    lists = [raw.get(key) for key in ("args", "results", "constraints")]
    if not all(type(x) is list for x in lists):
        raise _unreadable()
    args, results, constraints = ([_value_from_plain(v) for v in x] for x in lists)
    return Program(text=text, ops=Counter(ops), args=args, results=results,
                   meshes={k: dict(v) for k, v in meshes.items()}, num_partitions=parts, constraints=constraints)


# -- sharding evidence returned as plain data -----------------------------------------


def sharding_of(evidence: object) -> tuple[tuple[str, ...], ...] | None:
    """A probe's description of an array's `.sharding` (recipe below), checked and normalised.

    In the probe:
        s = x.sharding
        spec = [list(d) if isinstance(d, tuple) else ([] if d is None else [d]) for d in s.spec]
        {"spec": spec, "mesh": dict(s.mesh.shape), "devices": len(s.device_set)}
    Returns the per-dimension axes, or None when the evidence is malformed.
    """
    if not isinstance(evidence, dict) or not isinstance(evidence.get("spec"), list):
        return None
    out = []
    for dim in evidence["spec"]:
        if not isinstance(dim, list) or not all(isinstance(a, str) for a in dim):
            return None
        out.append(tuple(dim))
    return tuple(out)
