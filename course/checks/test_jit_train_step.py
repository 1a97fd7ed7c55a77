"""Checks for jit_train_step: one compilation per epoch, same result as the ragged loop.

What makes one compilation per epoch is judged here from evidence:
- `make_batches` returns its batches; their shapes, rows, padding and masks
  are checked here;
- `train_step` is lowered in the learner's process for one batch shape and the
  program text comes back; this side reads its inputs and outputs
  (`course.engine.programs`). A function that is not compiled has no program.
Whether the step is compiled once and reused across epochs (no `nnx.jit`
rebuilt inside `train_epoch`) no output shows: the padded, masked step gives
the same numbers compiled once or every epoch. What it costs shows. The first
epoch runs in one request and the next three in another, and the CPU time the
learner's processes spend on that second request is read here, from the
operating system: a step traced, lowered and compiled again every epoch costs
tens of ms an epoch even when XLA finds the program in its persistent cache,
and a step reused about 1 ms a batch. Nothing in those processes can make
that account smaller. Two accounts from the learner's process name the
mistake where it is an honest one: the probe's MLP records the input shape
every time it is traced, and JAX writes every module it compiles during the
later epochs to a folder (`jax_dump_ir_to`), whose programs are read here.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_tree_close, fail, side_by_side
from course.engine.programs import ProgramError, parse
from course.engine.words import N_, _

TIMEOUT = 120
# (d_in, hidden, batch_size, rows) from a small fixed set, so that the programs compiled
# for them (the padded step, the ragged last batch, make_batches' slices) are reused
# from one check to the next; the values are drawn fresh. The rows are never a
# multiple of the batch size: the last batch is short. The hidden size is never the
# batch size: a compiled step's (batch_size,) input is then y or the mask, never
# linear1's bias.
SIZES = [(3, 16, 8, 29), (7, 8, 16, 45)]
# Epochs after the first, run in one request whose CPU time is measured here.
LATER_EPOCHS = 3
# CPU time the later epochs may take, from the operating system's account of the learner's
# processes (counted in ticks of 10 ms): a fixed allowance plus so much per batch. Measured on a
# 2-core machine under a load of 8: about 1 ms a batch with the step compiled once; 45 to 65 ms an
# epoch when the step is traced and lowered again every epoch and XLA's compilation comes from the
# persistent cache, 0.6 s or more an epoch when it is compiled again.
CPU_ALLOWANCE_S = 0.05
CPU_PER_BATCH_S = 0.002


def probe_epochs(module, d_in, hidden, seed, batch_size, epochs):
    """The first epoch, on a model and an optimizer kept in this process for `probe_later_epochs`."""
    import sys
    import types

    import jax
    import optax
    from flax import nnx

    traced = []

    class MLP(nnx.Module):
        def __init__(self, d_in, hidden, *, rngs):
            self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
            self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

        def __call__(self, x):
            if isinstance(x, jax.core.Tracer):
                traced.append(list(x.shape))
            return self.linear2(jax.nn.relu(self.linear1(x)))

    model = MLP(d_in, hidden, rngs=nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
    x, y = epochs[0]
    losses = module.train_epoch(model, optimizer, x, y, batch_size)
    kept = sys.modules.setdefault("jaxlings_epochs", types.ModuleType("jaxlings_epochs"))
    kept.run = (model, optimizer, traced, len(traced))
    return {"losses": [losses], "traces": [list(traced)]}


def probe_later_epochs(module, batch_size, epochs):
    """The later epochs, on the kept model; XLA writes what it compiles meanwhile to a folder."""
    import gc
    import os
    import shutil
    import sys
    import tempfile

    import jax
    from flax import nnx

    model, optimizer, traced, before = sys.modules["jaxlings_epochs"].run
    losses, traces = [], []
    folder = tempfile.mkdtemp()
    gc.disable()  # a collection is not the learner's cost: their CPU time is measured around this request
    jax.config.update("jax_dump_ir_to", folder)
    try:
        for x, y in epochs:
            losses.append(module.train_epoch(model, optimizer, x, y, batch_size))
            traces.append(traced[before:])
            before = len(traced)
    finally:
        jax.config.update("jax_dump_ir_to", "")
        gc.enable()
    texts = []
    for name in sorted(os.listdir(folder))[:20]:
        if name.endswith(".mlir"):
            with open(os.path.join(folder, name)) as f:
                texts.append(f.read(2_000_000))
    shutil.rmtree(folder, ignore_errors=True)
    return {"losses": losses, "traces": traces, "compiled_later": texts,
            "params": nnx.to_pure_dict(nnx.state(model, nnx.Param))}


def probe_ragged_reference(module, d_in, hidden, seed, batch_size, epochs):
    """The plain loop the padded one must reproduce: one update per batch, the last one short.

    Asked of the reference only, so it runs on the trusted side alone and may use
    this module's `_ragged_tools`: its step is compiled once per batch shape for
    the life of the process (run eagerly, each of its operations would compile
    anew for every new shape, seconds on a check's first run)."""
    import jax.numpy as jnp
    import optax
    from flax import nnx

    MLP, step = _ragged_tools()
    model = MLP(d_in, hidden, rngs=nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
    losses = []
    for x, y in epochs:
        epoch = []
        for start in range(0, len(x), batch_size):
            loss = step(model, optimizer, jnp.asarray(x[start:start + batch_size]),
                        jnp.asarray(y[start:start + batch_size]))
            epoch.append(float(loss))
        losses.append(epoch)
    return {"losses": losses, "params": nnx.to_pure_dict(nnx.state(model, nnx.Param))}


_RAGGED_TOOLS: list = []


def _ragged_tools():
    """(MLP class, compiled step) of `probe_ragged_reference`, made once: a class or a step
    made anew on every run would be traced and compiled anew."""
    if not _RAGGED_TOOLS:
        import jax
        import optax
        from flax import nnx

        class MLP(nnx.Module):
            def __init__(self, d_in, hidden, *, rngs):
                self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
                self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

            def __call__(self, x):
                return self.linear2(jax.nn.relu(self.linear1(x)))

        def loss_fn(model, x, y):
            return optax.sigmoid_binary_cross_entropy(model(x).squeeze(-1), y).mean()

        @nnx.jit
        def step(model, optimizer, x, y):
            loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
            optimizer.update(model, grads)
            return loss

        _RAGGED_TOOLS.append((MLP, step))
    return _RAGGED_TOOLS[0]


def probe_masked_loss(module, d_in, hidden, seed, x, y, mask):
    import jax
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d_in, hidden, *, rngs):
            self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
            self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

        def __call__(self, x):
            return self.linear2(jax.nn.relu(self.linear1(x)))

    return module.masked_loss(MLP(d_in, hidden, rngs=nnx.Rngs(seed)), x, y, mask)


def probe_lowered_step(module, d_in, hidden, seed, batch_size):
    import jax
    import numpy as np
    import optax
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, d_in, hidden, *, rngs):
            self.linear1 = nnx.Linear(d_in, hidden, rngs=rngs)
            self.linear2 = nnx.Linear(hidden, 1, rngs=rngs)

        def __call__(self, x):
            return self.linear2(jax.nn.relu(self.linear1(x)))

    model = MLP(d_in, hidden, rngs=nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
    lower = getattr(module.train_step, "lower", None)
    if not callable(lower):
        return {"error": "no_lower", "type": type(module.train_step).__name__}
    x = np.zeros((batch_size, d_in), np.float32)
    v = np.zeros(batch_size, np.float32)
    return {"program": lower(model, optimizer, x, v, v).as_text()}


def _setup(rng):
    d_in, hidden, batch_size, n = SIZES[int(rng.integers(len(SIZES)))]
    epochs = []
    for __ in range(1 + LATER_EPOCHS):
        x = rng.standard_normal((n, d_in)).astype(np.float32)
        y = rng.integers(0, 2, size=n).astype(np.float32)
        epochs.append([x, y])
    return d_in, hidden, batch_size, n, epochs


def test_batches_are_padded_to_one_shape(learner, rng):
    d_in, hidden, batch_size, n, epochs = _setup(rng)
    x, y = epochs[0]
    call = f"make_batches(x {x.shape}, y {y.shape}, batch_size={batch_size})"
    got = learner.call("make_batches", x, y, batch_size)
    n_batches = -(-n // batch_size)
    if isinstance(got, (list, tuple)) and len(got) != n_batches:
        fail(_("{call} returned {type} of {items} items; expected a list of {n} (x, y, mask) batches.").format(
            call=call, type=type(got).__name__, items=len(got), n=n_batches))
    if not isinstance(got, (list, tuple)):
        fail(_("{call} returned {type}; expected a list of {n} (x, y, mask) batches.").format(
            call=call, type=type(got).__name__, n=n_batches))
    for b, batch in enumerate(got):
        if not isinstance(batch, (list, tuple)) or len(batch) != 3:
            fail(_("{call}[{b}] should be a tuple (x, y, mask), got {batch!r:.100}.").format(call=call, b=b, batch=batch))
        xb, yb, mask = batch
        shapes = [np.shape(xb), np.shape(yb), np.shape(mask)]
        if shapes != [(batch_size, d_in), (batch_size,), (batch_size,)]:
            fail(_("{call}[{b}] has shapes {shapes}; every batch must be ({batch_size}, {d_in}), ({batch_size},), "
                   "({batch_size},): pad a short last batch to the full batch size, so that one compiled "
                   "program serves every batch.").format(call=call, b=b, shapes=shapes, batch_size=batch_size,
                                                         d_in=d_in))
        start = b * batch_size
        real = min(batch_size, n - start)
        want_x = np.zeros((batch_size, d_in), np.float32)
        want_x[:real] = x[start:start + real]
        want_y = np.zeros(batch_size, np.float32)
        want_y[:real] = y[start:start + real]
        want_mask = (np.arange(batch_size) < real).astype(np.float32)
        # float32 or float64 (NumPy's zeros for the padding): with x64 off, jax.jit runs a float64 batch
        # as float32, in the same program. The values must be the input's, exactly; other dtypes fail.
        want_x, want_y = (w.astype(v.dtype) if getattr(v, "dtype", None) in (np.float32, np.float64) else w
                          for v, w in ((xb, want_x), (yb, want_y)))
        assert_close(xb, want_x, what=_("{call}[{b}][0] (rows {start}..{end} in order, then zero rows)").format(
            call=call, b=b, start=start, end=start + real - 1), rtol=0, atol=0)
        assert_close(yb, want_y, what=_("{call}[{b}][1] (labels in order, then zeros)").format(call=call, b=b),
                     rtol=0, atol=0)
        assert_close(mask, want_mask, what=_("{call}[{b}][2] (1.0 for the {real} real rows, 0.0 for padding)").format(
            call=call, b=b, real=real), rtol=0, atol=0)


def test_train_step_is_compiled_for_the_batch_shape(learner, rng, seed):
    d_in, hidden, batch_size, n, epochs = _setup(rng)
    got = learner.probe(probe_lowered_step, d_in, hidden, seed, batch_size)
    call = f"train_step.lower(model, optimizer, x ({batch_size}, {d_in}), y, mask)"
    if "error" in got:
        fail(_("train_step is a {type} without `.lower`: it is not compiled. Decorate train_step with "
               "@nnx.jit.").format(type=got.get("type")))
    try:
        program = parse(got.get("program"))
    except ProgramError as e:
        fail(_("{call} did not give a compiled program: {error}. Decorate train_step with @nnx.jit.").format(
            call=call, error=e))
    inputs = [(a.shape, a.dtype) for a in program.args]
    for want in (((batch_size, d_in), "float32"), ((batch_size,), "float32")):
        if want not in inputs:
            fail(_("{call}: the compiled program takes {inputs}, without the batch input {want}. "
                   "train_step must be the compiled step itself, taking the batch as its input.").format(
                call=call, inputs=sorted(set(inputs)), want=want))
    if not any(r.shape == () and r.dtype == "float32" for r in program.results):
        fail(_("{call}: the compiled program returns no float32 scalar: return the loss.").format(call=call))
    if program.count("dot_general") < 2:
        fail(_("{call}: the compiled program has {n} matrix products; a step through "
               "the two-layer model (forward and backward) has several. Compile the whole step.").format(
            call=call, n=program.count("dot_general")))


def _learner_cpu_seconds(learner):
    """CPU seconds the learner's processes have used so far, as the operating system counts them
    (read here: nothing in those processes can lower it), or None where it cannot be read."""
    import psutil

    pid = getattr(getattr(getattr(learner, "_proc", None), "proc", None), "pid", None)
    if not isinstance(pid, int):
        return None
    try:
        top = psutil.Process(pid)
        total = 0.0
        for p in (top, *top.children(recursive=True)):
            try:
                t = p.cpu_times()
            except psutil.NoSuchProcess:
                continue
            total += t.user + t.system + getattr(t, "children_user", 0.0) + getattr(t, "children_system", 0.0)
        return total
    except psutil.Error:
        return None


def test_same_result_as_the_ragged_loop(learner, reference, rng, seed):
    d_in, hidden, batch_size, n, epochs = _setup(rng)
    got, want = side_by_side(learner, reference).probe_each(probe_epochs, probe_ragged_reference,
                                                           d_in, hidden, seed, batch_size, epochs)
    call = _("{epochs} epochs of train_epoch(..., batch_size={batch_size}) on {n} rows").format(
        epochs=len(epochs), batch_size=batch_size, n=n)
    traces = got.get("traces")
    if not (isinstance(traces, list) and len(traces) == 1 and isinstance(traces[0], list)):
        fail(_("{call}: the check's record of the step's traces came back as {traces!r:.100}.").format(
            call=call, traces=traces))
    shapes = sorted({tuple(s) for s in traces[0] if isinstance(s, list)})
    if len(shapes) > 1:
        fail(_("{call}: the step was traced for {n} input shapes {shapes}; run train_step on the "
               "padded batches of make_batches, all of one shape.").format(call=call, n=len(shapes), shapes=shapes))
    if shapes != [(batch_size, d_in)]:
        fail(_("{call}: the first epoch never traced the model for the padded batch ({batch_size}, {d_in}) "
               "(traced for {shapes}): train_epoch must run the compiled train_step on the batches.").format(
            call=call, batch_size=batch_size, d_in=d_in, shapes=shapes))
    cpu_before = _learner_cpu_seconds(learner)
    later = learner.probe(probe_later_epochs, batch_size, epochs[1:])
    cpu_after = _learner_cpu_seconds(learner)
    if not isinstance(later, dict) or not isinstance(later.get("traces"), list):
        fail(_("{call}: the check's record of the step's traces came back as {traces!r:.100}.").format(
            call=call, traces=later))
    if any(later["traces"]):
        fail(_("{call}: the second epoch traced the step again. A compiled step must be reused across "
               "epochs: build it once, at module level, not inside train_epoch.").format(call=call))
    recompiled = later.get("compiled_later")
    for text in recompiled if isinstance(recompiled, list) else [recompiled]:
        try:
            program = parse(text)
        except ProgramError as e:
            fail(_("{call}: the check could not read a program XLA compiled in the second epoch: {error}.").format(
                call=call, error=e))
        if program.takes((batch_size, d_in)):
            fail(_("{call}: XLA compiled the step again in the second epoch (a program taking the batch "
                   "({batch_size}, {d_in})); the second epoch traced the step again. A compiled step must be "
                   "reused across epochs: build it once, at module level, not inside train_epoch.").format(
                call=call, batch_size=batch_size, d_in=d_in))
    n_batches = -(-n // batch_size)
    if cpu_before is not None and cpu_after is not None:
        spent = cpu_after - cpu_before
        allowed = CPU_ALLOWANCE_S + CPU_PER_BATCH_S * n_batches * LATER_EPOCHS
        if spent > allowed:
            fail(_("{call}: epochs 2 to {last} ({steps} steps) took {spent:.0f} ms of CPU time in your process, "
                   "as the operating system counts it; a compiled step that is reused takes a few ms a step "
                   "(at most {allowed:.0f} ms here). The step is traced and compiled again after the first "
                   "epoch: build it once, at module level, not inside train_epoch.").format(
                call=call, last=len(epochs), steps=n_batches * LATER_EPOCHS, spent=1000 * spent,
                allowed=1000 * allowed))
    losses = [*got.get("losses", []), *later.get("losses", [])]
    for e, epoch_losses in enumerate(losses):
        if not isinstance(epoch_losses, list) or len(epoch_losses) != n_batches:
            fail(_("{call}: epoch {e} returned {losses!r:.200}; expected a list of {n} losses, "
                   "one per batch.").format(call=call, e=e, losses=epoch_losses, n=n_batches))
    assert_tree_close(losses, want["losses"],
                      what=_("{call}: the per-batch losses (the padded last batch must give the ragged batch's "
                             "loss)").format(call=call),
                      rtol=1e-4, atol=1e-6)
    assert_tree_close(later.get("params"), want["params"],
                      what=_("{call}: the parameters afterwards").format(call=call), rtol=1e-4, atol=1e-5)


def test_masked_loss(learner, reference, rng, seed):
    d_in, hidden, batch = SIZES[int(rng.integers(len(SIZES)))][:3]
    x = rng.standard_normal((batch, d_in)).astype(np.float32)
    y = rng.integers(0, 2, size=batch).astype(np.float32)
    mask = (rng.random(batch) < 0.6).astype(np.float32)
    mask[0] = 1.0
    mask[1 + int(rng.integers(batch - 1))] = 0.0  # never all ones: then it would be the all-ones case
    for m, label in ((mask, N_("a random 0/1 mask")), (np.ones(batch, np.float32), N_("an all-ones mask"))):
        got, want = side_by_side(learner, reference).probe(probe_masked_loss, d_in, hidden, seed, x, y, m)
        assert_close(got, want, what=_("masked_loss(model, x {x}, y, mask) with {label}").format(
            x=x.shape, label=_(label)), rtol=1e-4, atol=1e-6)
