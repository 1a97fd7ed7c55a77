"""演習: 端数のバッチも含め、エポックあたり 1 回だけコンパイルされるトレーニング ステップ。

891 行を 32 のバッチに分けると、満杯のバッチが 27 個と 27 行のバッチが 1 つ
になります。jit されたステップは入力の形状ごとに 1 回トレースとコンパイルを
行うので、短いバッチは 2 回目のコンパイルを招きます (PyTorch の eager な
ループは気にしませんが、`torch.compile` なら再コンパイルします)。最後の
バッチを満杯のサイズまでパディングし、パディングした行を損失からマスクで
除いて直しましょう: コンパイル済みプログラムは 1 つで、結果は端数のある
ループと同じです。関数を 4 つ書きます。

1. `masked_loss(model, x, y, mask) -> jax.Array`
   `x`: float32 `(batch, d_in)`。`y`、`mask`: float32 `(batch,)`。`mask` は
   本物の行で 1、パディングで 0。本物の行だけにわたる、ロジットに対する
   バイナリ交差エントロピーの平均: `sum(bce * mask) / sum(mask)`。マスクが
   すべて 1 なら、普通の平均です。

2. `train_step(model, optimizer, x, y, mask) -> jax.Array`。`@nnx.jit` で
   デコレートします (チェックは 1 つのバッチ形状について
   `train_step.lower(...)` で lower します): `masked_loss` の勾配を求め、
   `optimizer.update(model, grads)` を 1 回行い、(更新前の) 損失を返します。

3. `make_batches(x, y, batch_size) -> list[tuple[x, y, mask]]`
   `x`: `(n, d_in)`、`y`: `(n,)`、NumPy の float32。行を「順番どおりに」
   (シャッフルせずに) `ceil(n / batch_size)` 個のバッチに切り分けます。
   どのバッチも `batch_size` 行です: 短い最後のバッチはゼロの行 (`x` と
   `y`) でパディングし、各バッチに float32 の `mask` (本物の行は 1.0、
   パディングは 0.0) を付けます。

4. `train_epoch(model, optimizer, x, y, batch_size) -> list[float]`
   `make_batches(x, y, batch_size)` の各バッチで `train_step` を実行し、
   損失をバッチごとに 1 つ、Python の float のリストで返します。

モデルは `(batch, d_in)` をロジット `(batch, 1)` に写す任意の NNX モジュールで、
オプティマイザはチェックが作る `nnx.Optimizer` (Adam) です。

チェックの内容: サイズがバッチ サイズの倍数でないランダムなデータで
`make_batches` を確認します (どのバッチも同じ形状、行は順番どおり、ゼロで
パディング、正しいマスク)。1 つのバッチ形状で `train_step` を lower し、
コンパイル済みプログラムの入力を読みます。トレースされるたびに記録するモデルで
`train_epoch` を 4 エポック実行し、1 エポック目にトレースされた入力形状が 1 つ
だけで、それ以降は新しいトレースもコンパイルもないことを求めます (2〜4 エポック
目にあなたのプロセスが使う CPU 時間を、プロセスの外から測ります。コンパイルし
直したステップは、使い回したステップよりはるかに時間がかかります)。損失と最終的な
パラメータを、端数のある、コンパイルしない参照ループと比較します (パディング +
マスクは何も変えてはいけません)。最後に、ランダムなマスクで `masked_loss` を
参照実装と比較します。
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx


def masked_loss(model: nnx.Module, x, y, mask) -> jax.Array:
    # TODO: 行ごとの 2 値交差エントロピーに mask で重みを付け、sum(mask) で割ります。
    raise NotImplementedError("TODO: masked_loss を書いてください")


def train_step(model: nnx.Module, optimizer: nnx.Optimizer, x, y, mask) -> jax.Array:
    # TODO: @nnx.jit で修飾し、masked_loss の value_and_grad を求めて optimizer.update を呼びます。
    raise NotImplementedError("TODO: train_step を書いてください")


def make_batches(x, y, batch_size: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    # TODO: バッチを順に作ります。短い最後のバッチはゼロの行でパディングし、各バッチのマスクも作ります。
    raise NotImplementedError("TODO: make_batches を書いてください")


def train_epoch(model: nnx.Module, optimizer: nnx.Optimizer, x, y, batch_size: int) -> list[float]:
    # TODO: make_batches のすべてのバッチで train_step を呼び、損失を Python の float で返します。
    raise NotImplementedError("TODO: train_epoch を書いてください")
