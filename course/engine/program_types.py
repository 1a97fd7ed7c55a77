"""What both sides of a program's reading share: its limits, types and messages.

The trusted side (`course.engine.programs`, called by the checks) and the
evaluator (`course.engine.program_reader`, in its own process) exchange plain
data: a bounded program text one way, a `Program`, a `Cost`, arrays or an
error's template and fields the other. The names for that data live here, so
that neither side imports the other: this module imports nothing from the
engine but `words`.
"""

from __future__ import annotations

import math
import re
import string
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
# What a program run by the check may hold: tensors of at most MAX_TENSOR_ELEMENTS elements,
# results of at most MAX_RESULT_BYTES in all (they come back in one reply of the evaluator's,
# base64 in JSON). The course's programs hold far less; refused before anything is compiled.
MAX_TENSOR_ELEMENTS = 4_000_000
MAX_RESULT_BYTES = 64 << 20
# Bytes per element of the dtypes `Value` names; 8 for any other.
ITEMSIZE = {"bool": 1, "int8": 1, "uint8": 1, "float16": 2, "bfloat16": 2, "int16": 2, "uint16": 2,
            "float32": 4, "int32": 4, "uint32": 4, "float64": 8, "int64": 8, "uint64": 8, "complex64": 8,
            "complex128": 16}

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
RESULTS_TOO_LARGE = N_("the lowered program returns {size} MiB of results, more than the {limit} MiB the check "
                      "reads back from a program")
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
    TOO_MANY_FLOPS, TOO_MANY_BYTES, REQUEST_UNDECODABLE, RESULT_UNSENDABLE, RESULTS_TOO_LARGE,
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
    return {name.split(".")[0].split("[")[0] for _text, name, _spec, _conversion
            in string.Formatter().parse(template) if name}


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


# What MLIR's lexer reads as one token whatever brackets it holds: a string (no line breaks,
# escapes of one character) and a `//` comment; the leftmost wins, as in the lexer, so a
# quote in a comment opens no string and `//` in a string starts no comment.
_SKIPPED = re.compile(r'"[^"\\\n]*(?:\\.[^"\\\n]*)*"|//[^\n]*')
# `->` and `>=` hold a `>` that closes nothing.
_NOT_CLOSING = re.compile(r"->|>=")
_NOT_BRACKET = re.compile(r"[^(){}\[\]<>]+")
_OPENER = {")": "(", "]": "[", "}": "{", ">": "<"}


def nesting_over(text: str, limit: int = MAX_NESTING) -> bool:
    """Whether MLIR's parser could recurse more than `limit` levels reading `text`.

    Brackets are matched by kind, outside strings and comments. A `>` that closes no `<`
    is passed over (it may be a comparison); a `)`, `]` or `}` that closes an outer
    bracket closes what is open inside it, as the parser, which fails there, returns
    from them. Neither can lower the count while the parser is still inside."""
    steps = _NOT_BRACKET.sub("", _NOT_CLOSING.sub(" ", _SKIPPED.sub(" ", text)))
    stack: list[str] = []
    for c in steps:
        if c in "([{<":
            stack.append(c)
            if len(stack) > limit:
                return True
        elif stack and stack[-1] == _OPENER[c]:
            stack.pop()
        elif c != ">" and _OPENER[c] in stack:
            while stack.pop() != _OPENER[c]:
                pass
    return False


def bounded_text(text: object, limit: int = MAX_PROGRAM_CHARS) -> str:
    """`text`, if it is a program text the evaluator may be handed: a str of at most `limit`
    characters, brackets nested at most MAX_NESTING deep (`nesting_over`). Plain Python on
    the trusted side, linear in the text's length: no parser sees a text that fails this."""
    if not isinstance(text, str):
        raise ProgramError(NOT_TEXT, type=type(text).__name__)
    if len(text) > limit:
        raise ProgramError(TOO_LONG, size=len(text), limit=limit)
    if nesting_over(text):
        raise ProgramError(TOO_DEEP, depth=MAX_NESTING)
    return text


def bounded_to_run(text: object) -> str:
    """`text`, if it is a program text the evaluator may be asked to run: under MAX_RUN_CHARS
    (said in words of running), then `bounded_text`."""
    if isinstance(text, str) and len(text) > MAX_RUN_CHARS:
        raise ProgramError(TOO_LONG_TO_RUN, size=len(text), limit=MAX_RUN_CHARS)
    return bounded_text(text, MAX_RUN_CHARS)


def bounded_sizes(shapes, results: "list[Value]") -> None:
    """A ProgramError unless every tensor shape in `shapes` has at most MAX_TENSOR_ELEMENTS
    elements and the entry point's `results` weigh at most MAX_RESULT_BYTES together: what a
    program run by the check may hold, read from its types before anything compiles it."""
    for shape in shapes:
        if math.prod(shape) > MAX_TENSOR_ELEMENTS:
            raise ProgramError(TENSOR_TOO_LARGE, shape=str(tuple(shape)))
    size = sum(math.prod(v.shape) * ITEMSIZE.get(v.dtype, 8) for v in results)
    if size > MAX_RESULT_BYTES:
        raise ProgramError(RESULTS_TOO_LARGE, size=size >> 20, limit=MAX_RESULT_BYTES >> 20)


def op_names(names: object) -> list[str]:
    """The operation names an `ops_with_types` request asks for, sorted, or a ProgramError."""
    if type(names) not in (list, tuple, set, frozenset) or not all(type(n) is str for n in names):
        raise ProgramError(NOT_OP_NAMES)
    return sorted(set(names))


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
