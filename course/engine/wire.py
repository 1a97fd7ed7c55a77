"""Plain data: the only thing that crosses between a check and the learner's process.

Plain data is None, bool, int, float, str, lists, tuples, dicts with str keys,
NumPy arrays of numeric or bool dtype, and NumPy scalars of those dtypes (a
`np.float64` stays a scalar: it is a `float`, and an exercise that asks for a
Python float accepts it). `to_plain` (run in the learner's
process) turns JAX arrays, typed PRNG keys, `nnx.State` and other pytrees into
that; anything else raises `NotPlainData`, so an object with a rigged `__eq__`
never reaches the check.

`encode`/`decode` write and read plain data as JSON, arrays as base64 bytes
with dtype and shape. The reader builds only the types listed above: nothing
the learner's process sends is ever unpickled or executed.
"""

from __future__ import annotations

import base64
import json
import math
import re
import sys
from typing import Any

import numpy as np

# Dtype kinds an array may have: bool, signed/unsigned int, float, complex.
_ARRAY_KINDS = frozenset("biufc")
MAX_DEPTH = 64
# Lists, tuples, dicts, floats and arrays a reply may hold, counted before JSON is parsed:
# each costs the reader a few hundred bytes, whatever its few bytes of text, so the
# count, not the size, bounds what a reply of nested empty lists costs. Real replies
# (arrays, a few dicts of them) hold hundreds.
MAX_CONTAINERS = 200_000


class NotPlainData(TypeError):
    """A value that is not plain data; the message says which and where."""


def _describe(value: Any) -> str:
    cls = type(value)
    return f"{cls.__module__}.{cls.__qualname__}" if cls.__module__ != "builtins" else cls.__qualname__


def to_plain(value: Any, *, where: str = "the result") -> Any:
    """Convert `value` to plain data, or raise `NotPlainData` saying what and where."""
    return _to_plain(value, where, 0)


def _to_plain(value: Any, where: str, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise NotPlainData(f"{where} is nested more than {MAX_DEPTH} levels deep")
    # Exact type checks: a subclass of int or str could carry its own __eq__.
    if value is None or type(value) in (bool, int, float, str):
        return value
    if type(value) is list or type(value) is tuple:
        items = [_to_plain(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
        return items if type(value) is list else tuple(items)
    if type(value) is dict:
        out = {}
        for k, v in value.items():
            if type(k) is not str:
                raise NotPlainData(f"{where} has a dict key {k!r} of type {_describe(k)}; keys must be str")
            out[k] = _to_plain(v, f"{where}[{k!r}]", depth + 1)
        return out
    if type(value) is np.ndarray or isinstance(value, np.generic):
        arr = np.asarray(value)
        if arr.dtype.kind == "V" and "float" in arr.dtype.name:
            arr = arr.astype(np.float32)  # bfloat16 / float8 (ml_dtypes): compare as float32
        if arr.dtype.kind not in _ARRAY_KINDS:
            raise NotPlainData(f"{where} is a NumPy array of dtype {arr.dtype}; only numeric and bool arrays are plain data")
        if isinstance(value, np.generic):
            return arr[()]  # a fresh scalar of NumPy's own type, never the learner's subclass
        return np.array(arr, copy=True)
    converted = _convert_library_value(value, where, depth)
    if converted is not _UNKNOWN:
        return converted
    raise NotPlainData(
        f"{where} is of type {_describe(value)}, which is not plain data. Return numbers, "
        "strings, lists/tuples/dicts of them, or NumPy/JAX arrays."
    )


_UNKNOWN = object()


def _convert_library_value(value: Any, where: str, depth: int) -> Any:
    """JAX arrays, PRNG keys, nnx.State and registered pytrees, if JAX is loaded.

    Only looked up in sys.modules: if the learner's code never imported JAX,
    none of its values can be JAX values, and plain-data checks stay cheap.
    """
    jax = sys.modules.get("jax")
    if jax is None:
        return _UNKNOWN
    if isinstance(value, jax.Array):
        if jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key):
            value = jax.random.key_data(value)
        return _to_plain(np.asarray(value), where, depth)
    nnx = sys.modules.get("flax.nnx")
    if nnx is not None and isinstance(value, nnx.State):
        pure = nnx.to_pure_dict(value) if hasattr(nnx, "to_pure_dict") else value.to_pure_dict()
        return _to_plain(_pure_dict(pure), where, depth + 1)
    if nnx is not None and isinstance(value, nnx.Variable):
        return _to_plain(value.get_value(), where, depth + 1)
    # Any other registered pytree node (NamedTuple, dataclass, optax state, ...):
    # flatten one level, keep the keys as a dict or the children as a list.
    children = jax.tree_util.tree_flatten_with_path(value, is_leaf=lambda x: x is not value)[0]
    if len(children) == 1 and children[0][0] == () and children[0][1] is value:
        return _UNKNOWN  # a leaf that is not an array: not plain
    keys = [_key_name(path[0]) if path else None for path, _ in children]
    if keys and all(isinstance(k, str) for k in keys) and len(set(keys)) == len(keys):
        return {k: _to_plain(v, f"{where}.{k}", depth + 1) for k, (_, v) in zip(keys, children)}
    return [_to_plain(v, f"{where}[{i}]", depth + 1) for i, (_, v) in enumerate(children)]


def _key_name(entry: Any) -> str | None:
    for attr in ("name", "key"):
        k = getattr(entry, attr, None)
        if isinstance(k, str):
            return k
    return None


def _pure_dict(tree: Any) -> Any:
    # nnx's pure dict may use int keys (layers in a list); plain dicts need str keys.
    if isinstance(tree, dict):
        return {str(k): _pure_dict(v) for k, v in tree.items()}
    return tree


# -- the wire format ---------------------------------------------------------------
# Every container is tagged so that decoding is unambiguous: a learner's dict that
# happens to have a key named "__array__" is still just a dict.


def _enc(value: Any) -> Any:
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        return {"f": repr(value)}  # keeps nan/inf and every bit of the value
    if type(value) is list:
        return {"l": [_enc(v) for v in value]}
    if type(value) is tuple:
        return {"t": [_enc(v) for v in value]}
    if type(value) is dict:
        return {"d": {k: _enc(v) for k, v in value.items()}}
    if isinstance(value, np.generic) and type(value) is np.dtype(type(value)).type:
        return {"s": base64.b64encode(value.tobytes()).decode("ascii"), "dtype": value.dtype.str}
    if type(value) is np.ndarray:
        arr = np.ascontiguousarray(value).reshape(value.shape)  # ascontiguousarray makes 0-d arrays 1-d
        return {
            "a": base64.b64encode(arr.tobytes()).decode("ascii"),
            "dtype": arr.dtype.str,
            "shape": list(arr.shape),
        }
    raise NotPlainData(f"cannot encode a {_describe(value)}")


def encode(value: Any) -> bytes:
    """Plain data (already converted with `to_plain`) as JSON bytes."""
    return json.dumps(_enc(value), separators=(",", ":")).encode("utf-8")


class DecodeError(ValueError):
    """Bytes that are not a well-formed encoding of plain data."""


def decode(data: bytes, *, max_containers: int = MAX_CONTAINERS) -> Any:
    return _dec(read_json(data, max_containers=max_containers), 0)


# A JSON string: what its brackets are is text, not structure.
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)


def read_json(data: bytes, *, max_containers: int = MAX_CONTAINERS) -> Any:
    """JSON from a process that is not trusted, its cost bounded before it is parsed.

    Every container opens with `{` or `[`, every string with `"`: counting those bytes
    (in C, no copy) bounds the objects `json.loads` would build. Only when the count is
    over the limit are the brackets inside strings, which build nothing, taken off it,
    so a reply whose strings hold brackets is read. Depth is bounded by the parser's own
    recursion limit (RecursionError) and then by `_dec`."""
    if not isinstance(data, (bytes, bytearray)):
        raise DecodeError(f"expected bytes, got {type(data).__name__}")
    containers = data.count(b"{") + data.count(b"[")
    if containers > max_containers:
        strings = data.count(b'"') // 2
        if strings > 4 * max_containers:  # arrays and floats cross as a few strings per object
            raise DecodeError(f"the reply holds {containers} brackets and about {strings} strings, too many to "
                              f"tell its lists and objects (at most {max_containers}) from its text")
        for m in _JSON_STRING.finditer(data):
            containers -= data.count(b"{", m.start(), m.end()) + data.count(b"[", m.start(), m.end())
        if containers > max_containers:
            raise DecodeError(f"the reply holds {containers} lists or objects, more than the {max_containers} "
                              "a reply may hold")
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as e:
        raise DecodeError(f"the reply is not valid JSON: {str(e)[:200]}") from None


def _dec(raw: Any, depth: int) -> Any:
    if depth > MAX_DEPTH + 2:
        raise DecodeError("nested too deeply")
    if raw is None or type(raw) in (bool, int, str):
        return raw
    if type(raw) is not dict or len(raw) not in (1, 2, 3):
        raise DecodeError(f"unexpected value of type {type(raw).__name__}")
    if len(raw) == 1:
        (tag, body), = raw.items()
        if tag == "f" and type(body) is str:
            try:
                return float(body)
            except ValueError:
                raise DecodeError(f"bad float {body[:40]!r}") from None
        if tag in ("l", "t") and type(body) is list:
            items = [_dec(v, depth + 1) for v in body]
            return items if tag == "l" else tuple(items)
        if tag == "d" and type(body) is dict:
            return {str(k): _dec(v, depth + 1) for k, v in body.items()}
        raise DecodeError(f"unknown tag {tag!r}")
    if len(raw) == 2:
        return _dec_scalar(raw)
    return _dec_array(raw)


def _dec_scalar(raw: dict) -> np.generic:
    try:
        dtype = np.dtype(str(raw["dtype"]))
        buf = base64.b64decode(raw["s"], validate=True)
    except (KeyError, TypeError, ValueError) as e:
        raise DecodeError(f"bad scalar: {e}") from None
    if dtype.kind not in _ARRAY_KINDS or dtype.hasobject or dtype.shape != () or len(buf) != dtype.itemsize:
        raise DecodeError(f"bad scalar of dtype {dtype}")
    return np.frombuffer(buf, dtype=dtype)[0]


def _dec_array(raw: dict) -> np.ndarray:
    try:
        dtype = np.dtype(str(raw["dtype"]))
        shape = tuple(int(n) for n in raw["shape"])
        buf = base64.b64decode(raw["a"], validate=True)
    except (KeyError, TypeError, ValueError) as e:
        raise DecodeError(f"bad array: {e}") from None
    if dtype.kind not in _ARRAY_KINDS or dtype.hasobject:
        raise DecodeError(f"array dtype {dtype} is not allowed")
    if len(shape) > 64 or any(n < 0 for n in shape) or len(buf) != dtype.itemsize * math.prod(shape):
        raise DecodeError("array bytes do not match its shape and dtype")
    try:
        return np.frombuffer(buf, dtype=dtype).reshape(shape).copy()
    except ValueError as e:
        raise DecodeError(f"bad array: {e}") from None


def to_wire(value: Any) -> Any:
    """Plain data as a JSON-ready structure (for embedding in a larger message)."""
    return _enc(value)


def from_wire(raw: Any) -> Any:
    """The inverse of `to_wire`, with the same strictness as `decode`."""
    return _dec(raw, 0)
