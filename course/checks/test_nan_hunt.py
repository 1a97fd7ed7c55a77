"""Checks for nan_hunt: a normalisation with finite gradients, and an entropy checked inside jit.

Evidence: the learner's process lowers three programs on shapes alone (the
normalisation, the gradient of a sum that holds it, and the checkified entropy
inside a function of the check's own) and returns their text. The programs run
here, on inputs drawn after they came back; every expected value (the exact
normalisation, its gradient, the entropy, which inputs are invalid) is computed
here with NumPy. A library patched in the learner's process cannot change a
program's outputs without changing the program: a gradient cleaned of NaNs
shows on the check's own naive norm, which is differentiated in the same
program, and a check added by a patched `checkify` around the whole function
fires on the check's own arguments, not on the learner's input. Only the
wording of the error comes from the learner's process, and it is only read
where the program run here fired.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import fail
from course.engine.programs import ProgramError, run
from course.engine.words import N_, _

TIMEOUT = 90
# Three axes of different sizes, every time: on a 2-D array, axis=1 is the last axis, so a
# function that reduces along axis 1 (not -1) would pass whenever a 2-D shape was drawn.
NORM_SHAPES = [(4, 2, 5), (3, 5, 3)]
ENTROPY_SHAPES = [(3, 2, 5), (2, 3, 4)]
# Row kinds drawn for the normalisation, each at least once per array: where the naive
# gradient is NaN, where a per-element guard miscounts, where an epsilon or PyTorch's
# clamp at 1e-12 changes the value, where x * x is large.
ZERO, MIXED, TINY, LARGE = N_("a row of zeros"), N_("a row mixing zeros and nonzeros"), N_("a row of norm ~1e-13"), \
    N_("a row of norm ~1e13")
KINDS = (ZERO, MIXED, TINY, LARGE)


# --- probe (run in the learner's process; it only lowers programs) -----------------------------

def probe_programs(module, shape, entropy_shape):
    import jax
    import jax.numpy as jnp
    from jax.experimental import checkify

    f32 = jnp.float32
    spec = jax.ShapeDtypeStruct(tuple(shape), f32)

    def loss(v, order, w0, w1):
        # Which half of v the learner's function sees is an input, chosen after lowering; the
        # other half goes through a naive norm, whose gradient JAX makes NaN on a row of zeros.
        u = v[order]
        mine = jnp.sum(w0 * module.safe_normalize(u[0]))
        naive = jnp.sum(w1 * jnp.sqrt(jnp.sum(u[1] * u[1], axis=-1)))
        return mine + naive

    def composed(q, s, v):
        # The learner's input is computed here (q * s); log(v) of negative v is NaN, never an error.
        # 2 * v, which the learner never sees, marks where the learner's result begins: exactly one
        # array lies between it and log(v), whatever the error part holds.
        return 2.0 * v, module.checked_entropy(q * s), jnp.log(v)

    e = jax.ShapeDtypeStruct(tuple(entropy_shape), f32)
    return {
        "forward": jax.jit(module.safe_normalize).lower(spec).as_text(),
        "grad": jax.jit(jax.grad(loss), keep_unused=True).lower(
            jax.ShapeDtypeStruct((2, *shape), f32), jax.ShapeDtypeStruct((2,), jnp.int32), spec,
            jax.ShapeDtypeStruct(tuple(shape[:-1]), f32)).as_text(),
        "entropy": jax.jit(checkify.checkify(composed)).lower(e, e, e).as_text(),
    }


def probe_messages(module, batches):
    import jax
    import jax.numpy as jnp
    from jax.experimental import checkify

    checked = jax.jit(checkify.checkify(module.checked_entropy))
    out = []
    for p in batches:
        message = checked(jnp.asarray(p))[0].get()
        out.append(None if message is None else str(message)[:500])
    return out


# --- the trusted side ----------------------------------------------------------------------------

def _rows(rng, shape):
    """x of `shape` whose rows are of every kind in KINDS (and ordinary ones), and each row's kind."""
    n, d = int(np.prod(shape[:-1])), shape[-1]
    rows = rng.standard_normal((n, d))
    kinds = [KINDS[i] if i < len(KINDS) else N_("an ordinary row") for i in range(n)]
    order = rng.permutation(n)
    rows, kinds = rows[order], [kinds[i] for i in order]
    for i, kind in enumerate(kinds):
        if kind == ZERO:
            rows[i] = 0.0
        elif kind == MIXED:
            zeros = rng.choice(d, size=int(rng.integers(1, d)), replace=False)
            rows[i, zeros] = 0.0
        elif kind == TINY:
            rows[i] *= 1e-13
        elif kind == LARGE:
            rows[i] *= 1e13
    return rows.astype(np.float32).reshape(shape), np.array(kinds)


def _programs(learner, rng):
    shape = NORM_SHAPES[int(rng.integers(len(NORM_SHAPES)))]
    entropy_shape = ENTROPY_SHAPES[int(rng.integers(len(ENTROPY_SHAPES)))]
    texts = learner.probe(probe_programs, shape, entropy_shape)
    if not isinstance(texts, dict) or not all(isinstance(texts.get(k), str) for k in ("forward", "grad", "entropy")):
        fail(_("the check could not lower safe_normalize and checked_entropy with jax.jit for x {shape} "
               "(got {type}). Both must be traceable by jax.jit.").format(shape=shape, type=type(texts).__name__))
    return shape, entropy_shape, texts


def _run(text, what, *args):
    try:
        return run(text, *args)
    except (ProgramError, ValueError) as e:
        fail(_("{what}, lowered with jax.jit, could not be run by the check: {e}").format(what=what, e=e))


def _exact(x):
    x64 = x.astype(np.float64)
    r = np.sqrt(np.sum(x64 * x64, axis=-1, keepdims=True))
    return np.where(r > 0, x64 / np.where(r > 0, r, 1.0), 0.0), r


def _rows_off(got, want, kinds, tol):
    """The kinds of the rows where got and want differ by more than tol (relative to the row's scale)."""
    g, w = got.reshape(-1, got.shape[-1]), want.reshape(-1, want.shape[-1])
    bad = ~np.all(np.abs(g - w) <= tol, axis=-1)
    return sorted(set(kinds[bad]))


def test_safe_normalize_values_run_here(learner, rng):
    shape, __, texts = _programs(learner, rng)
    x, kinds = _rows(rng, shape)
    (got,) = _run(texts["forward"], _("safe_normalize for x {shape}").format(shape=shape), x)
    call = _("safe_normalize(x {shape}), run by the check").format(shape=shape)
    if got.shape != shape:
        fail(_("{call} returned shape {shape}, expected {want}: x divided by its norm along the last axis.").format(
            call=call, shape=got.shape, want=shape))
    if got.dtype != np.float32:
        fail(_("{call} has dtype {dtype}, expected float32.").format(call=call, dtype=got.dtype))
    want, __ = _exact(x)
    off = _rows_off(got.astype(np.float64), want, kinds, 1e-5)
    if not off:
        return
    for axis in range(len(shape) - 1):
        other, __ = _exact(np.moveaxis(x, axis, -1))
        if np.allclose(got, np.moveaxis(other, -1, axis), rtol=1e-5, atol=1e-5):
            fail(_("{call} normalises along axis {axis}; the statement asks for the norm along the last axis.").format(
                call=call, axis=axis))
    if ZERO in off:
        fail(_("{call}: {zero} gives {row}, not zeros: pick 0 there with "
               "the second jnp.where.").format(
            call=call, zero=_(ZERO), row=got.reshape(-1, shape[-1])[kinds == ZERO][0]))
    if TINY in off:
        fail(_("{call}: {tiny} is not divided exactly. An epsilon, or a clamp of the norm like PyTorch's "
               "F.normalize (max(norm, 1e-12)), changes small rows; the double where needs neither.").format(
            call=call, tiny=_(TINY)))
    if MIXED in off:
        fail(_("{call}: {mixed} is wrong. A guard applied element by element (where(x != 0, x, 1)) changes the "
               "norm of such a row; guard the row's sum of squares instead.").format(call=call, mixed=_(MIXED)))
    fail(_("{call} differs from x / ||x|| along the last axis in {rows} "
           "(up to {diff:.3g}).").format(
        call=call, rows=", ".join(_(kind) for kind in off), diff=float(np.nanmax(np.abs(got - want)))))


def test_safe_normalize_gradient_run_here(learner, rng):
    shape, __, texts = _programs(learner, rng)
    halves = [_rows(rng, shape) for _ in range(2)]
    v = np.stack([h[0] for h in halves])
    order = rng.permutation(2).astype(np.int32)
    w0 = rng.standard_normal(shape).astype(np.float32)
    w1 = rng.standard_normal(shape[:-1]).astype(np.float32)
    (grad,) = _run(texts["grad"], _("the gradient of sum(w * safe_normalize(x))"), v, order, w0, w1)
    if grad.shape != v.shape:
        fail(_("the gradient program returned shape {shape}, expected {want}.").format(shape=grad.shape, want=v.shape))
    # The check's own naive norm: JAX's gradient is NaN exactly on its rows of zeros.
    z, z_kinds = halves[order[1]]
    naive = grad[order[1]].reshape(-1, shape[-1])
    zero_rows = z_kinds == ZERO
    if not np.all(np.isnan(naive[zero_rows])):
        fail(_("the gradient of the check's own naive norm, jnp.sqrt(jnp.sum(x * x, -1)), is finite on a row of "
               "zeros, where JAX gives NaN: something cleans NaNs out of gradients (a patched jax.grad?). Make "
               "safe_normalize itself safe."))
    x, kinds = halves[order[0]]
    mine = grad[order[0]]
    call = _("the gradient of sum(w * safe_normalize(x)) for x {shape}, run by the check").format(shape=shape)
    bad = ~np.isfinite(mine.reshape(-1, shape[-1])).all(axis=-1)
    if bad.any():
        fail(_("{call} has non-finite entries (NaN or inf) in {rows}. The unused "
               "side of jnp.where is still differentiated: keep the division's input safe with a first where, "
               "then pick the result with a second one.").format(
            call=call, rows=", ".join(_(kind) for kind in sorted(set(kinds[bad])))))
    u, r = _exact(x)
    w = w0.astype(np.float64)
    # d/dx sum(w * x / r) = (w - (w . u) u) / r; 0 on a row of zeros. Compared times r (scale-free).
    want_scaled = np.where(r > 0, w - np.sum(w * u, axis=-1, keepdims=True) * u, 0.0)
    got_scaled = np.where(r > 0, mine.astype(np.float64) * r, mine)
    off = _rows_off(got_scaled, want_scaled, kinds, 1e-4)
    if off:
        if ZERO in off:
            fail(_("{call} is not 0 on {zero}: the double where gives 0 there.").format(call=call, zero=_(ZERO)))
        fail(_("{call} differs from the exact gradient, (w - (w . u) u) / ||x|| with u = x / ||x||, in "
               "{rows}.").format(call=call, rows=", ".join(_(kind) for kind in off)))
    # The naive half, away from its zeros: w1 * x / ||x||; a program that is not what it says shows here.
    zu, __ = _exact(z)
    expect = (w1.astype(np.float64)[..., None] * zu).reshape(-1, shape[-1])
    if not np.allclose(naive[~zero_rows], expect[~zero_rows], rtol=1e-4, atol=1e-5):
        fail(_("the gradient program does not differentiate the check's own naive norm as JAX does: it is not "
               "the gradient of the function the check lowered."))


def _probabilities(rng, shape):
    """Rows of probabilities with exact zeros (one row one-hot), as float32."""
    p = rng.dirichlet(np.ones(shape[-1]), size=int(np.prod(shape[:-1])))
    p[rng.random(p.shape) < 0.3] = 0.0
    p[0] = 0.0
    p[0, int(rng.integers(shape[-1]))] = 1.0
    return p.astype(np.float32).reshape(shape)


def _entropy(p):
    p64 = p.astype(np.float64)
    return -np.sum(np.where(p64 > 0, p64 * np.log(np.where(p64 > 0, p64, 1.0)), 0.0), axis=-1)


def test_checked_entropy_fires_exactly_on_negative_inputs(learner, rng):
    __, shape, texts = _programs(learner, rng)
    batches = []
    # A negative entry anywhere, a tiny one anywhere, and one in the very first and one in the very
    # last entry: a check of part of p (p[0], p[..., 0], one row) misses at least one of those two.
    for kind in ("valid", "negative", "valid", "tiny negative", "first entry negative", "last entry negative"):
        p = _probabilities(rng, shape)
        if kind != "valid":
            where = {"first entry negative": 0, "last entry negative": p.size - 1}.get(kind, int(rng.integers(p.size)))
            p.flat[where] = -1e-7 if kind == "tiny negative" else -float(rng.uniform(0.1, 1.0))
        batches.append((kind, p))
    messages = None
    for kind, p in batches:
        signs = rng.choice(np.array([-1.0, 1.0], np.float32), size=shape)
        decoy = -rng.uniform(0.5, 2.0, size=shape).astype(np.float32)
        outs = _run(texts["entropy"], _("jax.jit(checkify.checkify(fn)) around checked_entropy"),
                    p * signs, signs, decoy)
        if len(outs) < 3:
            fail(_("the checkified program of checked_entropy does not return the entropy."))
        if np.shape(outs[-3]) != decoy.shape or not np.array_equal(outs[-3], 2.0 * decoy):
            fail(_("checked_entropy(p) returns more than one array; expected the entropy alone, an array of shape "
                   "p.shape[:-1]. A negative probability is reported by checkify.check, not by a return value."))
        errors, value = outs[:-3], outs[-2]
        fired = any(e.dtype == np.bool_ and e.shape == () and bool(e) for e in errors)
        call = _("checked_entropy(p {shape}) with min(p) = {low:.3g}, under jax.jit(checkify.checkify(...))").format(
            shape=shape, low=float(p.min()))
        if kind == "valid":
            if fired:
                if (p == 0).any():
                    fail(_("{call}: a check fired for a valid input. p has exact zeros, and 0 is a valid "
                           "probability: check p >= 0, not p > 0.").format(call=call))
                fail(_("{call}: a check fired for an input whose elements are all >= 0.").format(call=call))
            if value.shape != shape[:-1] or value.dtype != np.float32:
                fail(_("{call} returned {dtype} {shape}, expected float32 {want}.").format(
                    call=call, dtype=value.dtype, shape=value.shape, want=shape[:-1]))
            if np.isnan(value).any():
                fail(_("{call} is NaN on rows with p == 0: 0 * log(0) is NaN in floating point. Count those "
                       "entries as 0 with jnp.where (and keep log's input safe).").format(call=call))
            if not np.allclose(value, _entropy(p), rtol=1e-5, atol=1e-6):
                diff = float(np.max(np.abs(value - _entropy(p))))
                fail(_("{call} differs from -sum(p * log(p)) by up to {diff:.3g}.").format(call=call, diff=diff))
            continue
        if not fired:
            fail(_("{call}: no check fired, but p has a negative element. checkify.check(jnp.all(p >= 0), ...) "
                   "inside checked_entropy, on its own input.").format(call=call))
        if messages is None:
            worded = [k for k, __ in batches if k != "valid"]
            messages = learner.probe(probe_messages, [b for k, b in batches if k != "valid"])
            if not isinstance(messages, list) or len(messages) != len(worded):
                fail(_("checked_entropy: the check could not read the error messages."))
        message = messages[worded.index(kind)]
        if not isinstance(message, str) or "negative probability" not in message:
            fail(_("{call}: the error says {message!r}; it must contain the words 'negative probability'.").format(
                call=call, message=message))
