"""Trusted-side evidence: lowered programs are run here only when they are bounded."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax import nnx

from course.engine.checking import CheckFailure
from course.engine.evidence import adam_state_role, main_signature, mlp_forward, run_lowered

S = jax.ShapeDtypeStruct


def lowered(fn, *specs):
    return jax.jit(fn, keep_unused=True).lower(*specs).as_text()


def test_a_program_runs_here_on_fresh_values():
    text = lowered(lambda x, m: (jnp.where(x > m, x, 0.0), x.sum()), S((3, 4), jnp.float32), S((), jnp.float32))
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = run_lowered(text, [x, np.float32(5.5)], what="f")
    assert np.array_equal(out[0], np.where(x > 5.5, x, 0)) and out[1] == x.sum() and out[0].dtype == np.float32


def test_the_signature_is_read_from_the_text():
    text = lowered(lambda labels: jax.nn.one_hot(labels, 5), S((7,), jnp.int32))
    assert main_signature(text) == ([((7,), "int32")], [((7, 5), "float32")])


def test_a_program_with_a_loop_runs_in_a_process_of_its_own():
    # A correct fori_loop or scan is run (apart, under a time limit; an endless one: test_engine_programs).
    text = lowered(lambda x: jax.lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2), (0, x))[1],
                   S((3,), jnp.float32))
    (out,) = run_lowered(text, [np.array([1.0, -2.0, 0.5], np.float32)], what="jax.jit(f)")
    np.testing.assert_allclose(out, np.array([1.0, -2.0, 0.5]) * 2 ** 10)


@pytest.mark.parametrize("text, reason", [
    (lowered(lambda x: jnp.zeros((5000, 5000)) + x.sum(), S((3,), jnp.float32)), "larger"),
    (lowered(lambda x: jax.pure_callback(lambda v: v, jax.ShapeDtypeStruct((3,), jnp.float32), x),
             S((3,), jnp.float32)), "custom|callback"),
    ("module { func.func public @main() -> () { return } }", "inputs"),
    ("not a program", "not a lowered JAX program"),
    (12345, "expected the lowered program as text"),
])
def test_unbounded_or_foreign_programs_fail_the_check_without_running(text, reason):
    with pytest.raises(CheckFailure, match=reason):
        run_lowered(text, [np.ones(3, np.float32)], what="jax.jit(f)")


def test_a_program_whose_inputs_do_not_fit_is_named():
    text = lowered(lambda x: x * 2, S((3,), jnp.float32))
    with pytest.raises(CheckFailure, match=r"its inputs are \(float32\[3\]\), but the check calls it with \(float32\[4\]\)"):
        run_lowered(text, [np.ones(4, np.float32)], what="f")


def test_text_that_does_not_parse_is_a_learner_failure_not_a_crash():
    text = lowered(lambda x: x * 2, S((3,), jnp.float32)).replace("stablehlo.multiply", "stablehlo.multiply %%")
    with pytest.raises(CheckFailure, match="cannot"):
        run_lowered(text, [np.ones(3, np.float32)], what="f")


def test_mlp_forward_is_linear_relu_linear():
    p = {"linear1": {"kernel": np.eye(2), "bias": np.array([0.0, -5.0])},
         "linear2": {"kernel": np.array([[1.0], [1.0]]), "bias": np.array([0.5])}}
    assert np.allclose(mlp_forward(p, np.array([[1.0, 2.0]])), [[1.5]])


def test_adam_state_roles_are_read_from_the_key_paths_of_a_real_optimizer():
    class Net(nnx.Module):
        def __init__(self, rngs):
            self.body = nnx.Linear(3, 4, rngs=rngs)
            self.head = nnx.Linear(4, 2, rngs=rngs)

    model = Net(nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
    state = (nnx.to_pure_dict(nnx.state(model, nnx.Param)), nnx.to_pure_dict(nnx.state(optimizer)))
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(state)[0]]
    roles = [adam_state_role(p, ("body", "head")) for p in paths]
    assert None not in roles, dict(zip(paths, roles))
    assert sorted(r for r in roles if r[0] == "param") == [
        ("param", layer, name) for layer in ("body", "head") for name in ("bias", "kernel")]
    assert sorted(r for r in roles if r[0] == "mu") == [
        ("mu", layer, name) for layer in ("body", "head") for name in ("bias", "kernel")]
    assert roles.count(("count",)) == 1 and roles.count(("step",)) == 1
    # Another layer name, a parameter outside the model's slot, or a stray entry is no role.
    assert adam_state_role("[0]['extra']['kernel']", ("body", "head")) is None
    assert adam_state_role("['body']['kernel']", ("body", "head")) is None
    assert adam_state_role("['body']['kernel']", ("body", "head"), bare_params=True) == ("param", "body", "kernel")
    assert adam_state_role("[1]['opt_state'][0]['mu']['body']['scale']", ("body", "head")) is None
    # Adam under optax's wrappers: its state sits deeper, and inject_hyperparams' numbers are
    # roles only where a check asks for them.
    wrapped = nnx.Optimizer(model, optax.inject_hyperparams(optax.adam)(learning_rate=1e-3), wrt=nnx.Param)
    state = (nnx.to_pure_dict(nnx.state(model, nnx.Param)), nnx.to_pure_dict(nnx.state(wrapped)))
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(state)[0]]
    plain = [adam_state_role(p, ("body", "head")) for p in paths]
    assert sorted(r for r in plain if r is not None and r[0] == "nu") == [
        ("nu", layer, name) for layer in ("body", "head") for name in ("bias", "kernel")]
    hyper = {adam_state_role(p, ("body", "head"), hyperparams=True) for p in paths} - set(plain)
    assert ("hyper", "learning_rate") in hyper and all(r[0] == "hyper" for r in hyper), hyper
    assert adam_state_role("[1]['opt_state']['hyperparams']['learning_rate']", ("body", "head")) is None
    assert adam_state_role("[0]['(body|head)']['kernel']", ("body", "head")) is None
