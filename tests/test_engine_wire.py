"""The wire format: what the learner's process can send, and what it cannot."""

from __future__ import annotations

import base64
import json

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from flax import nnx

from course.engine.wire import DecodeError, NotPlainData, decode, encode, to_plain


def roundtrip(value):
    return decode(encode(to_plain(value)))


def test_plain_values_roundtrip_exactly():
    value = {"a": [1, 2.5, float("nan"), None, True, "s"], "t": (np.arange(6, dtype=np.int16).reshape(2, 3),),
             "x": np.float32(1.5), "c": np.array([1 + 2j])}
    back = roundtrip(value)
    assert back["a"][:2] == [1, 2.5] and np.isnan(back["a"][2]) and back["a"][3:] == [None, True, "s"]
    assert isinstance(back["t"], tuple) and back["t"][0].dtype == np.int16 and back["t"][0].shape == (2, 3)
    assert back["x"].dtype == np.float32 and back["x"].shape == ()
    assert back["c"][0] == 1 + 2j
    assert roundtrip({"__array__": 1}) == {"__array__": 1}  # keys never collide with the tags


def test_jax_values_become_numpy_in_the_child():
    key = jax.random.key(0)
    model = nnx.Linear(2, 3, rngs=nnx.Rngs(0))
    opt_state = optax.adam(1e-3).init({"w": jnp.ones(2)})
    back = roundtrip({"arr": jnp.ones((2, 2), jnp.bfloat16), "key": key, "state": nnx.state(model),
                      "opt": opt_state})
    assert back["arr"].dtype == np.float32
    assert np.array_equal(back["key"], np.asarray(jax.random.key_data(key)))
    assert set(back["state"]) == {"kernel", "bias"} and back["state"]["kernel"].shape == (2, 3)
    assert back["opt"][0]["mu"]["w"].shape == (2,)


@pytest.mark.parametrize("value", [object(), np.array(["a"]), np.array([1], dtype=object), {1: 2}, print,
                                   type("MyInt", (int,), {})(3)])
def test_everything_else_is_not_plain_data(value):
    with pytest.raises(NotPlainData):
        to_plain(value)


@pytest.mark.parametrize("payload", [
    b"not json",
    b"[" * 100000 + b"]" * 100000,
    json.dumps({"a": base64.b64encode(b"x" * 8).decode(), "dtype": "|O", "shape": [1]}).encode(),
    json.dumps({"a": base64.b64encode(b"x" * 8).decode(), "dtype": "<f8", "shape": [2]}).encode(),
    json.dumps({"a": "", "dtype": "<f8", "shape": [2**40, 2**40, 0, -1]}).encode(),
    json.dumps({"pickle": "gASV"}).encode(),
    json.dumps([1, 2]).encode(),
])
def test_malformed_or_hostile_bytes_are_rejected(payload):
    with pytest.raises(DecodeError):
        decode(payload)
