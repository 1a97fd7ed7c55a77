"""演習: モデルのパラメータを、その状態から数え、一覧にします。

PyTorch では:

    sum(p.numel() for p in model.parameters())
    {name: tuple(p.shape) for name, p in model.named_parameters()}

NNX 版を書きます。どちらも任意の `nnx.Module` を受け取り (チェックでは
いくつか作ります: BatchNorm と Dropout を持つ MLP、`nnx.Sequential`、畳み込み、
埋め込み、バイアスのない層)、トレーニング対象のパラメータ、つまり
`nnx.Param` 変数だけを見ます。BatchNorm の移動統計量 (`nnx.BatchStat`) や
Dropout の乱数の状態も状態ですが、パラメータではないので除きます。

    count_params(model: nnx.Module) -> int
        すべての nnx.Param 変数に含まれるスカラーの総数 (Python の int)。

    param_shapes(model: nnx.Module) -> dict[str, tuple[int, ...]]
        nnx.Param ごとに 1 項目。キーはモデルからのパスをドットでつないだもの
        ("linear1.kernel"、"layers.0.bias": 整数のパス要素は数字になります)、
        値はその形状を int のタプルにしたもの。

チェックの内容: チェック時に決めたサイズのモデルを作り、結果を参照実装の結果と
比較します。
"""

from __future__ import annotations

from flax import nnx


def count_params(model: nnx.Module) -> int:
    # TODO: モデルの nnx.Param の状態を取り出し、その配列のサイズを合計します。
    raise NotImplementedError("TODO: count_params を書いてください")


def param_shapes(model: nnx.Module) -> dict[str, tuple[int, ...]]:
    # TODO: nnx.Param の状態を (path, variable) の組に平坦化し、各パスを "." でつなぎます。
    raise NotImplementedError("TODO: param_shapes を書いてください")
