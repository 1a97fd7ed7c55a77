"""同一の層の積み重ね: nnx.vmap で作り、nnx.scan で適用します。

PyTorch で書くと:
    class StackedMLP(nn.Module):
        def __init__(self, n_layers, width):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(n_layers))
        def forward(self, x):
            for layer in self.layers:
                x = torch.tanh(layer(x))
            return x

課題: `StackedMLP(n_layers, width, *, rngs)` を完成させます。

- `self.layers` は、パラメータが新しい先頭の軸に沿って積み重なった「1 つの」
  `nnx.Linear(width, width)` である必要があります: `self.layers.kernel` の
  形状は (n_layers, width, width)、`self.layers.bias` は (n_layers, width)。
  層が最初から互いに異なるように、n_layers 個の異なるキーに対して
  `nnx.vmap` をかけて作ります
  (たとえば keys = jax.random.split(rngs.params(), n_layers))。
- 形状 (B, width) の x に対する `__call__(x)` は、層を順に適用します。
  i = 0 .. n_layers-1 について `x = tanh(x @ kernel[i] + bias[i])`。積み
  重ねた層に対して `nnx.scan` (または `jax.lax.scan`) を使い、Python の
  ループは使いません。そうすれば、コンパイル時間が深さとともに増えません。

チェックされること: パラメータの形状。層が互いに異なること。学習者のモデル
自身の積み重ねたパラメータを回すループとの出力の比較 (さまざまな深さ、幅、
バッチ)。6 層でトレースしたプログラムが 2 層のものより大きくないこと。
"""

import jax
from flax import nnx


class StackedMLP(nnx.Module):
    def __init__(self, n_layers: int, width: int, *, rngs: nnx.Rngs):
        # TODO: n_layers 個のキーについて nnx.vmap で作った、積み重ねた nnx.Linear 1 つ。
        # この仮の実装は、積み重ねていない 1 つの層です。
        self.layers = nnx.Linear(width, width, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        # TODO: 積み重ねた層について、活性化値をキャリーにして nnx.scan します。
        raise NotImplementedError("TODO: 積み重ねた層を nnx.scan で適用してください")
