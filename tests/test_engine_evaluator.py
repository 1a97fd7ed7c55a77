"""The evaluator: a learner's program text is parsed, compiled and run only in a disposable process.

Each case is one that took down or stalled a trusted process before: a function
that calls itself, nested regions, a single costly operation, a padded text, a
reply of nested lists. The trusted process must refuse or survive each, with a
message, and run the next program as before.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
import tracemalloc

import jax
import jax.numpy as jnp
import numpy as np
import psutil
import pytest

from course.engine import evaluator, programs, wire
from course.engine.evidence import run_lowered
from course.engine.programs import ProgramError, cost, parse, run

SMALL = jax.jit(lambda x, w: jnp.tanh(x @ w)).lower(
    jax.ShapeDtypeStruct((3, 4), jnp.float32), jax.ShapeDtypeStruct((4, 2), jnp.float32)).as_text()
X, W = np.ones((3, 4), np.float32), np.full((4, 2), 0.1, np.float32)

# Passes MLIR's verifier; XLA's conversion of it recursed until SIGSEGV in the trusted process.
RECURSIVE = """module @jit_f {
  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %0 = func.call @f(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
    return %0 : tensor<3xf32>
  }
  func.func private @f(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %0 = func.call @f(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
"""


def _small_still_runs() -> None:
    (out,) = run(SMALL, X, W)
    np.testing.assert_allclose(out, np.tanh(X @ W), rtol=1e-5)


def _nested_cases(levels: int) -> str:
    """`levels` `stablehlo.case` regions nested in one another (about 60 bytes a level)."""
    parts = ["module @jit_f {\n  func.func public @main(%arg0: tensor<i32>, %arg1: tensor<f32>) -> tensor<f32> {\n"]
    parts += [f'%c{i} = "stablehlo.case"(%arg0) ({{\n' for i in range(levels)]
    parts.append("stablehlo.return %arg1 : tensor<f32>\n")
    for i in reversed(range(levels)):
        parts.append("}) : (tensor<i32>) -> tensor<f32>\n")
        parts.append(f"stablehlo.return %c{i} : tensor<f32>\n" if i else "return %c0 : tensor<f32>\n  }\n}\n")
    return "".join(parts)


def _requests_sent(monkeypatch) -> list:
    sent: list = []
    real = evaluator.Evaluator.call

    def counting(self, op, payload, **limits):
        sent.append(op)
        return real(self, op, payload, **limits)

    monkeypatch.setattr(evaluator.Evaluator, "call", counting)
    return sent


def test_a_function_that_calls_itself_fails_the_check_and_the_checking_process_survives():
    with pytest.raises(AssertionError, match="calls itself"):
        run_lowered(RECURSIVE, [np.ones(3, np.float32)], what="jax.jit(f)(x)")
    with pytest.raises(ProgramError, match="calls itself"):
        cost(RECURSIVE)
    _small_still_runs()



# A function named like a format string, with a newline and a terminal escape in its name:
# the name is the learner's, and comes back from the evaluator as a field of the message.
_HOSTILE_NAME = r'"{0.__class__} {name}\0A\1B[31m}"'
HOSTILE_RECURSIVE = RECURSIVE.replace("@f(", f"@{_HOSTILE_NAME}(")


def test_an_error_raised_in_the_evaluator_reads_in_the_learners_language():
    """The evaluator sends a template and its fields, not English: the trusted side words the
    error in the language in use when it is shown, and a learner's text in a field stays text."""
    from course import i18n

    with pytest.raises(ProgramError) as caught:
        cost(RECURSIVE)
    error = caught.value
    assert str(error) == "it calls @f, which it does not define (or which calls itself)"
    with pytest.raises(ProgramError) as hostile:
        programs.matrix_products(HOSTILE_RECURSIVE)
    try:
        i18n.set_language("ja")
        assert str(error) == "@f を呼び出していますが、この関数は定義されていないか、自分自身を呼び出しています"
        shown = f"{hostile.value}"  # as a check puts it into its own sentence
        assert shown.startswith("@{0.__class__} {name}\\x0a\\x1b[31m} を呼び出していますが、")
    finally:
        i18n.set_language("en")
    assert str(error).startswith("it calls @f,")
    assert str(hostile.value) == ("it calls @{0.__class__} {name}\\x0a\\x1b[31m}, which it does not define "
                                  "(or which calls itself)")


@pytest.mark.parametrize("reply", [
    {"error": "the lowered program does not verify"},  # bare text: no longer what the evaluator sends
    {"error": ["{0.__class__.__mro__}", {}]},  # not one of programs.MESSAGES
    {"error": [programs.UNDEFINED_CALL, {}]},  # a field missing
    {"error": [programs.UNDEFINED_CALL, {"name": "f", "extra": 1}]},
    {"error": [programs.UNDEFINED_CALL, {"name": True}]},
    {"error": [programs.UNDEFINED_CALL, {"name": ["f"]}]},
    {"error": [programs.UNDEFINED_CALL, {"name": "f"}, 3]},
    {"error": [programs.TOO_MANY_FLOPS, {"work": "many", "limit": 1.0}]},  # a number as text: .2g fails
    {"warning": "x"},
    {"ok": 1, "error": "x"},
])
def test_a_malformed_error_reply_is_a_clear_failure(reply, monkeypatch):
    ev = evaluator.Evaluator(isolation=None)
    ev._ready = True
    monkeypatch.setattr(ev, "_alive", lambda: True)
    monkeypatch.setattr(ev, "_send", lambda *a: None)
    monkeypatch.setattr(ev, "_receive", lambda *a: reply)
    monkeypatch.setattr(ev, "_stop", lambda: None)
    with pytest.raises(programs.EvaluatorFailure) as caught:
        ev.call("cost", {"text": "x"}, seconds=1.0)
    assert str(caught.value) == "your program could not be run: the evaluator sent a reply the check cannot read"


def test_a_well_formed_error_reply_keeps_its_fields_as_text(monkeypatch):
    ev = evaluator.Evaluator(isolation=None)
    ev._ready = True
    monkeypatch.setattr(ev, "_alive", lambda: True)
    monkeypatch.setattr(ev, "_send", lambda *a: None)
    monkeypatch.setattr(ev, "_receive", lambda *a: {"error": [programs.XLA_CANNOT_COMPILE,
                                                              {"detail": "{x}\x1b]0;t\x07" + "y" * 5000}]})
    with pytest.raises(ProgramError) as caught:
        ev.call("cost", {"text": "x"}, seconds=1.0)
    shown = str(caught.value)
    assert shown.startswith("XLA cannot compile it: {x}\\x1b]0;t\\x07yyy") and shown.endswith("…")
    assert "\x1b" not in shown and len(shown) < 400

ENDLESS = jax.jit(lambda x: jax.lax.while_loop(lambda c: c[0] >= 0, lambda c: (c[0] + 1.0, c[1] * 1.5),
                                                (jnp.float32(0), x))[1]).lower(jax.ShapeDtypeStruct((3,), jnp.float32)).as_text()


def test_an_evaluator_that_crashes_fails_that_program_and_the_next_one_runs(monkeypatch):
    _small_still_runs()
    ev = evaluator.shared()
    launched = psutil.Process(ev.pid)
    serving = [p for p in [launched, *launched.children(recursive=True)]
               if any("evaluator.py" in part for part in p.cmdline())][-1]
    monkeypatch.setattr(programs, "LOOP_SECONDS", 300.0)
    idle = sum(serving.cpu_times()[:2])
    failures: list = []
    runner = threading.Thread(target=lambda: failures.append(_failure_of(ENDLESS, np.ones(3, np.float32))))
    runner.start()
    deadline = time.monotonic() + 120
    while sum(serving.cpu_times()[:2]) < idle + 0.5 and time.monotonic() < deadline:  # it is running the loop
        time.sleep(0.05)
    os.kill(serving.pid, signal.SIGSEGV)
    runner.join(timeout=120)
    assert failures and "could not be run: it crashed the evaluator (SIGSEGV)" in failures[0]
    started = ev.started
    _small_still_runs()
    assert ev.started == started + 1


def _failure_of(text, *args) -> str:
    try:
        run_lowered(text, list(args), what="jax.jit(f)(x)")
    except AssertionError as e:
        return str(e)
    return "it ran"


def test_deeply_nested_regions_are_refused_before_any_parser_sees_them(monkeypatch):
    text = _nested_cases(11_000)  # 1.2 MB, as deep as the parser cannot go
    assert len(text) > 1_000_000
    sent = _requests_sent(monkeypatch)
    begun = time.monotonic()
    with pytest.raises(ProgramError, match="nests its brackets more than 256 deep"):
        parse(text)
    for read in (cost, programs.matrix_products):
        with pytest.raises(ProgramError, match="nests its brackets"):
            read(text)
    assert time.monotonic() - begun < 5
    assert sent == []
    assert len(parse(_nested_cases(20)).args) == 2  # a few nested cases are an ordinary program


def _affine_map_nested(levels: int) -> str:
    """A module with an attribute that nests an affine map `levels` deep, every 200 levels
    followed by a `//` comment line of 200 closing parentheses: MLIR's lexer drops the
    comments, and its parser recurses once per level of the map."""
    step = "(" * 200 + "\n// " + ")" * 200 + "\n"
    nested = ("affine_map<(d0) -> (" + step * (levels // 200) + "(" * (levels % 200) + "d0"
              + ")" * levels + ")>")
    assert SMALL.count("attributes {") == 1
    return SMALL.replace("attributes {", "attributes {jaxlings.map = " + nested + ", ", 1)


def test_brackets_in_comments_and_strings_do_not_hide_a_deep_nesting(monkeypatch):
    text = _affine_map_nested(280_000)
    assert len(text) < programs.MAX_PROGRAM_CHARS
    sent = _requests_sent(monkeypatch)
    for read in (parse, cost, programs.matrix_products):
        with pytest.raises(ProgramError, match="nests its brackets more than 256 deep"):
            read(text)
    with pytest.raises(ProgramError, match="nests its brackets"):
        run(text, X, W)
    assert sent == []
    # In a string, brackets are text: a name full of them nests nothing.
    quoted = '#name = "' + ")(" * 300 + "(" * 300 + '\\"//"\n' + SMALL
    assert not programs.nesting_over(quoted)
    assert programs.nesting_over(_affine_map_nested(300))
    assert len(parse(_affine_map_nested(250)).args) == 2  # MLIR reads the map through its comments
    # A quote in a comment opens no string, `//` in a string starts no comment, `->` closes nothing.
    assert programs.nesting_over('// "\n' + "(" * 300 + '"')
    assert programs.nesting_over('"//"' + "(" * 300)
    assert programs.nesting_over("(" * 200 + "->" * 100 + "(" * 100)
    (out,) = run(quoted, X, W)
    np.testing.assert_allclose(out, np.tanh(X @ W), rtol=1e-5)


def test_a_padded_text_is_refused_by_its_size_before_parsing(monkeypatch):
    sent = _requests_sent(monkeypatch)
    padded = SMALL.replace("return", " " * 19_000_000 + "return", 1)
    begun = time.monotonic()
    for read in (parse, cost, programs.matrix_products):
        with pytest.raises(ProgramError, match="characters"):
            read(padded)
    with pytest.raises(ProgramError, match="characters"):
        run(padded, X, W)
    assert time.monotonic() - begun < 5
    assert sent == []


def test_a_single_costly_reduce_window_is_refused_by_its_cost_fast():
    x = jax.ShapeDtypeStruct((1000, 1000), jnp.float32)  # a quarter of the tensor-size limit
    text = jax.jit(lambda a: jax.lax.reduce_window(a, 0.0, jax.lax.add, (1000, 1000), (1, 1), "SAME")
                   ).lower(x).as_text()
    assert cost(text).flops > 1e11
    begun = time.monotonic()
    with pytest.raises(ProgramError, match="arithmetic operations, more than"):
        run(text, np.ones((1000, 1000), np.float32))
    assert time.monotonic() - begun < 20
    _small_still_runs()


def _gigabytes_of_results() -> str:
    """120 results of 4,000,000 float32 each: every tensor within MAX_TENSOR_ELEMENTS, 1.9 GB in all,
    for almost no arithmetic (each a broadcast)."""
    x = jax.ShapeDtypeStruct((4,), jnp.float32)
    return jax.jit(lambda a: [jnp.broadcast_to(a[0] + i, (4_000_000,)) for i in range(120)]).lower(x).as_text()


def test_results_of_gigabytes_are_refused_from_the_signature_before_anything_compiles(monkeypatch):
    text = _gigabytes_of_results()
    assert cost(text).bytes < programs.MAX_COST.bytes  # its cost does not refuse it
    sent = _requests_sent(monkeypatch)
    begun = time.monotonic()
    with pytest.raises(ProgramError, match="returns 1831 MiB of results, more than the 64 MiB the check reads back"):
        run(text, np.ones(4, np.float32))
    assert sent == []  # refused here, from its types: the evaluator was not asked
    # The evaluator refuses it again from MLIR's reading of its types, before compiling it.
    monkeypatch.setattr(programs, "_bounded_signature", lambda text: None)
    with pytest.raises(ProgramError, match="returns 1831 MiB of results"):
        run(text, np.ones(4, np.float32))
    assert sent == ["compile"]
    assert time.monotonic() - begun < programs.COMPILE_SECONDS  # generous: it is read, never compiled
    _small_still_runs()


def _chained_products(n: int) -> str:
    """`n` products of 2x2 matrices, one after the other: nothing to compute, minutes for XLA to compile."""
    def chain(x, w):
        for _ in range(n):
            x = x @ w
        return x

    square = jax.ShapeDtypeStruct((2, 2), jnp.float32)
    return jax.jit(chain).lower(square, square).as_text()


def test_a_compile_time_bomb_costs_a_check_no_more_than_its_time_limit():
    from course.engine.settings import DEFAULT_TIMEOUT

    bomb = _chained_products(4000)
    eye = np.eye(2, dtype=np.float32)
    assert cost(bomb).flops < 1e5 and len(bomb) < programs.MAX_RUN_CHARS  # neither cost nor size refuses it
    _small_still_runs()
    failures = []
    begun = time.monotonic()
    with programs.within(DEFAULT_TIMEOUT):  # as a check run gives its programs its exercise's limit
        for _ in range(3):  # one per test of the check that sends the program
            with pytest.raises(ProgramError) as failed:
                run(bomb, eye, eye)
            failures.append(str(failed.value))
    spent = time.monotonic() - begun
    assert failures[0] == f"your program could not be run: XLA took longer than {programs.COMPILE_SECONDS:g} s to compile it"
    assert failures[-1] == f"your programs used up the {DEFAULT_TIMEOUT:g} s the check gives to reading and running them"
    assert spent < 2 * DEFAULT_TIMEOUT, spent  # generous: the limit, and what ending a request takes
    _small_still_runs()  # outside the check's time, programs run as before


def test_a_checks_time_for_programs_counts_the_evaluators_time_only():
    _small_still_runs()  # compiled, in a warm evaluator
    with programs.within(5.0):
        time.sleep(6)  # as the learner's code would spend it, between two programs
        _small_still_runs()
    with programs.within(0.0), pytest.raises(ProgramError, match="used up the 0 s"):
        _small_still_runs()


def test_a_budget_from_the_reference_refuses_a_dearer_matrix_product():
    spec = jax.ShapeDtypeStruct((512, 512), jnp.float32)
    reference = jax.jit(lambda a, b: a + b).lower(spec, spec).as_text()
    product = jax.jit(lambda a, b: (a @ b) @ b).lower(spec, spec).as_text()
    a = np.eye(512, dtype=np.float32)
    budget = cost(reference).times(20)
    run(reference, a, a, budget=budget)
    assert cost(product).flops == pytest.approx(2 * 2 * 512 ** 3)
    with pytest.raises(ProgramError, match="arithmetic operations"):
        run(product, a, a, budget=budget)
    (out,) = run(product, a, a)  # under the fixed ceiling, it runs
    np.testing.assert_allclose(out, a)


def test_a_loop_is_costed_by_its_trip_count():
    step = jax.ShapeDtypeStruct((64, 64), jnp.float32)
    once = cost(jax.jit(lambda a: a @ a).lower(step).as_text()).flops
    looped = cost(jax.jit(lambda a: jax.lax.fori_loop(0, 50, lambda i, c: c @ a, a)).lower(step).as_text())
    assert looped.bounded and looped.flops >= 50 * once


def test_a_40_mb_reply_of_nested_empty_lists_is_refused_with_bounded_memory():
    item = b'{"l":[]},'
    body = b'{"l":[' + item * (40_000_000 // len(item)) + b'{"l":[]}]}'
    assert len(body) > 40_000_000
    tracemalloc.start()
    try:
        with pytest.raises(wire.DecodeError, match=r"lists (or|and) objects"):
            wire.decode(body)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000  # counted, never parsed
    assert wire.decode(wire.encode({"x": [np.arange(3), [1.0, "a"]]}))["x"][1] == [1.0, "a"]


def test_a_learner_that_floods_the_protocol_with_nested_lists_fails_with_bounded_memory():
    from pathlib import Path

    from course.catalog import load_catalog
    from course.engine.runner import CheckSession

    attack = Path(__file__).resolve().parent / "attacks" / "jit_branch" / "nested_list_reply.py"
    with CheckSession(warm=False) as session:
        tracemalloc.start()
        try:
            result = session.run(load_catalog().exercise("jit_branch"), learner_file=attack)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert not result.passed and result.cause == "not_plain_data", (result.cause, result.message)
    assert re.search(r"lists (or|and) objects", result.message), result.message
    assert peak < 200 * 2**20, f"reading the reply took {peak >> 20} MiB"  # the reply is 40 MB


def test_a_reply_whose_strings_hold_brackets_is_read_not_called_a_crash(tmp_path):
    """Brackets in a string are text: such a reply reaches the check, which judges it."""
    from course.catalog import load_catalog
    from course.engine.runner import CheckSession

    learner = tmp_path / "jit_branch.py"
    key = "[" * (wire.MAX_CONTAINERS + 1)  # JAX writes it into the lowered text the probe sends back
    learner.write_text("def clip_by_norm(g, max_norm):\n    return {%r: g}\n\n\n"
                       "def huber_loss(pred, target, delta):\n    return {%r: pred}\n" % (key, key), encoding="utf-8")
    with CheckSession(warm=False) as session:
        result = session.run(load_catalog().exercise("jit_branch"), learner_file=learner)
    assert not result.passed
    assert result.cause not in ("crash", "not_plain_data"), (result.cause, result.message)
    assert "crashed" not in result.message and "refused the reply" not in result.message
