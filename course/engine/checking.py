"""What hidden checks use: assertions with learner-friendly messages, and failures.

See `course/checks/README.md`. Every message ends with the seed of the run so a
failure can be replayed with `JAXLINGS_SEED=<seed>`.

Messages are built here, in the trusted parent that judges, in the learner's
language (`course.engine.words`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from course.engine.words import N_, _

# The seed of the check run in progress; set by the runner (one run at a time
# per process), read by assertion messages.
_current_seed: int | None = None


SEED_LINE = N_("(seed {seed}: rerun with JAXLINGS_SEED={seed})")


def seed_line(seed: int) -> str:
    """The line that tells how to replay a run with the same random inputs."""
    return _(SEED_LINE).format(seed=seed)


def has_seed_line(message: str) -> bool:
    return "JAXLINGS_SEED=" in message or "(seed " in message


class LearnerFailure(Exception):
    """The learner's code could not produce a result; `cause` says why."""

    def __init__(self, cause: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.cause = cause
        self.message = message
        self.details = details

    def __str__(self) -> str:
        return _with_seed(self.message)


class CheckFailure(AssertionError):
    """The learner's result is wrong (cause `wrong_result` or `no_result`)."""

    def __init__(self, message: str, cause: str = "wrong_result") -> None:
        super().__init__(message)
        self.cause = cause
        self.message = message

    def __str__(self) -> str:
        return _with_seed(self.message)


def _with_seed(message: str) -> str:
    if _current_seed is None or has_seed_line(message):
        return message
    return f"{message}\n{seed_line(_current_seed)}"


class side_by_side:
    """Ask the learner's child and the reference the same question at once.

    `got, want = side_by_side(learner, reference).probe(fn, *args)` is
    `learner.probe(fn, *args), reference.probe(fn, *args)` (and `.call` is
    `call`), with the two answered side by side: the learner's request waits
    on its child from a thread of this process while the reference computes
    in this thread. The first time a check meets new shapes, both sides
    compile, and each gets a core instead of waiting for the other.

    The learner's failure wins over the reference's, as if the learner had
    been asked first; the reference's answer is then dropped.
    """

    def __init__(self, learner: Any, reference: Any) -> None:
        self._learner = learner
        self._reference = reference

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        return self._ask(lambda side: side.call(name, *args, **kwargs))

    def probe(self, fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        return self._ask(lambda side: side.probe(fn, *args, **kwargs))

    def probe_each(self, learner_fn: Any, reference_fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        """The same arguments to a probe of each side's own (e.g. the learner's loop and the plain one)."""
        return self._ask(lambda side: side.probe(learner_fn if side is self._learner else reference_fn,
                                                 *args, **kwargs))

    def _ask(self, ask: Any) -> tuple[Any, Any]:
        import threading

        box: dict[str, Any] = {}

        def learner_side() -> None:
            try:
                box["value"] = ask(self._learner)
            except BaseException as e:  # noqa: BLE001 - handed to the check's thread below
                box["error"] = e

        thread = threading.Thread(target=learner_side, name="jaxlings-learner-request", daemon=True)
        thread.start()
        # Ctrl-C (or any BaseException) in the reference propagates at once: closing the
        # run ends the learner's child, and with it the request this thread waits on.
        try:
            want, want_error = ask(self._reference), None
        except Exception as e:  # noqa: BLE001 - the learner's failure, if any, comes first
            want, want_error = None, e
        while thread.is_alive():  # in slices, so that Ctrl-C is seen here (see watching._next_event)
            thread.join(0.2)
        if "error" in box:
            raise box["error"]
        if want_error is not None:
            raise want_error
        return box["value"], want


def _fail_expected(what: str, want: str, got: str) -> None:
    fail(_("{what}: expected {want}, got {got}.").format(what=what, want=want, got=got))


def _fail_value(what: str, want: Any, got: Any) -> None:
    fail(_("{what}: expected {want} ({want_type}), got {got} ({got_type}).").format(
        what=what, want=_preview(want), want_type=describe(want), got=_preview(got), got_type=describe(got)))


def fail(message: str) -> None:
    """Fail the check with a wrong-result message written for the learner."""
    raise CheckFailure(message)


def describe(value: Any) -> str:
    """A short description of a plain value: type, shape and dtype for arrays."""
    if isinstance(value, np.ndarray):
        return _("array of shape {shape} and dtype {dtype}").format(shape=value.shape, dtype=value.dtype)
    if isinstance(value, np.generic):
        return _("NumPy {dtype} scalar").format(dtype=value.dtype)
    if isinstance(value, (list, tuple)):
        return _("{type} of length {n}").format(type=type(value).__name__, n=len(value))
    if isinstance(value, dict):
        keys = ", ".join(repr(k) for k in list(value)[:8])
        return _("dict with keys [{keys}]").format(keys=keys + (", ..." if len(value) > 8 else ""))
    return type(value).__name__


def _preview(value: Any, limit: int = 300) -> str:
    if isinstance(value, np.ndarray):
        with np.printoptions(precision=5, threshold=20, edgeitems=3, linewidth=100):
            text = np.array2string(value)
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _numeric_kind(x: Any) -> str | None:
    if isinstance(x, (np.ndarray, np.generic)):
        kind = x.dtype.kind
        return {"b": "bool", "i": "int", "u": "int"}.get(kind, kind if kind in "fc" else None)
    if isinstance(x, bool):
        return "bool"
    if isinstance(x, int):
        return "int"
    if isinstance(x, (float, complex)):
        return "f" if isinstance(x, float) else "c"
    return None


def _dtype_problem(got: Any, want: Any, dtype: Any) -> str | None:
    """Why `got`'s dtype is not acceptable, or None.

    `dtype` names the dtype the statement asks for. Without one, two arrays of
    floating point must have the same dtype (float64 where the reference makes
    float32 is a mistake, not rounding); a Python or NumPy scalar is compared by
    kind, since a statement that asks for "a number" accepts any float.
    """
    if dtype is not None:
        want_dtype = np.dtype(dtype)
        got_dtype = got.dtype if isinstance(got, (np.ndarray, np.generic)) else None
        if got_dtype != want_dtype:
            have = (_("dtype {dtype}").format(dtype=got_dtype) if got_dtype is not None
                    else _("a Python {type}").format(type=type(got).__name__))
            return _("expected dtype {want}, got {got}").format(want=want_dtype, got=have)
        return None
    if (isinstance(got, np.ndarray) and isinstance(want, np.ndarray) and want.dtype.kind in "fc"
            and got.dtype != want.dtype):
        return _("expected dtype {want}, got {got}").format(want=want.dtype,
                                                            got=_("dtype {dtype}").format(dtype=got.dtype))
    return None


def assert_close(got: Any, want: Any, *, what: str, rtol: float = 1e-5, atol: float = 1e-6,
                 dtype: Any = None) -> None:
    """`got` (the learner's) matches `want` (the reference's): kind, shape, dtype and values.

    Floating-point arrays must have the reference's exact dtype; pass `dtype=` where
    the statement names one (it is then required of scalars too).
    """
    if got is None and want is not None:
        raise CheckFailure(_("{what}: got None, expected {want}. Did you forget a `return`?").format(
            what=what, want=describe(want)), "no_result")
    kind_got, kind_want = _numeric_kind(got), _numeric_kind(want)
    if kind_want is None:
        assert_equal(got, want, what=what)
        return
    if kind_got is None:
        fail(_("{what}: expected {want}, got {got}: {preview}").format(
            what=what, want=describe(want), got=describe(got), preview=_preview(got)))
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape:
        fail(_("{what}: expected shape {want}, got shape {got} ({described}).").format(
            what=what, want=w.shape, got=g.shape, described=describe(got)))
    if kind_got != kind_want and not (kind_got in "fc" and kind_want in "fc"):
        fail(_("{what}: expected a {want_kind} result ({want}), got a {got_kind} one ({got}).").format(
            what=what, want_kind=_kind_name(kind_want), want=describe(want), got_kind=_kind_name(kind_got),
            got=describe(got)))
    problem = _dtype_problem(got, want, dtype)
    if problem:
        fail(_("{what}: {problem}. Keep the dtype the exercise asks for: check the dtype of "
               "your inputs and constants (NumPy makes float64 by default, JAX float32).").format(
            what=what, problem=problem))
    if kind_want == "bool" or kind_want == "int":
        ok = np.array_equal(g, w)
    else:
        ok = bool(np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True))
    if not ok:
        detail = ""
        if g.size > 1 and kind_want not in ("bool",):
            diff = np.abs(g.astype(np.complex128) - w.astype(np.complex128))
            idx = np.unravel_index(int(np.nanargmax(np.where(np.isnan(diff), np.inf, diff))), g.shape)
            detail = "\n" + _("Largest difference at index {index}: expected {want}, got {got}.").format(
                index=tuple(int(i) for i in idx), want=repr(w[idx]), got=repr(g[idx]))
        expected, got_label = _("expected:"), _("got:")
        width = max(_cells(expected), _cells(got_label)) + 1
        fail(
            _("{what}: values differ (shape {shape}, rtol={rtol}, atol={atol}).").format(
                what=what, shape=w.shape, rtol=rtol, atol=atol) + "\n"
            f"{_pad(expected, width)}{_preview(w)}\n{_pad(got_label, width)}{_preview(g)}{detail}"
        )


def _cells(text: str) -> int:
    from rich.cells import cell_len

    return cell_len(text)


def _pad(label: str, width: int) -> str:
    """`label` padded to `width` terminal cells (a Japanese character takes two)."""
    return label + " " * (width - _cells(label))


def _kind_name(kind: str) -> str:
    names = {"bool": N_("bool"), "int": N_("integer"), "f": N_("floating-point"), "c": N_("complex")}
    return _(names[kind]) if kind in names else kind


def assert_tree_close(got: Any, want: Any, *, what: str, rtol: float = 1e-5, atol: float = 1e-6,
                      dtype: Any = None) -> None:
    """Same structure (dict keys, sequence lengths); every leaf compared with `assert_close`."""
    if got is None and want is not None:
        raise CheckFailure(_("{what}: got None, expected {want}. Did you forget a `return`?").format(
            what=what, want=describe(want)), "no_result")
    if isinstance(want, dict):
        if not isinstance(got, dict):
            _fail_expected(what, describe(want), describe(got))
        if set(got) != set(want):
            missing = sorted(set(want) - set(got))
            extra = sorted(set(got) - set(want))
            parts = [_("missing keys {keys}").format(keys=missing) if missing else "",
                     _("unexpected keys {keys}").format(keys=extra) if extra else ""]
            fail(_("{what}: the structure differs: {differences}.").format(
                what=what, differences="; ".join(p for p in parts if p)))
        for k in want:
            assert_tree_close(got[k], want[k], what=f"{what}[{k!r}]", rtol=rtol, atol=atol, dtype=dtype)
        return
    if isinstance(want, (list, tuple)):
        if not isinstance(got, (list, tuple)):
            _fail_expected(what, describe(want), describe(got))
        if len(got) != len(want):
            fail(_("{what}: expected {want} items, got {got}.").format(what=what, want=len(want), got=len(got)))
        for i, (g, w) in enumerate(zip(got, want)):
            assert_tree_close(g, w, what=f"{what}[{i}]", rtol=rtol, atol=atol, dtype=dtype)
        return
    assert_close(got, want, what=what, rtol=rtol, atol=atol, dtype=dtype)


def assert_equal(got: Any, want: Any, *, what: str) -> None:
    """Exact equality of plain data (arrays: same shape, dtype kind and values)."""
    if got is None and want is not None:
        raise CheckFailure(_("{what}: got None, expected {want}. Did you forget a `return`?").format(
            what=what, want=describe(want)), "no_result")
    if isinstance(want, np.ndarray) or isinstance(got, np.ndarray):
        if not (isinstance(want, np.ndarray) and isinstance(got, np.ndarray)):
            _fail_expected(what, describe(want), describe(got))
        if got.shape != want.shape or got.dtype.kind != want.dtype.kind or not np.array_equal(got, want):
            fail(_("{what}: expected {want} {want_preview}\ngot {got} {got_preview}").format(
                what=what, want=describe(want), want_preview=_preview(want), got=describe(got),
                got_preview=_preview(got)))
        return
    if isinstance(want, dict) and isinstance(got, dict):
        if set(got) != set(want):
            fail(_("{what}: expected keys {want}, got keys {got}.").format(what=what, want=sorted(want),
                                                                             got=sorted(got)))
        for k in want:
            assert_equal(got[k], want[k], what=f"{what}[{k!r}]")
        return
    if isinstance(want, (list, tuple)) and isinstance(got, (list, tuple)):
        if type(got) is not type(want):
            fail(_("{what}: expected a {want}, got a {got}.").format(what=what, want=type(want).__name__,
                                                                       got=type(got).__name__))
        if len(got) != len(want):
            fail(_("{what}: expected {want} items, got {got}.").format(what=what, want=len(want), got=len(got)))
        for i, (g, w) in enumerate(zip(got, want)):
            assert_equal(g, w, what=f"{what}[{i}]")
        return
    if isinstance(got, np.generic) and not isinstance(want, np.generic) and type(want) in (float, complex) \
            and isinstance(got, type(want)):
        got = type(want)(got)  # np.float64 is a Python float
    if isinstance(want, np.generic) or isinstance(got, np.generic):
        if not (isinstance(want, np.generic) and isinstance(got, np.generic)) or got.dtype != want.dtype \
                or not np.array_equal(got, want):
            _fail_value(what, want, got)
        return
    # bool is an int subclass: True must not pass for 1, nor 1.0 for 1.
    if type(got) is not type(want) or got != want:
        _fail_value(what, want, got)
