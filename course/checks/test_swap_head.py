"""Checks for swap_head: a sown hidden layer read under jit, a swapped head, and fine-tuning only it.

Evidence, all lowered in the child on shapes alone, inside a `jax.jit` that takes the
state as a flat list of arrays (so that this side chooses every value the programs
run on), with the paths of those arrays:
- the learner's jitted `features(model, x)`, which returns the logits and the sown
  activations;
- a plain call `model(x)` that returns the logits and what the call left on the model
  as `nnx.Intermediate` attributes (a sow outside `nnx.capture` stores its value there),
  read off the module itself: a model that never sows has nothing to show, whatever a
  patched `nnx.capture` would say;
- after the learner's `swap_head`, its jitted `train_step` over the whole state of the
  model and the optimizer, returning that state after the step (lowered a second time
  over what the first call handed back, if that differs), and the swapped model's
  forward pass.
Each program runs here, in the evaluator, on parameters, optimizer state and inputs
drawn after it came back, and is compared with NumPy: the activations of layer 2,
the head's Adam steps (head weights drawn large, so that a weight decay shows),
the body left exactly as it was, and the new model's logits. The step's program
must hand back a state of the structure it takes: otherwise nnx.jit compiles it
anew every call.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from course.checks.conftest import RUN_PLUGIN
from course.engine.checking import fail
from course.engine.evidence import adam_state_role, read_program, run_lowered
from course.engine.words import N_, _, probe_said

TIMEOUT = 120
# (d, h, n_old, n_new, batch): n_old != n_new, so that an optimizer built before the swap
# holds moments of the old head's shape.
SIZES = [(5, 12, 3, 4, 10), (7, 16, 2, 5, 14)]
LR, B1, B2, EPS = 0.04, 0.9, 0.999, 1e-8
# The head's update is compared within this many lr, plus two roundings of the weight to float32: an
# Adam step in float32 lands within one rounding of NumPy's (1.2e-5 lr at most, over 162 steps drawn). The head's weights are drawn between 2.5 and 6.5 in
# size, so that optax.adamw's default decay (1e-4 x lr x weight a step) is 2.5e-4 lr or more.
UPDATE_TOL_LR = 1e-4
STEPS = 3
EVAL_ROWS = 9
LAYERS = ("layer1", "layer2", "head")
# The numbers optax.inject_hyperparams(optax.adam)(learning_rate=lr) keeps in its state.
HYPERPARAMS = ("learning_rate", "b1", "b2", "eps", "eps_root")
# An optimizer built over the head module itself (nnx.Optimizer(model.head, ...), as
# torch.optim.Adam(model.head.parameters()) would be) keeps moments with no layer in their path.
# They are read as the head's: the run below shows whose they are (the body must stay exactly as it
# was, and the head must take Adam's steps on these moments, of the new head's shape).
# What a forward pass outside nnx.capture leaves on the model: the step carries it in its state.
SOWN_PATH = re.compile(r"^\[0\]\['features'\]")
UNNAMED_MOMENT = re.compile(r"(\['(?:mu|nu)'\])(\['(?:kernel|bias)'\](?:\.\w+)?)$")
# What probe_surgery reports: [key, fields], worded here in the learner's language.
PROBE_ERRORS = {
    "not_compiled": N_("{name} is a {type} without `.lower`: it is not compiled. Decorate it with @nnx.jit."),
}


def probe_surgery(module, d, h, n_old, n_new, batch, seed, lr):
    EVAL_ROWS = 9  # noqa: N806 - probes run apart from this module: the constant, written out
    import jax
    import jax.numpy as jnp
    from flax import nnx

    def flat(tree):
        with_paths, treedef = jax.tree_util.tree_flatten_with_path(tree)
        specs = [jax.ShapeDtypeStruct(jnp.shape(v), jnp.result_type(v)) for _, v in with_paths]
        return [jax.tree_util.keystr(p) for p, _ in with_paths], specs, treedef

    out = {}
    for name in ("features", "train_step"):
        if not callable(getattr(getattr(module, name, None), "lower", None)):
            out["error"] = ["not_compiled", {"name": name, "type": type(getattr(module, name, None)).__name__}]
            return out
    model = module.Net(d, h, n_old, rngs=nnx.Rngs(seed))
    x_spec = jax.ShapeDtypeStruct((batch, d), jnp.float32)
    graphdef, state, rest = nnx.split(model, nnx.Param, ...)
    out["paths"], specs, treedef = flat(state)

    def merged(leaves):
        return nnx.merge(graphdef, jax.tree.unflatten(treedef, leaves), rest)

    features_tree = []

    def learner_features(leaves, x):
        result = module.features(merged(leaves), x)
        # A Variable around one array (a sow that keeps only its last value) is that array.
        plain = jax.tree.map(lambda v: v.get_value() if isinstance(v, nnx.Variable) else v, result,
                             is_leaf=lambda v: isinstance(v, nnx.Variable))
        features_tree[:] = [str(jax.tree.structure(plain))]
        return result

    out["features"] = jax.jit(learner_features, keep_unused=True).lower(specs, x_spec).as_text()
    out["features_tree"] = features_tree[0] if features_tree else None
    sown_names = []

    def sown(leaves, x):
        # A plain call, read off the model's own attributes: a sow outside nnx.capture stores its
        # value on the module (flax 0.12 warns that this is deprecated), so what is judged is what
        # the model's own __call__ did, not what a library function in this process says it sowed.
        model = merged(leaves)
        logits = model(x)
        found = [(name, value) for name, value in vars(model).items() if isinstance(value, nnx.Intermediate)]
        leaves_of = [jax.tree.leaves(value.get_value()) for _, value in found]
        sown_names[:] = [[name, len(v)] for (name, _), v in zip(found, leaves_of)]
        return [logits, *(leaf for v in leaves_of for leaf in v)]

    out["sown"] = jax.jit(sown, keep_unused=True).lower(specs, x_spec).as_text()
    out["sown_names"] = list(sown_names)

    optimizer = module.swap_head(model, n_new, lr, rngs=nnx.Rngs(seed + 1))
    # The whole state nnx.jit carries from one call of the step to the next: if the step hands back a
    # state of another structure than it took (a plain model(x) sows one more array every call), the
    # next call is compiled anew. That shows in the program's signature, read on the trusted side.
    graphdef, both = nnx.split((model, optimizer))
    out["train_paths"], specs, treedef = flat(both)
    out["train_shapes"] = [[path, list(spec.shape)] for path, spec in zip(out["train_paths"], specs)]
    # The numbers an optimizer keeps in its state (optax.inject_hyperparams' learning rate): the
    # step is run here with these, and judged against optax.adam(lr).
    out["train_scalars"] = [[jax.tree_util.keystr(p), float(v)] for p, v in jax.tree_util.tree_flatten_with_path(both)[0]
                            if jnp.ndim(v) == 0 and jnp.issubdtype(jnp.result_type(v), jnp.floating)]
    batch_specs = (x_spec, jax.ShapeDtypeStruct((batch,), jnp.int32))

    def lowered_step(graphdef, treedef, specs):
        after = {}

        def step(leaves, x, y):
            m, o = nnx.merge(graphdef, jax.tree.unflatten(treedef, leaves))
            loss = module.train_step(m, o, x, y)
            new_graphdef, new_state = nnx.split((m, o))
            with_paths, new_treedef = jax.tree_util.tree_flatten_with_path(new_state)
            after.update(graphdef=new_graphdef, treedef=new_treedef,
                         paths=[jax.tree_util.keystr(p) for p, _ in with_paths],
                         specs=[jax.ShapeDtypeStruct(jnp.shape(v), jnp.result_type(v)) for _, v in with_paths])
            return loss, [v for _, v in with_paths]

        return jax.jit(step, keep_unused=True).lower(specs, *batch_specs).as_text(), after

    try:
        out["train"], after = lowered_step(graphdef, treedef, specs)
        if after["paths"] != out["train_paths"] or after["specs"] != specs:
            # A state that changes once (a sow that keeps its last value, stored on the first call) costs
            # one more compilation, not one every call: the step is lowered again over what it handed back.
            out["train_first_paths"] = out["train_paths"]
            out["train_paths"] = after["paths"]
            out["train_shapes"] = [[path, list(spec.shape)] for path, spec in zip(after["paths"], after["specs"])]
            graphdef = after["graphdef"]
            out["train"], after = lowered_step(graphdef, after["treedef"], after["specs"])
        # Static structure (not arrays) that the step changes, the child's word: only a fail rests on it.
        out["train_graph_changes"] = after["graphdef"] != graphdef
    except Exception as e:  # noqa: BLE001 - reported as the reason, judged there
        out["train_error"] = f"{type(e).__name__}: {str(e)[:300]}"
    graphdef, state, rest = nnx.split(model, nnx.Param, ...)
    out["model_paths"], specs, treedef = flat(state)

    def forward(leaves, x):
        m = nnx.merge(graphdef, jax.tree.unflatten(treedef, leaves), rest)
        logits, _ = nnx.capture(m, nnx.Intermediate)(x)
        return logits

    out["forward"] = jax.jit(forward, keep_unused=True).lower(specs, jax.ShapeDtypeStruct((EVAL_ROWS, d), jnp.float32)).as_text()
    return out


@pytest.fixture(scope="module")
def run(learner, request):
    seed = request.config.pluginmanager.get_plugin(RUN_PLUGIN).seed
    rng = np.random.default_rng(seed)
    d, h, n_old, n_new, batch = SIZES[int(rng.integers(len(SIZES)))]
    got = learner.probe(probe_surgery, d, h, n_old, n_new, batch, seed, LR)
    if not isinstance(got, dict):
        fail(_("the check could not lower your functions (got {type}).").format(type=type(got).__name__))
    if "error" in got:
        fail(probe_said(got["error"], PROBE_ERRORS) or str(got["error"])[:300])
    where = _("Net({d}, {h}, {n_old}), then swap_head(model, {n_new}, lr={LR})").format(
        d=d, h=h, n_old=n_old, n_new=n_new, LR=LR)
    return got, (d, h, n_old, n_new, batch), where


def _param_roles(paths, n_args, call):
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths) or len(paths) != n_args:
        fail(_("{call}: the check could not read the model's parameters.").format(call=call))
    roles = []
    for path in paths:
        role = adam_state_role(path, LAYERS, bare_params=True)
        if role is None or role[0] != "param":
            fail(_("{call}: the model holds a parameter at {path!r}; Net has exactly layer1, layer2 and head. "
                   "Do not change its layers.").format(call=call, path=path[:120]))
        roles.append(role[1:])
    if sorted(roles) != sorted((layer, n) for layer in LAYERS for n in ("kernel", "bias")):
        fail(_("{call}: the model's parameters are {params}; expected a kernel and a bias for each of layer1, "
               "layer2 and head.").format(call=call, params=sorted('.'.join(r) for r in roles)))
    return roles


def _draw_params(rng, d, h, n):
    shapes = {("layer1", "kernel"): (d, h), ("layer1", "bias"): (h,), ("layer2", "kernel"): (h, h),
              ("layer2", "bias"): (h,), ("head", "kernel"): (h, n), ("head", "bias"): (n,)}
    return {k: (rng.standard_normal(s) / np.sqrt(s[0] if len(s) == 2 else 3)).astype(np.float32)
            for k, s in shapes.items()}


def _layers(params, x):
    p = {k: np.asarray(v, np.float64) for k, v in params.items()}
    pre1 = x @ p["layer1", "kernel"] + p["layer1", "bias"]
    h1 = np.maximum(pre1, 0)
    pre2 = h1 @ p["layer2", "kernel"] + p["layer2", "bias"]
    h2 = np.maximum(pre2, 0)
    # Keyed by the words a message names them with (translated where shown).
    return {N_("layer1 before its ReLU"): pre1, "layer1": h1, N_("layer2 before its ReLU"): pre2, "layer2": h2,
            N_("the head (the logits)"): h2 @ p["head", "kernel"] + p["head", "bias"]}


def _which(got, layers):
    for name, value in layers.items():
        if np.shape(got) == value.shape and np.allclose(got, value, rtol=1e-4, atol=1e-5):
            return name
    return None


def _judge_features(got_feats, layers, what):
    want = layers["layer2"]
    if np.shape(got_feats) != want.shape:
        fail(_("{what}: the activations have shape {got_shape}; layer2's, after its ReLU, are {shape}. "
               "Sow x right after x = nnx.relu(self.layer2(x)).").format(
                   what=what, got_shape=np.shape(got_feats), shape=want.shape))
    if np.allclose(got_feats, want, rtol=1e-4, atol=1e-5):
        return
    other = _which(got_feats, layers)
    if other:
        fail(_("{what}: these are the activations of {other}; the exercise asks for layer2's, after its ReLU. Sow "
               "x right after x = nnx.relu(self.layer2(x)).").format(what=what, other=_(other)))
    diff = float(np.max(np.abs(np.asarray(got_feats, np.float64) - want)))
    fail(_("{what}: the activations differ from layer2's (after its ReLU), computed here from the same parameters, "
           "by up to {diff:.3g}.").format(what=what, diff=diff))


def test_the_model_sows_layer2(run, rng):
    got, (d, h, n_old, __, batch), where = run
    call = _("model(x) on Net({d}, {h}, {n_old}), x ({batch}, {d}), lowered under jax.jit with what it sows "
             "onto the model").format(d=d, h=h, n_old=n_old, batch=batch)
    program = read_program(got.get("sown"), what=call)
    roles = _param_roles(got.get("paths"), len(program.args) - 1, call)
    names = got.get("sown_names")
    if not isinstance(names, list) or not names or len(program.results) < 2:
        fail(_("{call}: the model sows nothing. In Net.__call__, self.sow(nnx.Intermediate, 'features', x) after "
               "layer2's ReLU.").format(call=call))
    if names != [["features", 1]] or len(program.results) != 2:
        fail(_("{call}: the model sows {names}; expected one value, named 'features' (self.sow(nnx.Intermediate, "
               "'features', x), once per call).").format(
                   call=call, names=[str(n[0] if isinstance(n, list) and n else n)[:60] for n in names][:5]))
    params = _draw_params(rng, d, h, n_old)
    x = rng.standard_normal((batch, d)).astype(np.float32)
    what = _("{call}, run here on parameters and x drawn here").format(call=call)
    logits, value = run_lowered(got["sown"], [*(params[r] for r in roles), x], what=what)
    layers = _layers(params, x)
    want = layers["the head (the logits)"]
    if np.shape(logits) != want.shape or not np.allclose(logits, want, rtol=1e-4, atol=1e-5):
        fail(_("{what}: the model's logits (shape {got_shape}) differ from layer1, layer2 and the head computed "
               "here (shape {shape}). Do not change the layers.").format(
                   what=what, got_shape=np.shape(logits), shape=want.shape))
    _judge_features(value, layers, _("{what}: what it sows").format(what=what))


def test_features_under_jit_runs_here(run, rng):
    got, (d, h, n_old, __, batch), where = run
    call = _("features(model, x) on Net({d}, {h}, {n_old}), x ({batch}, {d}), lowered under jax.jit").format(
        d=d, h=h, n_old=n_old, batch=batch)
    program = read_program(got.get("features"), what=call)
    roles = _param_roles(got.get("paths"), len(program.args) - 1, call)
    if len(program.results) != 2:
        fail(_("{call}: it returns {n_program_results} arrays; expected two, (logits, activations).").format(
            call=call, n_program_results=len(program.results)))
    # The returned structure is the child's word: it only turns an honest (logits, (activations,)),
    # whose two arrays the numbers below would accept, into a fail.
    if got.get("features_tree") not in ("PyTreeDef((*, *))", "PyTreeDef([*, *])"):
        fail(_("{call}: it returns {tree}; expected (logits, activations), with the activations one array "
               "(batch, h), not the tuple nnx.capture keeps: take sown['features'][0].").format(
                   call=call, tree=str(got.get("features_tree"))[:120]))
    params = _draw_params(rng, d, h, n_old)
    x = rng.standard_normal((batch, d)).astype(np.float32)
    what = _("{call}, run here on parameters and x drawn here").format(call=call)
    logits, feats = run_lowered(got["features"], [*(params[r] for r in roles), x], what=what)
    layers = _layers(params, x)
    want = layers["the head (the logits)"]
    if np.shape(logits) != want.shape or not np.allclose(logits, want, rtol=1e-4, atol=1e-5):
        fail(_("{what}: the first result is not the model's logits ({shape}); return (logits, activations).").format(
            what=what, shape=want.shape))
    _judge_features(feats, layers, _("{what}: the second result").format(what=what))


def _train_roles(got, program, call):
    paths = got.get("train_paths")
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths) or len(paths) != len(program.args) - 2:
        fail(_("{call}: the check could not read the model's and the optimizer's state.").format(call=call))
    scalars = got.get("train_scalars")
    scalars = {p: v for p, v in scalars if isinstance(p, str) and isinstance(v, float) and np.isfinite(v)} \
        if isinstance(scalars, list) and all(isinstance(e, list) and len(e) == 2 for e in scalars) else {}
    roles = []
    for path in paths:
        if SOWN_PATH.match(path):
            roles.append(("sown",))  # what a plain call stored on the model: fed zeros, and judged by the next test
            continue
        role = adam_state_role(path, LAYERS, bare_params=True, hyperparams=True) or \
            adam_state_role(UNNAMED_MOMENT.sub(r"\1['head']\2", path), LAYERS)
        if role is not None and role[0] == "hyper":
            # Its value, as the learner's optimizer holds it, runs the step here: a wrong one shows
            # in the update, which is compared with optax.adam(lr).
            role = (*role, scalars[path]) if role[1] in HYPERPARAMS and path in scalars else None
        if role is None:
            fail(_("{call}: the optimizer holds {path!r}; expected nnx.Optimizer(model, optax.adam(lr), "
                   "wrt=<the head's parameters>).").format(call=call, path=path[:120]))
        roles.append(role)
    trained = sorted({".".join(r[1:]) for r in roles if r[0] in ("mu", "nu") and r[1] != "head"})
    if trained:
        fail(_("{call}: the optimizer keeps Adam state for {trained}: it trains the whole model. Only the "
               "head is fine-tuned: build the optimizer with wrt=nnx.All(nnx.Param, nnx.PathContains('head')).").format(
                   call=call, trained=', '.join(trained)))
    if not any(r[0] == "mu" for r in roles):
        fail(_("{call}: the optimizer keeps no Adam moments for the head; expected optax.adam(lr) over the head's "
               "parameters.").format(call=call))
    if sorted(r[1:] for r in roles if r[0] == "param") != sorted((l, n) for l in LAYERS for n in ("kernel", "bias")):
        fail(_("{call}: the model's parameters are {params}; expected layer1, layer2 and head (swap the head by "
               "assigning model.head).").format(
                   call=call, params=sorted('.'.join(r[1:]) for r in roles if r[0] == 'param')))
    return roles


def _train_call(where, batch, d):
    return _("{where}; train_step(model, optimizer, x ({batch}, {d}), y ({batch},)), lowered under jax.jit").format(
        where=where, batch=batch, d=d)


_READ: dict = {}


def _train_program(got, call):
    """The step's program, read once for the two tests that judge it (each reading is a request to the
    evaluator); kept by its text, the last one only."""
    text = got.get("train")
    if not isinstance(text, str) or text not in _READ:
        program = read_program(text, what=call)
        _READ.clear()
        _READ[text] = program
        return program
    return _READ[text]


def test_the_step_is_not_compiled_anew_every_call(run):
    got, (d, h, n_old, n_new, batch), where = run
    if "train_error" in got:
        return  # named by the next test, which says why the step could not be lowered
    call = _train_call(where, batch, d)
    program = _train_program(got, call)
    # nnx.jit compiles a step again when the state it is handed differs from the one it was
    # compiled for: a step whose program hands back another state than it takes is compiled anew
    # on every call. Read off the program's signature, not from anything the child counted.
    took = [(a.shape, a.dtype) for a in program.args[:-2]]
    gave = [(r.shape, r.dtype) for r in program.results[1:]]
    if took != gave or got.get("train_graph_changes") is True:
        fail(_("{call}: the step takes a state of {n_took} arrays and hands back {n_gave}{also}: every call changes "
               "the state nnx.jit carries into the next one, so the step is compiled anew every call. A plain "
               "model(x) inside the step sows one more array onto the model each time: call the model inside "
               "nnx.capture(model, nnx.Intermediate) there too (or take what it sowed off with nnx.pop).").format(
                   call=call, n_took=len(took), n_gave=len(gave),
                   also=_(" of other shapes") if len(took) == len(gave) and took != gave else ""))


def _update_tolerance(want):
    return UPDATE_TOL_LR * LR + 2 * np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)


def _weight_decay(got, want, old):
    """The decay rate, if what the step did is Adam's step less rate x lr x the weights (within the tolerance)."""
    base = LR * old
    rate = float(np.sum((want - got) * base) / np.sum(base * base))
    if rate > 0 and np.all(np.abs(want - rate * base - got) <= _update_tolerance(want)):
        return rate
    return None


def test_only_the_new_head_trains(run, rng):
    got, (d, h, n_old, n_new, batch), where = run
    call = _train_call(where, batch, d)
    if "train_error" in got:
        shapes = {str(p): s for p, s in got.get("train_shapes", []) if isinstance(p, str)}
        moments = [(p, s) for p, s in shapes.items() if "['mu']['head']['kernel']" in p]
        hint = ""
        if moments and list(moments[0][1]) != [h, n_new]:
            hint = (_(" The optimizer's moments for head.kernel have shape {shape}, the new head ({h}, "
                      "{n_new}): the optimizer was built before the swap, for the old head. Build it after "
                      "model.head = ....").format(shape=tuple(moments[0][1]), h=h, n_new=n_new))
        trained = sorted({".".join(role[1:]) for p in shapes
                          if (role := adam_state_role(p, LAYERS)) and role[0] in ("mu", "nu") and role[1] != "head"})
        if trained:
            hint += _(" The optimizer keeps Adam state for {trained}: it trains the whole model. Only the head is "
                      "fine-tuned: build the optimizer with wrt=nnx.All(nnx.Param, nnx.PathContains('head')).").format(
                          trained=", ".join(trained))
        # Diagnosis only: these paths are the child's word, and the verdict (a fail) does not rest on them.
        fail(_("{call}: the step could not be lowered: {error}.{hint}").format(
            call=call, error=str(got['train_error'])[:300], hint=hint))
    program = _train_program(got, call)
    roles = _train_roles(got, program, call)
    for value, role in zip(program.args, roles):
        if role[0] in ("mu", "nu") and role[2] == "kernel" and value.shape != (h, n_new):
            fail(_("{call}: Adam's {moment} for head.kernel has shape {shape}; the new head is ({h}, {n_new}). The "
                   "optimizer was built for the old head: build it after the swap.").format(
                       call=call, moment=role[0], shape=value.shape, h=h, n_new=n_new))
        if role[:2] == ("param", "head") and role[2] == "kernel" and value.shape != (h, n_new):
            fail(_("{call}: head.kernel has shape {shape}; the new head is nnx.Linear({h}, {n_new}).").format(
                call=call, shape=value.shape, h=h, n_new=n_new))
    if len(program.results) != len(roles) + 1 or program.results[0].shape != ():
        fail(_("{call}: the step returns {n_program_results} arrays; expected the loss and the state it took.").format(
            call=call, n_program_results=len(program.results)))

    params = _draw_params(rng, d, h, n_new)
    head = [("head", "kernel"), ("head", "bias")]
    for k in head:
        shape = params[k].shape
        params[k] = (rng.choice([-1.0, 1.0], shape) * rng.uniform(2.5, 6.5, shape)).astype(np.float32)
    count = int(rng.integers(3, 12))
    mu = {k: (0.05 * rng.standard_normal(params[k].shape)).astype(np.float32) for k in head}
    nu = {k: rng.uniform(1e-3, 1e-2, params[k].shape).astype(np.float32) for k in head}
    batches = [(rng.standard_normal((batch, d)).astype(np.float32),
                rng.integers(0, n_new, size=batch).astype(np.int32)) for __ in range(STEPS)]

    def inputs():
        out = []
        for value, role in zip(program.args, roles):
            if role[0] == "param":
                out.append(params[role[1:]])
            elif role[0] in ("mu", "nu"):
                out.append((mu if role[0] == "mu" else nu)[role[1:]])
            elif role[0] == "hyper":
                out.append(np.array(role[2], dtype=value.dtype))
            elif role[0] == "sown":
                out.append(np.zeros(value.shape, value.dtype))
            else:
                out.append(np.array(count, dtype=value.dtype))
        return out

    body = {k: v.copy() for k, v in params.items() if k[0] != "head"}
    for s, (x, y) in enumerate(batches):
        what = _("{call}, run here on step {step} of {steps} (parameters, Adam state and data drawn here)").format(
            call=call, step=s + 1, steps=STEPS)
        outs = run_lowered(got["train"], [*inputs(), x, y], what=what)
        loss, state = outs[0], outs[1:]
        # The reference: softmax cross-entropy of the head on layer2's activations, Adam on the head only.
        layers = _layers(params, x)
        logits = layers["the head (the logits)"]
        z = logits - logits.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        want_loss = -logp[np.arange(batch), y].mean()
        if np.shape(loss) != () or abs(float(loss) - want_loss) > 1e-4 * max(1.0, abs(want_loss)):
            fail(_("{what}: the loss is {loss}; the mean softmax cross-entropy of the logits, "
                   "before the update, is {want_loss:.6g}.").format(
                       what=what, loss=np.asarray(loss).ravel()[:1], want_loss=want_loss))
        d_logits = np.exp(logp)
        d_logits[np.arange(batch), y] -= 1
        d_logits /= batch
        grads = {("head", "kernel"): layers["layer2"].T @ d_logits, ("head", "bias"): d_logits.sum(0)}
        count += 1
        new, old = {}, {k: np.asarray(params[k], np.float64) for k in grads}
        for k, g in grads.items():
            mu[k] = (B1 * mu[k] + (1 - B1) * g).astype(np.float32)
            nu[k] = (B2 * nu[k] + (1 - B2) * g * g).astype(np.float32)
            new[k] = params[k] - LR * (mu[k] / (1 - B1 ** count)) / (np.sqrt(nu[k] / (1 - B2 ** count)) + EPS)
        for value, role in zip(state, roles):
            if role[0] != "param":
                continue
            key = role[1:]
            if key[0] != "head":
                if not np.array_equal(value, body[key]):
                    fail(_("{what}: {param} changed; only the new head is fine-tuned. Take the gradients for "
                           "the head only (nnx.value_and_grad(loss_fn, argnums=nnx.DiffState(0, HEAD))) and give "
                           "the optimizer wrt=HEAD.").format(what=what, param='.'.join(key)))
            elif np.shape(value) != new[key].shape or np.any(
                    np.abs(np.asarray(value, np.float64) - new[key]) > _update_tolerance(new[key])):
                if np.shape(value) != new[key].shape:
                    diff = float("nan")
                else:
                    diff = float(np.max(np.abs(np.asarray(value, np.float64) - new[key])))
                    decay = _weight_decay(np.asarray(value, np.float64), new[key], old[key])
                    if decay is not None:
                        fail(_("{what}: {param} after the update is Adam's step less {decay:.2g} x lr x its "
                               "weights: that is weight decay (optax.adamw), which the exercise does not ask "
                               "for. Use optax.adam(lr).").format(what=what, param='.'.join(key), decay=decay))
                fail(_("{what}: {param} after the update differs from an Adam step on the head's gradients by "
                       "up to {diff:.3g}. Update with optimizer.update(model, grads), the gradients of the mean "
                       "cross-entropy.").format(what=what, param='.'.join(key), diff=diff))
        # The next step starts from the program's own state, as a training loop would.
        for value, role in zip(state, roles):
            if role[0] == "param":
                params[role[1:]] = np.asarray(value)
            elif role[0] in ("mu", "nu"):
                (mu if role[0] == "mu" else nu)[role[1:]] = np.asarray(value)


def test_the_swapped_model_runs_here(run, rng):
    got, (d, h, n_old, n_new, batch), where = run
    call = _("{where}: the new model's forward pass, lowered under jax.jit").format(where=where)
    program = read_program(got.get("forward"), what=call)
    roles = _param_roles(got.get("model_paths"), len(program.args) - 1, call)
    params = _draw_params(rng, d, h, n_new)
    x = (2.0 * rng.standard_normal((EVAL_ROWS, d))).astype(np.float32)
    what = _("{call}, run here on parameters and x drawn here").format(call=call)
    for value, role in zip(program.args, roles):
        if value.shape != params[role].shape:
            fail(_("{what}: {param} has shape {shape}; expected {shape2} (a new head: nnx.Linear({h}, "
                   "{n_new})).").format(
                       what=what, param='.'.join(role), shape=value.shape, shape2=params[role].shape, h=h,
                       n_new=n_new))
    (logits,) = run_lowered(got["forward"], [*(params[r] for r in roles), x], what=what)
    want = _layers(params, x)["the head (the logits)"]
    if np.shape(logits) != want.shape or not np.allclose(logits, want, rtol=1e-4, atol=1e-5):
        fail(_("{what}: the logits (shape {got_shape}) differ from layer1, layer2 and the new head computed "
               "here (shape {shape}). Assign the new layer to model.head, the attribute Net.__call__ uses.").format(
                   what=what, got_shape=np.shape(logits), shape=want.shape))
