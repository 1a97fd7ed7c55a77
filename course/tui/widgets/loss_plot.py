"""Training-loss curves, one line per variant."""

from __future__ import annotations

from textual_plotext import PlotextPlot


class LossPlot(PlotextPlot):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._curves: dict[str, list[float]] = {}

    def on_mount(self) -> None:
        self._draw()

    def set_curves(self, curves: dict[str, list[float]]) -> None:
        self._curves = {label: list(losses) for label, losses in curves.items() if losses}
        self._draw()

    def _draw(self) -> None:
        plt = self.plt
        plt.clear_data()
        plt.clear_figure()
        plt.title("Training loss per epoch")
        plt.xlabel("epoch")
        for label, losses in self._curves.items():
            plt.plot(list(range(1, len(losses) + 1)), losses, label=label, marker="braille")
        self.refresh()
