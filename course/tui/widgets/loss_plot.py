"""Training-loss curves, one per variant, each drawn with its own character.

No plotext legend: it sits on top of the curves. The screen prints the key
(`course.lab.numbers.plot_legend`) under the plot instead, with the same
characters the CLI uses, so the curves tell apart without colour.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual_plotext import PlotextPlot

from course.i18n import _
from course.lab.numbers import plot_marker


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
        for i, (variant, losses) in enumerate(self._curves.items()):
            plt.plot(list(range(1, len(losses) + 1)), losses, marker=plot_marker(variant, i))
        self.refresh()
