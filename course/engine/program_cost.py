"""The evaluator's estimate of what running a program costs, walked over MLIR's reading of it.

Imported only by the evaluator's reader (`course.engine.program_reader`), which hands it
a verified module's functions: per operation, work from its operand and result shapes,
so that a program over its budget is refused before XLA compiles it.
"""

from __future__ import annotations

import math
import re

from course.engine.program_types import UNDEFINED_CALL, Cost, ProgramError


def cast(kind, thing):
    """`kind(thing)` (an MLIR type or attribute class), or None when `thing` is not one."""
    try:
        return kind(thing)
    except (ValueError, TypeError):
        return None


_ITEMSIZE = {"i1": 1, "i8": 1, "ui8": 1, "f16": 2, "bf16": 2, "i16": 2, "ui16": 2, "f32": 4, "i32": 4,
             "ui32": 4, "f64": 8, "i64": 8, "ui64": 8, "complex<f32>": 8, "complex<f64>": 16}
_INTS = re.compile(r"-?\d+")


def _elements(t) -> int:
    from jax._src.lib.mlir import ir

    ranked = cast(ir.RankedTensorType, t)
    if ranked is None:
        return 1
    return math.prod(max(int(d), 0) for d in ranked.shape)


def _nbytes(t) -> int:
    from jax._src.lib.mlir import ir

    ranked = cast(ir.RankedTensorType, t)
    if ranked is None:
        return 8
    return _elements(t) * _ITEMSIZE.get(str(ranked.element_type), 8)


def _attr_ints(op, name: str) -> list[int]:
    if name not in op.attributes:
        return []
    return [int(n) for n in _INTS.findall(str(op.attributes[name]).split(":")[-1])]


class CostWalk:
    """Sums an estimate of every operation's work, a private function once per call.

    Per operation, from its operand and result shapes: a matrix product
    2*M*N*K, a convolution 2 * output * (kernel / output features), a windowed
    reduction output * window * its body, a reduction or scatter its inputs
    times its body, a sort n*log2(n) times its comparator, a loop its body times
    the trip count its condition compares with (once when that is not a constant),
    a branch its dearest branch; any other operation one per output element.
    Bytes are those every operation reads and writes."""

    def __init__(self, funcs: dict) -> None:
        self.funcs = funcs
        self.memo: dict[str, Cost] = {}

    def function(self, name: str, stack: frozenset) -> Cost:
        if name not in self.memo:
            if name in stack or name not in self.funcs:
                raise ProgramError(UNDEFINED_CALL, name=name)
            self.memo[name] = self.regions(self.funcs[name].operation, stack | {name})
        return self.memo[name]

    def regions(self, operation, stack) -> Cost:
        flops = moved = 0.0
        bounded = True
        for region in operation.regions:
            c = self.region(region, stack)
            flops, moved, bounded = flops + c.flops, moved + c.bytes, bounded and c.bounded
        return Cost(flops, moved, bounded)

    def region(self, region, stack) -> Cost:
        flops = moved = 0.0
        bounded = True
        for block in region.blocks:
            for op in block.operations:
                c = self.op(op, stack)
                flops, moved, bounded = flops + c.flops, moved + c.bytes, bounded and c.bounded
        return Cost(flops, moved, bounded)

    def op(self, op, stack) -> Cost:
        from jax._src.lib.mlir import ir

        name = op.operation.name
        out = sum(_elements(r.type) for r in op.results)
        moved = float(sum(_nbytes(r.type) for r in op.results) + sum(_nbytes(v.type) for v in op.operands))
        regions = list(op.operation.regions)
        if name == "func.call":
            return self.function(ir.FlatSymbolRefAttr(op.attributes["callee"]).value, stack)
        if name == "stablehlo.while":
            cond, body = self.region(regions[0], stack), self.region(regions[1], stack)
            trips = _trip_count(regions[0])
            n = 1 if trips is None else trips
            return Cost((cond.flops + body.flops) * n, moved + (cond.bytes + body.bytes) * n,
                        trips is not None and cond.bounded and body.bounded)
        if name in ("stablehlo.case", "stablehlo.if"):
            branches = [self.region(r, stack) for r in regions] or [Cost(0.0, 0.0)]
            return Cost(max(b.flops for b in branches), moved + max(b.bytes for b in branches),
                        all(b.bounded for b in branches))
        body = self.regions(op.operation, stack) if regions else Cost(0.0, 0.0)
        per = max(body.flops, 1.0)  # what the region does per application (scalar ops)
        operands = [v.type for v in op.operands]
        if name in ("stablehlo.dot_general", "stablehlo.dot") and len(operands) >= 2:
            lhs = cast(ir.RankedTensorType, operands[0])
            if name == "stablehlo.dot_general" and lhs is not None:
                text = str(op.attributes["dot_dimension_numbers"]) if "dot_dimension_numbers" in op.attributes else ""
                m = re.search(r"lhs_contracting_dimensions = \[([\d, ]*)\]", text)
                dims = [int(d) for d in _INTS.findall(m.group(1))] if m else []
                k = math.prod(int(lhs.shape[d]) for d in dims if 0 <= d < lhs.rank)
            else:
                k = int(lhs.shape[-1]) if lhs is not None and lhs.rank else 1
            return Cost(2.0 * out * max(k, 1), moved)
        if name == "stablehlo.convolution" and len(operands) >= 2:
            kernel = cast(ir.RankedTensorType, operands[1])
            per_output = _elements(operands[1])
            spec = str(op.attributes["dimension_numbers"]) if "dimension_numbers" in op.attributes else ""
            m = re.search(r"x\[([^\]]*)\]", spec)
            if kernel is not None and m:
                names = [d.strip() for d in m.group(1).split(",")]
                if "o" in names and names.index("o") < kernel.rank:
                    per_output //= max(int(kernel.shape[names.index("o")]), 1)
            return Cost(2.0 * out * max(per_output, 1), moved)
        if name == "stablehlo.reduce_window":
            window = math.prod(_attr_ints(op, "window_dimensions") or [1])
            return Cost(float(out) * window * per, moved)
        if name == "stablehlo.select_and_scatter":
            window = math.prod(_attr_ints(op, "window_dimensions") or [1])
            return Cost(float(_elements(operands[0])) * window * per, moved)
        if name == "stablehlo.sort":
            n = _elements(operands[0]) if operands else 1
            ranked = cast(ir.RankedTensorType, operands[0]) if operands else None
            along = max((int(d) for d in ranked.shape), default=1) if ranked is not None else 1
            return Cost(float(n) * max(math.log2(max(along, 2)), 1.0) * per, moved)
        if name in ("stablehlo.reduce", "stablehlo.scatter", "stablehlo.all_reduce", "stablehlo.reduce_scatter"):
            inputs = max((_elements(t) for t in operands), default=1)
            return Cost(float(inputs) * per, moved)
        if regions:  # any other operation with a body: each output element may run it
            return Cost(float(out) * per, moved + body.bytes, body.bounded)
        return Cost(float(out), moved)


def _trip_count(cond) -> int | None:
    """The constant a loop's condition compares its counter with (JAX's fori_loop and scan), if any."""
    for block in cond.blocks:
        for op in block.operations:
            if op.operation.name != "stablehlo.compare":
                continue
            for value in op.operands:
                owner = value.owner
                name = getattr(getattr(owner, "operation", owner), "name", "")
                if name == "stablehlo.constant":
                    text = str(owner.attributes["value"])
                    m = re.match(r"dense<(-?[\d.e+]+)>", text)
                    if m:
                        try:
                            return max(int(float(m.group(1))), 1)
                        except (ValueError, OverflowError):
                            return None
    return None
