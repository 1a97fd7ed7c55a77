"""Checks for mixed_precision: a bfloat16 train step with float32 master weights and loss.

Everything is judged here from one piece of evidence: the learner's jitted
`train_step`, lowered in the child on shapes alone (inside a `jax.jit` that
takes the model's and the optimizer's state as a flat list of arrays, so that
this side knows what each input and output is), with the paths of those arrays.
- The dtypes are read from the program through MLIR (`course.engine.programs`):
  the operands of every matrix product, the parameters and Adam's moments on
  the way in and out, the loss, and the reductions that compute it.
- The program is then run here on parameters, Adam state and batches drawn here,
  for a few steps, and compared with a float32 reference computed in NumPy. A
  program that reads "bfloat16" but computes something else, or a text written
  to look right, has to compute a correct Adam step in bfloat16 to pass: the
  exercise itself.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import fail
from course.engine.evidence import adam_state_role, read_program, run_lowered
from course.engine.programs import ProgramError, ops_with_types
from course.engine.words import _

TIMEOUT = 120
# (d_in, hidden, d_out, batch): all different, so that a reduction's shape says which sum it is
# (the batch's loss terms, (batch,) and (), versus a bias gradient, (hidden,) or (d_out,)).
SIZES = [(6, 16, 3, 12), (10, 24, 5, 20)]
LR, B1, B2, EPS = 1e-2, 0.9, 0.999, 1e-8
STEPS = 3
# bfloat16 keeps 8 significant bits: a rounding moves a value by up to 2**-8 of itself.
BF16_EPS = 2.0 ** -8


def probe_lowered_step(module, d_in, hidden, d_out, batch, seed):
    import jax
    import jax.numpy as jnp
    import optax
    from flax import nnx

    model = module.MLP(d_in, hidden, d_out, rngs=nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
    if not callable(getattr(module.train_step, "lower", None)):
        return {"error": "not_compiled", "type": type(module.train_step).__name__}
    graphdef, state = nnx.split((model, optimizer))
    with_paths, treedef = jax.tree_util.tree_flatten_with_path(state)

    def step(leaves, x, y):
        model, optimizer = nnx.merge(graphdef, jax.tree.unflatten(treedef, leaves))
        loss = module.train_step(model, optimizer, x, y)
        return loss, jax.tree.leaves(nnx.state((model, optimizer)))

    specs = [jax.ShapeDtypeStruct(jnp.shape(v), jnp.result_type(v)) for _, v in with_paths]
    text = jax.jit(step).lower(specs, jax.ShapeDtypeStruct((batch, d_in), jnp.float32),
                               jax.ShapeDtypeStruct((batch,), jnp.int32)).as_text()
    return {"program": text, "paths": [jax.tree_util.keystr(p) for p, _ in with_paths]}


def _roles(paths, n_args, call):
    """What each state input is: ('param', layer, name), ('mu'|'nu', layer, name), ('count',), ('step',)."""
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths) or len(paths) != n_args - 2:
        fail(_("{call}: the check could not read the model's and the optimizer's state "
               "({got}).").format(call=call, got=describe_paths(paths)))
    roles = []
    for path in paths:
        role = adam_state_role(path, ("hidden", "out"))
        if role is None:
            fail(_("{call}: the model's or the optimizer's state holds {path!r}; the MLP has exactly two "
                   "nnx.Linear layers named `hidden` and `out` (a kernel and a bias each), and nothing else.").format(
                call=call, path=path[:120]))
        roles.append(role)
    want = {("param", l, n) for l in ("hidden", "out") for n in ("kernel", "bias")}
    if {r for r in roles if r[0] == "param"} != want:
        fail(_("{call}: the model's parameters are {names}; expected hidden.kernel, hidden.bias, out.kernel and "
               "out.bias (two nnx.Linear layers, `hidden` and `out`).").format(
            call=call, names=sorted(".".join(r[1:]) for r in roles if r[0] == "param")))
    return roles


def describe_paths(paths):
    return f"{type(paths).__name__} of {len(paths)}" if isinstance(paths, list) else type(paths).__name__


def _dtype_of(mlir_type: str) -> str:
    inner = mlir_type[len("tensor<"):-1] if mlir_type.startswith("tensor<") else mlir_type
    return inner.rsplit("x", 1)[-1]


def _shape_of(mlir_type: str) -> tuple[int, ...]:
    inner = mlir_type[len("tensor<"):-1] if mlir_type.startswith("tensor<") else mlir_type
    parts = inner.split("x")[:-1]
    return tuple(int(p) for p in parts if p.isdigit())


def _contracted(operands: list[str], results: list[str]) -> int | None:
    """The size a matrix product sums over, from its types alone: for (m, k) by (k, n) to (m, n),
    in any layout, k * k = |lhs| * |rhs| / |result|. None where that is not a square (a product
    with batch dimensions, or not two operands and one result)."""
    if len(operands) != 2 or len(results) != 1:
        return None
    sizes = [int(np.prod(_shape_of(t))) for t in (*operands, *results)]
    if sizes[2] == 0 or sizes[0] * sizes[1] % sizes[2]:
        return None
    k = int(round(np.sqrt(sizes[0] * sizes[1] // sizes[2])))
    return k if k * k == sizes[0] * sizes[1] // sizes[2] else None


def _ops_with_types(text: str, names: set[str]) -> list[tuple[str, list[str], list[str]]]:
    """(op name, operand types, result types) of every op named in `names`, in every function,
    read through MLIR's parser and verifier in the evaluator (no string in the text can pass
    for an op or a type, and the learner's text is never parsed in this process)."""
    return ops_with_types(text, names)


def _lowered(learner, rng, seed):
    d_in, hidden, d_out, batch = SIZES[int(rng.integers(len(SIZES)))]
    call = f"train_step.lower(model, optimizer, x ({batch}, {d_in}), y ({batch},))"
    got = learner.probe(probe_lowered_step, d_in, hidden, d_out, batch, seed)
    if not isinstance(got, dict):
        fail(_("{call}: the check could not lower train_step (got {type}).").format(call=call, type=type(got).__name__))
    if "error" in got:
        fail(_("train_step is a {type} without `.lower`: it is not compiled. Decorate train_step with "
               "@nnx.jit.").format(type=got.get("type")))
    program = read_program(got.get("program"), what=call)
    roles = _roles(got.get("paths"), len(program.args), call)
    return (d_in, hidden, d_out, batch), call, got["program"], program, roles


def test_dtypes_of_the_lowered_step(learner, rng, seed):
    (d_in, hidden, d_out, batch), call, text, program, roles = _lowered(learner, rng, seed)
    if not program.results or program.results[0].shape != ():
        fail(_("{call}: the step returns no loss (a scalar).").format(call=call))
    for value, role in zip(program.args, roles):
        if role[0] in ("param", "mu", "nu") and value.dtype != "float32":
            what = _("parameter") if role[0] == "param" else _("Adam's {moment} for").format(moment=role[0])
            fail(_("{call}: the {what} {layer}.{name} is stored in {dtype}. Keep the parameters, and "
                   "so Adam's moments, in float32 (param_dtype=jnp.float32): they are the master weights, and an "
                   "update of 1e-4 on a weight of 1 is lost in bfloat16.").format(
                call=call, what=what, layer=role[1], name=role[2], dtype=value.dtype))
    outs = program.results[1:]
    if len(outs) != len(roles):
        fail(_("{call}: the step returns {outs} state arrays for {ins} it takes.").format(
            call=call, outs=len(outs), ins=len(roles)))
    for value, arg, role in zip(outs, program.args, roles):
        if (value.shape, value.dtype) != (arg.shape, arg.dtype):
            fail(_("{call}: {array} comes out as {dtype}{shape} "
                   "after the step; it went in as {in_dtype}{in_shape}. The update must keep the "
                   "float32 master weights float32.").format(
                call=call, array='.'.join(role[1:]) or role[0], dtype=value.dtype, shape=list(value.shape),
                in_dtype=arg.dtype, in_shape=list(arg.shape)))
    if program.results[0].dtype != "float32":
        fail(_("{call}: the loss is {dtype}. Compute it in float32: cast the logits with "
               ".astype(jnp.float32) before the cross-entropy.").format(call=call, dtype=program.results[0].dtype))
    try:
        dots = _ops_with_types(text, {"stablehlo.dot_general", "stablehlo.dot"})
        reduces = _ops_with_types(text, {"stablehlo.reduce"})
    except ProgramError as e:
        fail(_("{call}: the check could not read the program: {e}.").format(call=call, e=e))
    if len(dots) < 4:
        fail(_("{call}: the program has {n} matrix products; a train step through two nnx.Linear layers "
               "has two forward and more backward. Compile the whole step.").format(call=call, n=len(dots)))
    # The forward pass's products are the ones the statement asks in bfloat16; the backward pass's
    # follow from them (float32 where a forward product returns float32 through
    # preferred_element_type, since their cotangents are then float32).
    forward = [operands for __, operands, results in dots if _contracted(operands, results) in (d_in, hidden)]
    if len(forward) < 2:
        fail(_("{call}: {n} of its {total} matrix products belong to the forward pass (x by hidden.kernel, "
               "summing over d_in = {d_in}, and the hidden activations by out.kernel, summing over hidden = "
               "{hidden}). Compute each layer as a matrix product on bfloat16 operands: "
               "nnx.Linear(..., dtype=jnp.bfloat16, param_dtype=jnp.float32).").format(
            call=call, n=len(forward), total=len(dots), d_in=d_in, hidden=hidden))
    wide = sorted({"x".join(_dtype_of(t) for t in operands) for operands in forward
                   if any(_dtype_of(t) != "bf16" for t in operands)})
    if wide:
        fail(_("{call}: {wide} of the {n} matrix products of the forward pass run on {dtypes} operands, not "
               "bfloat16. Give each layer's product bfloat16 operands: nnx.Linear(..., dtype=jnp.bfloat16, "
               "param_dtype=jnp.float32), or both operands cast with .astype(jnp.bfloat16) (with "
               "preferred_element_type=jnp.float32 the result may stay float32). The backward pass's products "
               "follow from these, in bfloat16 or float32.").format(
            call=call, wide=sum(1 for o in forward if any(_dtype_of(t) != 'bf16' for t in o)), n=len(forward),
            dtypes=', '.join(wide)))
    for __, __, results in reduces:
        for t in results:
            if _shape_of(t) in ((), (batch,)) and _dtype_of(t) in ("bf16", "f16"):
                fail(_("{call}: the loss is reduced in {dtype} (a sum to {shape}). Cast the "
                       "logits to float32 before the softmax cross-entropy: its sums and its log need float32.").format(
                    call=call, dtype=_dtype_of(t), shape=list(_shape_of(t))))


def _softmax_ce(logits, y):
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -logp[np.arange(len(y)), y].mean(), logp


def _reference_step(params, mu, nu, count, x, y):
    """One float32 step: the loss and gradients of the MLP, then optax.adam's update."""
    f = np.float32
    w1, b1, w2, b2 = (params[k] for k in (("hidden", "kernel"), ("hidden", "bias"), ("out", "kernel"), ("out", "bias")))
    pre = x @ w1 + b1
    h = np.maximum(pre, 0)
    logits = h @ w2 + b2
    loss, logp = _softmax_ce(logits, y)
    d_logits = np.exp(logp)
    d_logits[np.arange(len(y)), y] -= 1
    d_logits /= len(y)
    d_h = (d_logits @ w2.T) * (pre > 0)
    grads = {("hidden", "kernel"): x.T @ d_h, ("hidden", "bias"): d_h.sum(0),
             ("out", "kernel"): h.T @ d_logits, ("out", "bias"): d_logits.sum(0)}
    count = count + 1
    new_params, new_mu, new_nu = {}, {}, {}
    for k, g in grads.items():
        new_mu[k] = (B1 * mu[k] + (1 - B1) * g).astype(f)
        new_nu[k] = (B2 * nu[k] + (1 - B2) * g * g).astype(f)
        mu_hat = new_mu[k] / (1 - B1 ** count)
        nu_hat = new_nu[k] / (1 - B2 ** count)
        new_params[k] = (params[k] - LR * mu_hat / (np.sqrt(nu_hat) + EPS)).astype(f)
    return f(loss), new_params, new_mu, new_nu, count, grads


def _judge_bfloat16_rounding(text, program, roles, inputs, shapes, rng, call, sizes, mu, nu, count, step_no):
    """Run the step once on inputs whose float32 and bfloat16 losses differ by far more than a rounding.

    x is 1 plus offsets under 2**-10, which bfloat16 rounds to exactly 1; hidden.kernel holds pairs
    of opposite entries, multiples of 1/8 (exact in bfloat16), so that each column sums to exactly 0;
    the biases are 0. With bfloat16 operands every hidden pre-activation is exactly 0, the logits are 0
    and the loss is log(d_out). In float32 the offsets survive, and out.kernel's large entries turn
    them into logits of order one. Products computed in float32 by other means than a matrix product
    (a broadcast and a sum) cannot give log(d_out).
    """
    d_in, hidden, d_out, batch = sizes
    pairs = d_in // 2
    a = rng.integers(4, 17, size=(pairs, hidden)).astype(np.float32) / 8
    kernel = np.zeros((d_in, hidden), np.float32)
    kernel[0:2 * pairs:2] = a
    kernel[1:2 * pairs:2] = -a
    params = {("hidden", "kernel"): kernel, ("hidden", "bias"): np.zeros(hidden, np.float32),
              ("out", "kernel"): (512.0 * np.round(4 * rng.standard_normal((hidden, d_out))) / 4).astype(np.float32),
              ("out", "bias"): np.zeros(d_out, np.float32)}
    x = (1.0 + rng.uniform(-2.0 ** -10, 2.0 ** -10, (batch, d_in))).astype(np.float32)
    y = rng.integers(0, d_out, size=batch).astype(np.int32)
    want = float(np.log(d_out))
    where = _("{call}, run here with x within 2**-10 of 1 (bfloat16 rounds it to 1) and a hidden.kernel whose "
              "columns sum to 0").format(call=call)
    loss = run_lowered(text, [*inputs(params, mu, nu, count, step_no), x, y], what=where)[0]
    if np.shape(loss) != () or not abs(float(loss) - want) <= 1e-3:
        fail(_("{where}: the loss is {loss:.80}; with the products' operands in bfloat16 every logit is 0 and "
               "the loss is log({d_out}) = {want:.6g}. The products do not compute in bfloat16: "
               "nnx.Linear(..., dtype=jnp.bfloat16, param_dtype=jnp.float32).").format(
            where=where, loss=str(np.asarray(loss).ravel()[:1]), d_out=d_out, want=want))


def test_the_step_runs_here_like_a_float32_reference(learner, rng, seed):
    (d_in, hidden, d_out, batch), call, text, program, roles = _lowered(learner, rng, seed)
    shapes = {("hidden", "kernel"): (d_in, hidden), ("hidden", "bias"): (hidden,),
              ("out", "kernel"): (hidden, d_out), ("out", "bias"): (d_out,)}
    for value, role in zip(program.args, roles):
        if role[0] in ("param", "mu", "nu") and value.shape != shapes[role[1:]]:
            fail(_("{call}: {role} {array} has shape {shape}, expected {want}.").format(
                call=call, role=role[0], array='.'.join(role[1:]), shape=value.shape, want=shapes[role[1:]]))
    # Everything the program runs on is drawn here, after it came back.
    params = {k: (rng.standard_normal(s) / np.sqrt(s[0] if len(s) == 2 else 4)).astype(np.float32)
              for k, s in shapes.items()}
    batches = [(rng.standard_normal((batch, d_in)).astype(np.float32),
                rng.integers(0, d_out, size=batch).astype(np.int32)) for _ in range(STEPS)]
    count = int(rng.integers(5, 20))
    # Moments of the size of the gradients, so that Adam's update divides by a typical gradient,
    # not by a tiny one whose bfloat16 rounding would dominate.
    __, __, __, __, __, g0 = _reference_step(params, {k: np.zeros(s, np.float32) for k, s in shapes.items()},
                                        {k: np.zeros(s, np.float32) for k, s in shapes.items()}, count, *batches[0])
    rms = {k: float(np.sqrt(np.mean(g * g))) + 1e-6 for k, g in g0.items()}
    mu = {k: (rms[k] * rng.standard_normal(s) * (1 - B1 ** count)).astype(np.float32) for k, s in shapes.items()}
    nu = {k: (rms[k] ** 2 * rng.uniform(0.5, 2.0, s) * (1 - B2 ** count)).astype(np.float32)
          for k, s in shapes.items()}
    step_no = int(rng.integers(5, 20))

    def inputs(params, mu, nu, count, step_no):
        out = []
        for value, role in zip(program.args, roles):
            if role[0] == "param":
                out.append(params[role[1:]])
            elif role[0] in ("mu", "nu"):
                out.append((mu if role[0] == "mu" else nu)[role[1:]])
            else:
                out.append(np.array(count if role[0] == "count" else step_no, dtype=value.dtype))
        return out

    # The tolerance, from bfloat16's precision: each matrix product rounds its operands to 8 bits
    # (a relative error of up to 2**-8 each), and sums of K terms of random sign grow the error of
    # a result like sqrt(K). Loss: the logits' error, through a softmax whose slope is at most 1.
    k = max(d_in, hidden)
    rel = 4 * BF16_EPS * np.sqrt(k)
    # The parameters: two bounds, judged per tensor. A bfloat16 product can flip a ReLU whose
    # pre-activation is near zero, which changes one example's share of a gradient entry by a
    # whole term, not by a rounding: a few entries can move by a sizeable part of the learning rate
    # (measured on a correct alternative: 0.28 of it). So the largest difference may reach one
    # learning rate, and the median must stay under a tenth of it. A missing or wrong update
    # (plain SGD, another learning rate, the gradients of another loss) moves most entries of
    # every kernel by about the learning rate: the median catches it, and the largest difference
    # of a kernel's entries is then several learning rates.
    param_max, param_median = LR, 0.1 * LR
    first = (mu, nu, count, step_no)
    state = inputs(params, mu, nu, count, step_no)
    for s, (x, y) in enumerate(batches):
        outs = run_lowered(text, [*state, x, y], what=call)
        loss, new_state = outs[0], outs[1:]
        want_loss, params, mu, nu, count, __ = _reference_step(params, mu, nu, count, x, y)
        step_no += 1
        where = _("{call}, run here on step {step} of {steps} (parameters, Adam state and data drawn here)").format(
            call=call, step=s + 1, steps=STEPS)
        if np.shape(loss) != () or not np.isfinite(loss):
            fail(_("{where}: the loss is {loss!r:.80}; expected a finite scalar.").format(where=where, loss=loss))
        if abs(float(loss) - float(want_loss)) > rel * max(1.0, abs(float(want_loss))):
            fail(_("{where}: the loss is {loss:.6g}; a float32 computation gives {want_loss:.6g} "
                   "and bfloat16 matmuls allow {rel:.2g} of it. The loss must be the mean softmax cross-entropy "
                   "of the logits, computed before the update.").format(
                where=where, loss=float(loss), want_loss=float(want_loss), rel=rel))
        for got, role in zip(new_state, roles):
            if role[0] != "param":
                continue
            want = params[role[1:]]
            if np.shape(got) != want.shape:
                fail(_("{where}: {array} came back with shape {shape}, expected {want}.").format(
                    where=where, array='.'.join(role[1:]), shape=np.shape(got), want=want.shape))
            diff = np.abs(np.asarray(got, np.float64) - want)
            worst, median = float(np.max(diff)), float(np.median(diff))
            if not (worst <= param_max and median <= param_median):
                bound = (_("the largest difference is {worst:.3g} (allowed: {allowed:.3g})").format(
                    worst=worst, allowed=param_max) if not worst <= param_max
                    else _("the median difference is {median:.3g} (allowed: {allowed:.3g})").format(
                        median=median, allowed=param_median))
                fail(_("{where}: {array} after the update differs from a float32 Adam step: {bound}, "
                       "which bfloat16's rounding does not explain; a missing or wrong update moves it by about "
                       "the learning rate, {lr}. Update the parameters with "
                       "optimizer.update(model, grads), the gradients of loss_fn.").format(
                    where=where, array='.'.join(role[1:]), bound=bound, lr=LR))
        # The next step starts from the program's own state, as a training loop would.
        state = new_state
        params = {role[1:]: np.asarray(v) for v, role in zip(new_state, roles) if role[0] == "param"}
        mu = {role[1:]: np.asarray(v) for v, role in zip(new_state, roles) if role[0] == "mu"}
        nu = {role[1:]: np.asarray(v) for v, role in zip(new_state, roles) if role[0] == "nu"}
    # Last, as the steps above name a wrong loss or update better: the products' rounding.
    _judge_bfloat16_rounding(text, program, roles, inputs, shapes, rng, call, (d_in, hidden, d_out, batch), *first)
