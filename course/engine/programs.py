"""Programs as evidence: the learner's function, lowered in the child, read by the evaluator.

Some things a check must judge live in the *program*, not in its outputs: is
the epoch one `while` loop or thirty unrolled steps, is the batch sharded over
the mesh, which shapes was the step compiled for. Measuring them inside the
learner's process (counting `make_jaxpr` equations, reading `.sharding`,
recording traces) is worthless: learner code ran there first and can patch
anything. Instead the probe lowers the learner's function on shapes the check
chose and returns the StableHLO text; the evaluator (`course.engine.evaluator`)
parses it, never the learner's process. The text is the program XLA would compile for those inputs:
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

Everything treats the text as hostile, and no trusted process ever hands it to
a parser or a compiler. The work is split over rooms, and data flows one way
(check -> learner's child -> evidence -> evaluator -> verdict):

- this module is the trusted side's API, what the checks call (`parse`, `run`,
  `matrix_products`, `ops_with_types`, `single_device`, `cost`). It only bounds
  the text in plain Python (`bounded_text`: its size and the nesting depth of
  its brackets, the two things that overflow MLIR's parser), forwards it, with
  the check's inputs, to the evaluator (`course.engine.evaluator`), and checks
  every field of the plain data that comes back;
- `course.engine.program_types` holds what both sides share: the limits,
  `Program`, `Value`, `Cost`, `ProgramError` and its message templates;
  `course.engine.program_text` reads a text without a parser;
- `course.engine.program_reader` is the evaluator's side, imported only by
  the evaluator process's loop: a disposable process, in the check sandbox
  where one works, that parses the text with MLIR's parser and verifier (the
  same ones XLA runs before compiling), estimates what running it costs,
  compiles and runs it under a time limit.

Whatever goes wrong there (a malformed module, a program over its budget, a
crash, a timeout) is a `ProgramError` whose message a check can show. The
verifier is what makes edited text useless: a module whose signature was
rewritten to claim other shapes than its body computes does not verify.
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import contextmanager
from contextvars import ContextVar

from course.engine.evaluator import TOO_SLOW, shared
from course.engine.program_text import entry_point, read_unverified, tensor_shapes
# The names both sides share, re-exported: the checks and the tests import them from here.
from course.engine.program_types import (  # noqa: F401 - re-exported
    DOES_NOT_VERIFY, DOES_NOT_VERIFY_BECAUSE, INPUTS_DIFFER, MAX_COST, MAX_NESTING, MAX_PROGRAM_CHARS,
    MAX_RESULT_BYTES, MAX_RUN_CHARS, MAX_TENSOR_ELEMENTS, MESHES, MESSAGES, MIN_BUDGET, NESTED_TOO_DEEPLY, NO_DEVICES,
    NO_SUCH_REQUEST, NOT_A_PROGRAM, NOT_OP_NAMES, NOT_RUN_HERE, NOT_TEXT, PARTITIONS, REPLY_UNREADABLE,
    REQUEST_UNDECODABLE, REQUEST_UNREADABLE, RESULT_UNSENDABLE, RESULTS_TOO_LARGE, SIGNATURE_NOT_CLOSED, SINGLE_DEVICE_ONLY, SURROGATES, TENSOR_TOO_LARGE, TOO_DEEP, TOO_LONG,
    TOO_LONG_TO_RUN, TOO_MANY_BYTES, TOO_MANY_FLOPS, UNDEFINED_CALL, UNSHARDED_DOES_NOT_VERIFY, XLA_CANNOT_COMPILE,
    XLA_CANNOT_RUN, Cost, EvaluatorFailure, OverBudget, Program, ProgramError, Value, bounded_sizes, bounded_text,
    bounded_to_run, nesting_over, op_names,
)
from course.engine.words import N_

# Programs this process has sent the evaluator (to read, cost or run): `jaxlings dev check` reads it
# around each test, to tell whether a check that says it judges from programs had any read or run.
REQUESTS_DONE = 0
# Seconds the evaluator may take to check and compile one program before it is ended: XLA
# compiles the course's programs in about a second; 4,000 chained tiny products take it minutes.
COMPILE_SECONDS = 15.0
# Seconds it may take to run one compiled program before it is ended.
LOOP_SECONDS = 30.0
# Seconds it may take to read one (parse, verify, count, estimate): no program runs then.
READ_SECONDS = 30.0
COMPILE_TOO_SLOW = N_("your program could not be run: XLA took longer than {seconds:g} s to compile it")
TIME_USED = N_("your programs used up the {seconds:g} s the check gives to reading and running them")

# [seconds left, seconds given] to the check now running (`within`), or None: then only each
# request is timed. Only the evaluator's time is taken off it (starting it included), never the
# learner's process's, which has its own limit.
_CLOCK: ContextVar[list[float] | None] = ContextVar("jaxlings_programs_clock", default=None)


@contextmanager
def within(seconds: float):
    """Every request made to the evaluator inside takes at most `seconds` in all (its time, not
    the time between requests): a check run
    gives its programs its exercise's time limit, so that a hostile program (a compile-time
    bomb, one that never ends) costs the check no more. Once they are spent, each request
    fails at once with TIME_USED."""
    token = _CLOCK.set([float(seconds), float(seconds)])
    try:
        yield
    finally:
        _CLOCK.reset(token)


def parse(text: object, *, verify: bool = True) -> Program:
    """Read a lowered module (`Lowered.as_text()`): its ops, entry signature and shardings.

    With `verify`, the evaluator has MLIR parse and verify the module first: types must
    agree between every definition and use, so a signature edited by hand is refused, and
    the fields come from MLIR's reading, not from the text's lines. Without, the text is
    read here line by line (`program_text.read_unverified`).
    """
    text, main = entry_point(text)
    if verify:
        return _program_from_plain(text, _forward("parse", text))
    return read_unverified(text, main)


def ops_with_types(text: object, names: object) -> list[tuple[str, list[str], list[str]]]:
    """(op name, operand types, result types) of every operation named in `names`, in every
    function of a verified program, in program order. Read through MLIR in the evaluator, so no
    string in the text can pass for an operation or a type; a ProgramError when it cannot be read."""
    text = bounded_text(text)
    got = _forward("ops_with_types", text, names=op_names(names))
    ok = type(got) is list and all(
        type(item) is list and len(item) == 3 and type(item[0]) is str
        and all(type(t) is list and all(type(x) is str for x in t) for t in item[1:]) for item in got)
    if not ok:
        raise EvaluatorFailure(REPLY_UNREADABLE)
    return [(name, operands, results) for name, operands, results in got]


def matrix_products(text: object) -> tuple[int, int]:
    """(all, in_loops): the matrix products (`dot_general`, `dot`) a verified program runs, and
    how many of them sit in a while loop's body. A private function is counted once per call,
    so a jitted helper called in a Python loop counts as many products as it is called.
    Read through MLIR, not from the text; a ProgramError when the program cannot be read."""
    text = bounded_text(text)
    got = _forward("matrix_products", text)
    if type(got) is not list or len(got) != 2 or not all(type(n) is int and n >= 0 for n in got):
        raise EvaluatorFailure(REPLY_UNREADABLE)
    return got[0], got[1]


def run(text: object, *args, global_view: bool = False, budget: Cost | None = None) -> list:
    """Compile a lowered single-device program and run it on `args` (NumPy arrays), in the evaluator.

    For evidence that must not be computed in the learner's process: the
    program is fixed (lowered on shapes only) before the inputs are chosen,
    so its outputs on them were never seen there. The text is hostile: it is
    bounded here (`bounded_text`, and from its types `bounded_sizes`), then in the
    evaluator verified by MLIR, bounded again in the size of every tensor and of its
    results and in its estimated cost (`budget`, e.g. `cost(reference).times(20)`;
    MAX_COST without one), and only the operations in `program_reader._RUNNABLE` are
    run; anything else, or arguments that do not match `args` exactly, is a ProgramError.
    Compiling is under its own time limit (COMPILE_SECONDS), running under LOOP_SECONDS,
    loop or not, and both under what is left of the check's (`within`). The evaluator keeps compiled
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
    import numpy as np

    text = bounded_to_run(text)
    _bounded_signature(text)
    budget = MAX_COST if budget is None else budget

    arrays = [np.asarray(a) for a in args]
    request = dict(args=arrays, global_view=bool(global_view), budget=[float(budget.flops), float(budget.bytes)])
    # Compiled first, under its own limit: XLA's time on a program is bounded apart from the run's.
    try:
        compiled = _forward("compile", text, seconds=COMPILE_SECONDS, **request)
    except EvaluatorFailure as e:
        if e.template == TOO_SLOW:
            raise EvaluatorFailure(COMPILE_TOO_SLOW, seconds=e.fields.get("seconds", COMPILE_SECONDS)) from None
        raise
    if compiled != []:
        raise EvaluatorFailure(REPLY_UNREADABLE)
    got = _forward("run", text, seconds=LOOP_SECONDS, **request)
    if type(got) is not list or not all(type(a) is np.ndarray for a in got):
        raise EvaluatorFailure(REPLY_UNREADABLE)
    return got


def _bounded_signature(text: str) -> None:
    """Refuse here, before the evaluator is asked anything, a program whose types say it holds a
    tensor or returns results larger than a program run by the check may (`bounded_sizes`). Read
    without a parser, so a text can hide a type from this reading: the evaluator checks the same
    bounds again from MLIR's reading, still before compiling."""
    _, main = entry_point(text)
    try:
        results = read_unverified(text, main).results
    except ProgramError:
        results = []  # a signature this reading cannot follow: MLIR's is the one that counts
    bounded_sizes(tensor_shapes(text), results)


def single_device(text: object) -> str:
    """The computation of a program lowered for a mesh, as a single-device module (see `run`).

    The result is printed by MLIR without locations: the same computation gives
    the same text, whatever the files it was lowered from.
    """
    text = bounded_to_run(text)
    got = _forward("single_device", text)
    if type(got) is not str:
        raise EvaluatorFailure(REPLY_UNREADABLE)
    return got


def cost(text: object) -> Cost:
    """The estimated cost of running a program (read by the evaluator; see `Cost`). A check
    may run a learner's program with `budget=cost(reference_text).times(k)`."""
    text = bounded_text(text)
    got = _forward("cost", text)
    if (type(got) is not list or len(got) != 3 or not all(type(x) is float and x >= 0 for x in got[:2])
            or type(got[2]) is not bool):
        raise EvaluatorFailure(REPLY_UNREADABLE)
    return Cost(got[0], got[1], got[2])


# -- bounded text to the evaluator, plain data back ------------------------------------


def _forward(op: str, text: str, *, seconds: float | None = None, **payload) -> object:
    """Send one request to the evaluator process (`program_reader.evaluate` answers it there),
    timed by its own limit and by what is left of the check's (`within`)."""
    global REQUESTS_DONE
    limit = READ_SECONDS if seconds is None else seconds
    clock = _CLOCK.get()
    if clock is not None:
        if clock[0] <= 0:
            raise EvaluatorFailure(TIME_USED, seconds=clock[1])
        limit = min(limit, clock[0])
    REQUESTS_DONE += 1
    begun = time.monotonic()
    try:
        return shared().call(op, {"text": text, **payload}, seconds=limit,
                             until=None if clock is None else begun + clock[0])
    except EvaluatorFailure as e:
        if clock is not None and e.template == TOO_SLOW and time.monotonic() - begun >= clock[0]:
            raise EvaluatorFailure(TIME_USED, seconds=clock[1]) from None
        raise
    finally:
        if clock is not None:
            clock[0] -= time.monotonic() - begun


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
