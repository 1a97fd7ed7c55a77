"""Checks for linen_train_state: TrainState creation, one exact step, falling loss, jit.

A step may donate its input state (`jax.jit(..., donate_argnums=0)`): the
probes copy everything they need from the state before the call. Whether the
step is compiled is read here from its lowered program (`train_step.lower`);
the trace count the probe also reports is a teaching aid for a step that is
compiled again and again, not something a verdict of "compiled" rests on.
"""

from __future__ import annotations

import numpy as np

from course.engine.checking import assert_close, assert_tree_close, fail, side_by_side
from course.engine.programs import ProgramError, parse
from course.engine.words import _

TIMEOUT = 90


def probe_one_step(module, seed, d_in, lr, params, batches):
    import jax
    import jax.numpy as jnp
    import numpy as np

    state = module.create_train_state(seed, d_in, lr)
    for name in ("params", "apply_fn", "apply_gradients"):
        if not hasattr(state, name):
            return {"error": "no_attribute", "type": type(state).__name__, "name": name}
    if params is not None:
        # Compared by key paths and shapes, not by container: a FrozenDict holds the same layout as
        # a dict. The check's values go back into the learner's own container, leaf by leaf.
        mine, treedef = jax.tree_util.tree_flatten_with_path(state.params)
        paths = [jax.tree_util.keystr(path) for path, _ in mine]
        given = {jax.tree_util.keystr(path): jnp.asarray(leaf)
                 for path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]}
        if sorted(paths) != sorted(given) or any(jnp.shape(leaf) != given[path].shape
                                                 for path, (_, leaf) in zip(paths, mine)):
            return {"error": "layout", "shapes": str(jax.tree.map(jnp.shape, state.params))}
        new_params = jax.tree_util.tree_unflatten(treedef, [given[path] for path in paths])
        state = state.replace(params=new_params, opt_state=state.tx.init(new_params))
    # Copied before the call: a step that donates its input state deletes these buffers.
    before = jax.tree.map(np.asarray, state.params)
    steps = []
    for x, y in batches:  # two steps: the second shows whether the optimizer state moved on
        state, loss = module.train_step(state, jnp.asarray(x), jnp.asarray(y))
        steps.append({"params": jax.tree.map(np.asarray, state.params), "loss": np.asarray(loss),
                      "step": int(state.step)})
    return {"params_before": before, "steps": steps}


def probe_many_steps(module, seed, d_in, x, y, n_steps):
    import jax
    import jax.numpy as jnp

    state = module.create_train_state(seed, d_in, 1e-2)
    traced = []
    inner = state.apply_fn

    def counting_apply(variables, x, *args, **kwargs):
        if isinstance(x, jax.core.Tracer):
            traced.append(1)
        return inner(variables, x, *args, **kwargs)

    state = state.replace(apply_fn=counting_apply)
    x, y = jnp.asarray(x), jnp.asarray(y)
    losses, traces_after_first = [], None
    for i in range(n_steps):
        state, loss = module.train_step(state, x, y)
        losses.append(float(loss))
        if i == 0:
            traces_after_first = len(traced)
    return {"losses": losses, "traces_after_first": traces_after_first, "traces": len(traced)}


def probe_lowered(module, seed, d_in, batch):
    import jax
    import jax.numpy as jnp

    state = module.create_train_state(seed, d_in, 1e-2)
    lower = getattr(module.train_step, "lower", None)
    if not callable(lower):
        return {"error": "no_lower", "type": type(module.train_step).__name__}
    x = jax.ShapeDtypeStruct((batch, d_in), jnp.float32)
    y = jax.ShapeDtypeStruct((batch,), jnp.float32)
    return {"program": lower(state, x, y).as_text()}


def _data(rng, d_in, batch):
    x = rng.standard_normal((batch, d_in)).astype(np.float32)
    y = (x[:, 0] + 0.3 * rng.standard_normal(batch) > 0).astype(np.float32)
    return x, y


def _layers(params, d_in):
    """The names of the hidden Dense layer (kernel (d_in, hidden)) and of the output one (kernel (hidden, 1)).
    Linen numbers them in the order they are built: in `nn.Dense(1)(nn.relu(nn.Dense(hidden)(x)))` the
    output layer is built first, so it is Dense_0."""
    shapes = {name: np.shape(layer["kernel"]) for name, layer in params.items()}
    hidden = [name for name, shape in shapes.items() if len(shape) == 2 and shape[0] == d_in]
    out = [name for name, shape in shapes.items() if len(shape) == 2 and shape[1] == 1 and name not in hidden]
    return hidden[0], out[0]


def _dead_unit(params, layers, j):
    """The weights of hidden unit j, or None when the params are not laid out like the MLP's."""
    first, second = layers
    try:
        return {f"{first}.kernel[:, {j}]": np.asarray(params[first]["kernel"])[:, j],
                f"{first}.bias[{j}]": np.asarray(params[first]["bias"])[j],
                f"{second}.kernel[{j}]": np.asarray(params[second]["kernel"])[j]}
    except (KeyError, IndexError, TypeError):
        return None


def _state_error(got):
    """Fail with what probe_one_step found wrong with the learner's state (said here, in the learner's language)."""
    if got.get("error") == "layout":
        fail(_("your state's params are not laid out like the given MLP's ({shapes}); initialise the given "
               "MLP.").format(shapes=got.get("shapes")))
    if "error" in got:
        fail(_("create_train_state returned {type} without `{name}`; expected a flax TrainState.").format(
            type=got.get("type"), name=got.get("name")))


def test_one_step_matches_reference(learner, reference, rng, seed):
    # Shapes from a small set (compiled programs are reused between runs); values fresh.
    d_in, batch = int(rng.choice([3, 9])), int(rng.choice([16, 32]))
    lr = float(10 ** rng.uniform(-3, -1.5))
    batches = [_data(rng, d_in, batch) for _ in range(2)]
    start = reference.probe(probe_one_step, seed, d_in, lr, None, batches[:1])["params_before"]
    # One hidden unit made dead (never active on these inputs): its weights get exactly zero
    # gradients, which Adam leaves bit for bit where they are and weight decay (AdamW) moves.
    layers = _layers(start, d_in)
    dead = int(rng.integers(len(start[layers[0]]["bias"])))
    start[layers[0]]["bias"] = np.array(start[layers[0]]["bias"])
    start[layers[0]]["bias"][dead] = -50.0
    before = _dead_unit(start, layers, dead)
    got, want = side_by_side(learner, reference).probe(probe_one_step, seed, d_in, lr, start, batches)
    _state_error(got)
    for i, (g, w) in enumerate(zip(got["steps"], want["steps"])):
        where = _("train_step(state, x {x}, y {y}) from the check's parameters, Adam lr={lr:.3g}, step {step} "
                  "of 2").format(x=batches[i][0].shape, y=batches[i][1].shape, lr=lr, step=i + 1)
        after = _dead_unit(g["params"], layers, dead)
        for name in before if after is not None else ():
            if not np.array_equal(before[name], after[name]):
                fail(_("{where}: {name}, which belongs to a hidden unit that is never active and so gets zero "
                       "gradients, moved from {before!r:.80} to {after!r:.80}. Adam leaves weights "
                       "without gradient exactly where they are; weight decay (optax.adamw, add_decayed_weights) "
                       "moves them. Use optax.adam(learning_rate).").format(
                    where=where, name=name, before=before[name], after=after[name]))
        assert_close(g["loss"], w["loss"], what=_("{where}: the loss").format(where=where), rtol=1e-4, atol=1e-6)
        if i == 1:
            where = _("{where} (the new state must carry the updated opt_state as well as the params)").format(
                where=where)
        assert_tree_close(g["params"], w["params"], what=_("{where}: the new state's params").format(where=where),
                          rtol=1e-4, atol=1e-6)
        assert_close(g["step"], w["step"], what=_("{where}: the new state's step").format(where=where))


def test_loss_falls_and_step_is_compiled(learner, rng, seed):
    d_in = int(rng.choice([3, 9]))
    x, y = _data(rng, d_in, 64)
    got = learner.probe(probe_many_steps, seed, d_in, x, y, 40)
    losses = got["losses"]
    if not losses[-1] < 0.9 * losses[0]:
        fail(_("40 train_steps on one batch with lr=1e-2: the loss went {first:.4f} -> {last:.4f}; "
               "it should fall clearly. Do you return the new state from apply_gradients?").format(
            first=losses[0], last=losses[-1]))
    lowered = learner.probe(probe_lowered, seed, d_in, 64)
    if "error" in lowered:
        fail(_("train_step is a {type} without `.lower`: it is not compiled. Decorate train_step with "
               "@jax.jit.").format(type=lowered.get("type")))
    try:
        program = parse(lowered.get("program"))
    except ProgramError as e:
        fail(_("train_step.lower(state, x, y) did not give a compiled program: {error}. Decorate it with "
               "@jax.jit.").format(error=e))
    if not program.takes((64, d_in)) or program.count("dot_general") < 2:
        fail(_("train_step.lower(state, x (64, {d_in}), y) gave a program that does not take the batch or does not "
               "run the model on it. train_step itself must be the compiled step: decorate it with "
               "@jax.jit.").format(d_in=d_in))
    if not got["traces_after_first"]:
        fail(_("train_step did not call state.apply_fn while being compiled by jax.jit: compute the logits with "
               "state.apply_fn({'params': params}, x) (not a global model) inside a train_step decorated with "
               "@jax.jit."))
    if got["traces"] != got["traces_after_first"]:
        fail(_("train_step was traced again after its first call ({traces} traces in 40 steps): "
               "the compiled step must be reused.").format(traces=got["traces"]))
