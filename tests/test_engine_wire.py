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

from course.engine.wire import MAX_CONTAINERS, DecodeError, NotPlainData, decode, encode, to_plain


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


@pytest.mark.parametrize("value", [np.float64(0.1), np.float32(-2.5), np.int8(-3), np.uint64(2**63 + 5),
                                   np.bool_(True), np.complex64(1 - 2j), np.float16(np.inf)])
def test_numpy_scalars_stay_scalars_of_their_dtype(value):
    back = roundtrip({"v": value})["v"]
    assert isinstance(back, np.generic) and not isinstance(back, np.ndarray)
    assert back.dtype == value.dtype and back.tobytes() == value.tobytes()


def test_np_float64_is_still_a_python_float_after_the_wire():
    back = roundtrip(np.float64(0.75))
    assert isinstance(back, float) and back == 0.75


def test_a_numpy_scalar_subclass_crosses_as_numpy_s_own_type():
    rigged = type("Rigged", (np.float64,), {"__eq__": lambda self, other: True})(3.0)
    back = roundtrip(rigged)
    assert type(back) is np.float64 and back != 4.0


def test_zero_d_arrays_stay_arrays():
    back = roundtrip(np.array(2.0, np.float32))
    assert type(back) is np.ndarray and back.shape == () and back.dtype == np.float32


@pytest.mark.parametrize("raw", [
    {"s": base64.b64encode(b"x" * 4).decode(), "dtype": "<f8"},
    {"s": base64.b64encode(b"x" * 8).decode(), "dtype": "|O"},
    {"s": base64.b64encode(b"x" * 8).decode(), "dtype": "|V8"},
    {"s": "not base64!", "dtype": "<f8"},
    {"s": 1, "dtype": "<f8"},
    {"x": "", "dtype": "<f8"},
])
def test_malformed_scalars_are_rejected(raw):
    with pytest.raises(DecodeError):
        decode(json.dumps(raw).encode())


# -- assertions on dtypes --------------------------------------------------------

from course.engine.checking import CheckFailure, assert_close, assert_equal, assert_tree_close  # noqa: E402


def test_float64_where_the_reference_is_float32_fails_with_the_dtypes_named():
    want = np.ones(3, np.float32)
    with pytest.raises(CheckFailure, match="expected dtype float32, got dtype float64"):
        assert_close(np.ones(3, np.float64), want, what="x")
    with pytest.raises(CheckFailure, match="float64"):
        assert_tree_close({"a": [np.ones(2)]}, {"a": [np.ones(2, np.float32)]}, what="tree")
    assert_close(np.ones(3, np.float32), want, what="x")


def test_a_named_dtype_is_required_of_scalars_too():
    with pytest.raises(CheckFailure, match="expected dtype float32, got a Python float"):
        assert_close(1.0, np.float32(1.0), what="x", dtype=np.float32)
    assert_close(np.float32(1.0), 1.0, what="x", dtype="float32")
    with pytest.raises(CheckFailure, match="expected dtype int32, got dtype int64"):
        assert_close(np.arange(2), np.arange(2, dtype=np.int32), what="i", dtype=np.int32)


def test_a_number_may_be_any_float_scalar():
    # "Return a float": np.float64 (a float subclass), np.float32 and float all pass against a 0-d array.
    for got in (0.5, np.float64(0.5), np.float32(0.5), np.array(0.5, np.float32)):
        assert_close(got, np.array(0.5, np.float32), what="x")
    assert_equal(np.float64(0.5), 0.5, what="a float")
    with pytest.raises(CheckFailure):
        assert_equal(np.int64(1), 1, what="an int")  # not a Python int: the statement says which
    with pytest.raises(CheckFailure):
        assert_close(np.array([0.5]), np.array(0.5, np.float32), what="shape")


def test_brackets_inside_strings_are_text_not_lists():
    """A reply's strings may hold any number of brackets: only lists and objects count."""
    text = "[" * (MAX_CONTAINERS + 10)
    assert decode(encode({"log": text, "more": ["{[" * 1000, "a\\\"[["]})) == \
        {"log": text, "more": ["{[" * 1000, 'a\\"[[']}


def test_a_refused_reply_says_what_was_refused():
    many = b"[" + b'[],' * MAX_CONTAINERS + b'"[["]'
    with pytest.raises(DecodeError, match=f"the reply holds {MAX_CONTAINERS + 1} lists or objects, more than "
                                          f"the {MAX_CONTAINERS} a reply may hold"):
        decode(many)
    with pytest.raises(DecodeError, match="too many to tell its lists and objects"):
        decode(b"[" + b'"[",' * (4 * MAX_CONTAINERS + 1) + b'""]')
    with pytest.raises(DecodeError, match="the reply is not valid JSON"):
        decode(b'{"l": [}')
