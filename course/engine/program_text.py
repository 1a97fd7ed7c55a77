"""Reading a lowered program's text in plain Python, without a parser: both sides use it.

The trusted side reads what it may without MLIR (`programs.parse(text,
verify=False)`: op names line by line, the entry point's signature by bracket
matching) and checks that a text is a module with a public `@main` before it
forwards it; the evaluator (`program_reader`) reads tensor types and GSPMD
sharding strings the same way. Nothing here trusts the text: it is hostile,
already bounded (`program_types.bounded_text`), and every reading is linear in
its length.
"""

from __future__ import annotations

import re

from course.engine.program_types import (
    MAX_PROGRAM_CHARS, NOT_A_PROGRAM, SIGNATURE_NOT_CLOSED, Program, ProgramError, Value, bounded_text,
)

# `%0:4 = stablehlo.while(...)`, `stablehlo.return ...`, `"stablehlo.foo"(...)`, `func.call @f(...)`.
_OP = re.compile(r'^\s*(?:%[\w#:.,% ]+=\s*)?"?([a-z][a-z0-9_]*\.[a-z][a-z0-9_.]*)"?[\s(<{]')
_MAIN = re.compile(r"func\.func\s+public\s+@main\(")
# Attribute aliases may come before the module (`#loc1 = loc("x")`, as JAX writes modules with locations).
_ALIASES = re.compile(r"^\s*#[\w.$-]+\s*=[^\n]*\n", re.M)
_MESH = re.compile(r"sdy\.mesh\s+@([\w.$-]+)\s*=\s*<\[([^\]]*)\]")
_MESH_AXIS = re.compile(r'"([^"]+)"\s*=\s*(\d+)')
_TENSOR = re.compile(r"tensor<([^>]*)>")
_SDY = re.compile(r"sdy\.sharding\s*=\s*#sdy\.sharding<@([\w.$-]+)\s*,\s*\[(.*?)\](?:\s*,[^>]*)?>")
_MHLO = re.compile(r'mhlo\.sharding\s*=\s*"([^"]*)"')
_DIM = re.compile(r"\{([^{}]*)\}")
_AXIS_NAME = re.compile(r'"([^"]+)"')

MLIR_DTYPES = {
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
    "i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "ui8": "uint8", "ui16": "uint16", "ui32": "uint32", "ui64": "uint64",
    "complex<f32>": "complex64", "complex<f64>": "complex128",
}


def entry_point(text: object) -> tuple[str, re.Match]:
    """`text` bounded (`bounded_text`) and where its `@main`'s arguments start, if it reads as
    a lowered module (attribute aliases, then `module`, with a public `@main`); a ProgramError
    otherwise."""
    text = bounded_text(text)
    main = _MAIN.search(text)
    if main is None or not _ALIASES.sub("", text[:main.start()]).lstrip().startswith("module"):
        raise ProgramError(NOT_A_PROGRAM)
    return text, main


def read_unverified(text: str, main: re.Match) -> Program:
    """What the text says, read line by line (`entry_point` gave `main`): op names, meshes,
    partitions and `@main`'s signature. A string in the text can pass for any of them: for
    judging, the evaluator's reading through MLIR (`programs.parse`) is the one to use."""
    program = Program(text=text)
    for line in text.splitlines():
        m = _OP.match(line)
        if m:
            program.ops[m.group(1)] += 1
    for m in _MESH.finditer(text):
        program.meshes[m.group(1)] = {a: int(n) for a, n in _MESH_AXIS.findall(m.group(2))}
    parts = re.search(r"mhlo\.num_partitions\s*=\s*(\d+)", text[: main.start()])
    program.num_partitions = int(parts.group(1)) if parts else 1
    args_text, results_text = _signature(text, main.end())
    program.args = [value_of(a) for a in _split_top(args_text)]
    program.results = [value_of(r) for r in _split_top(results_text)]
    return program


def tensor_shapes(text: str) -> list[tuple[int, ...]]:
    """The shape of every `tensor<...>` type written in the text."""
    return [value_of(f"tensor<{spec}>").shape for spec in _TENSOR.findall(text)]


def _signature(text: str, start: int) -> tuple[str, str]:
    """The argument list and result list of `@main`, found by bracket matching."""
    end = _matching(text, start - 1)
    args = text[start:end]
    rest = text[end + 1:end + 4096 + 200_000]
    m = re.match(r"\s*->\s*", rest)
    if m is None:
        return args, ""
    rest = rest[m.end():]
    if rest.startswith("("):
        close = _matching(rest, 0)
        return args, rest[1:close]
    brace = rest.find("{")
    return args, rest[:brace if brace >= 0 else len(rest)]


def _matching(text: str, open_at: int) -> int:
    pairs = {"(": ")", "{": "}", "[": "]", "<": ">"}
    stack: list[str] = []
    in_str = False
    for i in range(open_at, min(len(text), open_at + MAX_PROGRAM_CHARS)):
        c = text[i]
        if in_str:
            if c == "\\":
                continue
            if c == '"':
                in_str = False
            continue
        if c == '"':
            in_str = True
        elif c in pairs:
            stack.append(pairs[c])
        elif stack and c == stack[-1]:
            stack.pop()
            if not stack:
                return i
        elif c == ">" and text[i - 1:i] == "-":
            continue  # `->` is not a closing bracket
    raise ProgramError(SIGNATURE_NOT_CLOSED)


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets and strings."""
    parts, depth, in_str, cur = [], 0, False, []
    for i, c in enumerate(text):
        if in_str:
            cur.append(c)
            if c == '"' and text[i - 1] != "\\":
                in_str = False
            continue
        if c == '"':
            in_str = True
        elif c in "([{<":
            depth += 1
        elif c in ")]}>" and not (c == ">" and text[i - 1:i] == "-"):
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


def value_of(text: str) -> Value:
    t = _TENSOR.search(text)
    if t is None:
        return Value((), "unknown")
    *dims, dtype = t.group(1).split("x") if "x" in t.group(1) else ["", t.group(1)]
    dims = [d for d in dims if d != ""]
    try:
        shape = tuple(int(d) for d in dims)
    except ValueError:
        shape = ()
    dtype = MLIR_DTYPES.get(dtype.strip(), dtype.strip())
    sdy = _SDY.search(text)
    if sdy is not None:
        spec = tuple(tuple(_AXIS_NAME.findall(dim)) for dim in _DIM.findall(sdy.group(2)))
        return Value(shape, dtype, spec, sdy.group(0))
    mhlo = _MHLO.search(text)
    if mhlo is not None:
        return Value(shape, dtype, mhlo_spec(mhlo.group(1), len(shape)), mhlo.group(1))
    return Value(shape, dtype)


def mhlo_spec(raw: str, rank: int) -> tuple[tuple[str, ...], ...] | None:
    """GSPMD strings name no axes: a split dimension is reported as split over `"*N"`."""
    if "replicated" in raw or "maximal" in raw:
        return tuple(() for _ in range(rank))
    m = re.search(r"devices=\[([\d,]+)\]", raw)
    if m is None:
        return None
    tiles = [int(n) for n in m.group(1).split(",")][:rank]
    return tuple((f"*{n}",) if n > 1 else () for n in tiles)
