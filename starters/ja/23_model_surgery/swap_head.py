"""演習: 隠れ層の活性化値を jit 内で読み出し、ヘッドを差し替えて、ヘッドだけをファインチューニングする。

PyTorch で書くと:
    feats = {}
    model.layer2.register_forward_hook(lambda m, i, out: feats.update(features=out.relu()))
    logits = model(x)                                # feats["features"] is filled in
    model.head = nn.Linear(h, n_classes)             # a new task
    opt = torch.optim.Adam(model.head.parameters(), lr=lr)

1. `Net.__call__` の中で、layer2 の ReLU 後の活性化値を、"features" という名前の
   `nnx.Intermediate` として sow します。層は変えないでください。

2. `features(model, x) -> (logits, activations)`: `@nnx.jit` でデコレートし、
   モデルを `nnx.capture(..., nnx.Intermediate)` の中で実行して、そのロジットと
   sow された活性化値 (タプルではなく `(batch, h)` の配列) を返します。

3. `swap_head(model, n_classes, lr, *, rngs) -> nnx.Optimizer`: `model.head` を
   新しい `nnx.Linear(h, n_classes, rngs=rngs)` に差し替え、新しいヘッドの
   パラメータだけを対象にした `optax.adam(lr)` の `nnx.Optimizer` を返します。

4. `train_step(model, optimizer, x, y) -> loss`: `@nnx.jit` でデコレートし、
   ロジットと整数ラベル `y` のソフトマックス交差エントロピーの平均を計算し、
   ヘッドだけの勾配で `optimizer.update(model, grads)` を 1 回行って、(更新前の)
   損失を返します。layer1 と layer2 は変わってはいけません。
   ここでもモデルは `nnx.capture` の中で呼んでください。ただの `model(x)` は
   sow した値をモデルに残すので、`nnx.jit` が引き継ぐ状態が呼ぶたびに増え、
   ステップは呼ぶたびにコンパイルし直されます。

チェックの内容: あなたの `features`、sow した値をモデルから読み出して返す
モデルのただの呼び出し、(あなたの `swap_head` の後の) `train_step`、差し替え後の
モデルの順伝播を、それぞれパラメータとオプティマイザの状態を入力として lower
します。次に、それらのプログラムをこちら側で、こちらで引いたパラメータ、Adam の
状態、入力に対して実行し、NumPy と比べます。比べるのは layer2 の活性化値、
ロジット、ヘッドの数ステップ分の Adam の更新、そしてまったく変わらない本体です。
ステップのプログラムは、受け取った状態と同じ構造の状態を返さなければなりません。
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class Net(nnx.Module):
    def __init__(self, d: int, h: int, n_classes: int, *, rngs: nnx.Rngs):
        self.layer1 = nnx.Linear(d, h, rngs=rngs)
        self.layer2 = nnx.Linear(h, h, rngs=rngs)
        self.head = nnx.Linear(h, n_classes, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        x = nnx.relu(self.layer1(x))
        x = nnx.relu(self.layer2(x))
        # TODO: x を "features" という名前の nnx.Intermediate として sow します。
        return self.head(x)


def features(model: Net, x: jax.Array) -> tuple[jax.Array, jax.Array]:
    # TODO: @nnx.jit でデコレートし、モデルの Intermediate を nnx.capture で取り出して、(logits, activations) を返します。
    raise NotImplementedError("TODO: features を書いてください")


def swap_head(model: Net, n_classes: int, lr: float, *, rngs: nnx.Rngs) -> nnx.Optimizer:
    # TODO: 新しい model.head を作り、その後でヘッドのパラメータだけを対象にした Adam オプティマイザを作ります。
    raise NotImplementedError("TODO: swap_head を書いてください")


def train_step(model: Net, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    # TODO: @nnx.jit でデコレートし、ヘッドだけの勾配を求めて optimizer.update を行い、損失を返します。
    raise NotImplementedError("TODO: train_step を書いてください")
