"""How the lab computes and writes its figures, in one place for every front end.

A speed-up is the ratio of steady-state time per epoch: how many times faster
one variant trains an epoch than another once both are past their first
(compiling or warm-up) step. Steady state is what a long run converges to and
the only figure measured the same way for a variant run in full and one whose
full run is extrapolated; whole-run times (which add init and compile) are
shown beside it, never turned into a second ratio.

No heavy imports here: the app formats reports with it without loading JAX.
"""

from __future__ import annotations

import math

SPEEDUP_BASIS = "ratio of steady-state ms per epoch (after the first, compiling step)"  # stays English in JSON
# The one mark for a figure that was not measured but extrapolated.
EXTRAPOLATED = "*"
MISSING = "-"


def speedup(base_ms_per_epoch: float | None, ms_per_epoch: float | None) -> float | None:
    """How many times faster than the baseline; None when either side has no steady-state time."""
    if not base_ms_per_epoch or not ms_per_epoch:
        return None
    return base_ms_per_epoch / ms_per_epoch


# Rounds far apart: (slowest - fastest) / median above this, and the median is not to be trusted.
SPREAD_LIMIT = 0.5
# Fewer timed rounds than this and there is nothing to take a median of.
MIN_ROUNDS = 3


def median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def spread(values: list[float]) -> float | None:
    """(slowest - fastest) / median of a variant's rounds; None with fewer than two."""
    if len(values) < 2:
        return None
    mid = median(values)
    return (max(values) - min(values)) / mid if mid > 0 else None


def unreliable_reasons(load: list[float | None], cores: int, rounds: dict[str, list[float]]) -> list[dict]:
    """Why a ranking from these figures may not hold, one dict per reason (English keys, for the JSON report).

    `load` is the 1-minute load average at the start and the end of the run, `rounds` each
    finished variant's ms per epoch in every timed round. Reasons: the machine had more
    work than cores; a variant's rounds lie far apart; a variant has too few rounds.
    """
    reasons: list[dict] = []
    busiest = max((x for x in load if x is not None), default=None)
    if busiest is not None and cores and busiest > cores:
        reasons.append({"reason": "load", "load": round(busiest, 2), "cpu_count": cores})
    for variant, values in rounds.items():
        if len(values) < MIN_ROUNDS:
            reasons.append({"reason": "few_rounds", "variant": variant, "rounds": len(values)})
            continue
        wide = spread(values)
        if wide is not None and wide > SPREAD_LIMIT:
            reasons.append({"reason": "spread", "variant": variant, "spread": round(wide, 3)})
    return reasons


def unreliable_lines(reasons: list[dict]) -> list[str]:
    """`unreliable_reasons` in words, in the language in use: a warning first, then each reason."""
    from course.i18n import _

    if not reasons:
        return []
    lines = [_("⚠ The ranking below may not hold: run again on a quieter machine before drawing conclusions.")]
    wide = ", ".join(f"{r['variant']} {r['spread']:.0%}" for r in reasons if r["reason"] == "spread")
    few = ", ".join(f"{r['variant']} ({r['rounds']})" for r in reasons if r["reason"] == "few_rounds")
    for r in reasons:
        if r["reason"] == "load":
            lines.append(_("The machine was busy: load average {load:.1f} on {cores} CPU cores.").format(
                load=r["load"], cores=r["cpu_count"]))
    if wide:
        lines.append(_("Rounds far apart (slowest - fastest over half the median): {variants}.").format(
            variants=wide))
    if few:
        lines.append(_("Too few timed rounds for a median, so these are estimates: {variants}.").format(
            variants=few))
    return lines


def fmt_spread(values: list[float]) -> str:
    """A variant's spread as a percentage (`12%`), or `-` with fewer than two rounds."""
    wide = spread(values)
    return MISSING if wide is None else f"{wide:.0%}"


def fmt_speedup(value: float | None) -> str:
    """1,234×, 32.2×, 0.81×, 0.023×: two significant digits below 1, so a slow variant never reads 0.0×."""
    if value is None or not math.isfinite(value) or value <= 0:
        return MISSING
    if value >= 100:
        return f"{value:,.0f}×"
    if value >= 1:
        return f"{value:.1f}×"
    decimals = 1 - math.floor(math.log10(value))
    return f"{value:.{decimals}f}×"


def fmt_seconds(seconds: float | None) -> str:
    if seconds is None:
        return MISSING
    if seconds >= 120:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.1f} s"


def fmt_ms(ms: float | None) -> str:
    if ms is None:
        return MISSING
    return f"{ms:,.0f}" if ms >= 100 else f"{ms:.2f}" if ms < 10 else f"{ms:.1f}"


def extrapolation_legend(ran: int, epochs: int) -> str:
    from course.i18n import _

    return _("{mark} extrapolated from {ran} epochs to {epochs}").format(mark=EXTRAPOLATED, ran=ran, epochs=epochs)


def legend_lines(extrapolated: list[tuple[str, int]], epochs: int, *, app: bool = False) -> list[str]:
    """What the results columns mean, the same words in the CLI and the app.

    `extrapolated` lists (variant, epochs it ran) for each extrapolated result.
    """
    from course.i18n import _

    full = _("Full run s") if not app else _("Full run")
    compile_ = _("Compile s") if not app else _("Compile")
    lines = [
        _("×NNX eager, ×PyTorch: times faster than that baseline, the {basis}.").format(
            basis=_("ratio of steady-state ms per epoch (after the first, compiling step)")),
        _("{compile}: trace + compile of the first step (empty for eager variants, which compile nothing). "
          "ms/epoch: steady state, after the first step. {full}: init + first step + every epoch.").format(
            compile=compile_, full=full),
        _("The variants take turns, a few epochs each, round after round, so that load on the machine hits "
          "all of them: ms/epoch is the median of a variant's rounds, Spread is (slowest - fastest) / median."),
    ]
    for variant, ran in extrapolated:
        lines.append(_("{legend} ({variant}: its full run from the measured ms/epoch; its loss and accuracy "
                       "are after {ran} epochs).").format(legend=extrapolation_legend(ran, epochs),
                                                         variant=variant, ran=ran))
    return lines


# One plot character per variant, in the CLI's plot and the app's: the curves
# stay apart without colour (NO_COLOR, a dumb terminal, colour blindness).
PLOT_MARKERS = {
    "torch_eager": "o", "nnx_eager": "x", "nnx_jit": "+", "nnx_tree": "=",
    "nnx_split_merge": "%", "linen_jit": "#", "jax_scan": "@",
}
SPARE_MARKERS = "&$~^"
# Columns between two marks of one series when its marks are set on top of every curve.
MARK_SPACING = 3


def plot_marker(variant: str, index: int = 0) -> str:
    return PLOT_MARKERS.get(variant, SPARE_MARKERS[index % len(SPARE_MARKERS)])


def plot_legend(variants: list[str], width: int = 80) -> str:
    """`o torch_eager   + nnx_jit`, wrapped to `width`: the key printed beside the plot, never over the curves."""
    lines: list[str] = []
    for i, v in enumerate(variants):
        item = f"{plot_marker(v, i)} {v}"
        if lines and len(lines[-1]) + 3 + len(item) <= width:
            lines[-1] += "   " + item
        else:
            lines.append(item)
    return "\n".join(lines)


def mark_points(lengths: list[int], columns: int) -> list[list[int]]:
    """For each series (its number of points), the indices where its mark goes on top of every curve.

    Variants that train the same model on the same batches have the same losses, so a
    curve drawn later covers an earlier one completely. After the curves, each series'
    mark is drawn again at points of its own: the x axis is cut into slots a few columns
    wide, and slot k belongs to series k mod n, so no two series' marks share a column
    and every series shows. A series shorter than the axis (NNX eager's few epochs) also
    gets its last point.
    """
    n = len(lengths)
    longest = max(lengths, default=0)
    if not n or longest == 0:
        return [[] for _ in lengths]
    slots = max(n, min(longest, max(1, columns) // MARK_SPACING))
    out = []
    for i, length in enumerate(lengths):
        points = []
        for k in range(i, slots, n):
            index = int((k + 0.5) * longest / slots)
            if index < length:
                points.append(index)
        if length and (not points or points[-1] != length - 1) and length < longest:
            points.append(length - 1)
        out.append(sorted(set(points)))
    return out
