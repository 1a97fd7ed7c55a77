"""Training-loss curves, one per variant, each drawn with its own character.

No plotext legend: it sits on top of the curves. The screen prints the key
(`course.lab.numbers.plot_legend`) under the plot instead, with the same
characters the CLI uses, so the curves tell apart without colour.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual_plotext import PlotextPlot

from course.i18n import _
from course.lab.numbers import mark_points, plot_marker


class LossPlot(PlotextPlot):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._curves: dict[str, list[float]] = {}

    def on_mount(self) -> None:
        self._draw()

    def language_changed(self) -> None:
        self._draw()

    def set_curves(self, curves: dict[str, list[float]]) -> None:
        """`curves` maps a variant name to its loss per epoch."""
        self._curves = {variant: list(losses) for variant, losses in curves.items() if losses}
        self._draw()

    def _draw(self) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        # plotext lays text out one column per character, so double-width text
        # (Japanese) goes on the widget's border, where Textual measures cells.
        title, xlabel = _("Training loss per epoch"), _("epoch")
        narrow = cell_len(title) == len(title) and cell_len(xlabel) == len(xlabel)
        plt.title(title if narrow else "")
        plt.xlabel(xlabel if narrow else "")
        # The title names the epoch axis already; the top border has room for nothing more.
        self.border_title = None if narrow else title
        self.set_class(not narrow, "-titled")
        curves = list(self._curves.items())
        for i, (variant, losses) in enumerate(curves):
            plt.plot(list(range(1, len(losses) + 1)), losses, marker=plot_marker(variant, i))
        # Coinciding curves hide each other: every series' mark again, on top (see mark_points).
        marks = mark_points([len(losses) for _variant, losses in curves], max(20, self.size.width - 12))
        for i, ((variant, losses), points) in enumerate(zip(curves, marks)):
            if points:
                plt.scatter([p + 1 for p in points], [losses[p] for p in points], marker=plot_marker(variant, i))
        self.refresh()
