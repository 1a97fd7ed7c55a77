"""トレーニングの 1 エポック全体を、1 つの lax.scan に融合します。

PyTorch で書くと (Python のループ。各ステップは Python から起動されます):
    for xb_i, yb_i in zip(xb, yb):
        loss = loss_fn(model, xb_i, yb_i)
        optimizer.zero_grad(); loss.backward(); optimizer.step()
        losses.append(loss.item())

課題: 次を書きます

    scan_epoch(model, optimizer, xb, yb) -> losses

- `model`: NNX のモデル。`optimizer`: `nnx.Optimizer(model, tx, wrt=nnx.Param)`
- `xb`: float32 (n_batches, B, d)。`yb`: float32 (n_batches, B)。エポックの
  バッチを、すでに積み重ねたものです。
- 各 i について順に: `loss_fn(model, xb[i], yb[i])` とその勾配を計算し、
  `optimizer.update(model, grads)` を行います。n_batches 個の損失 (float32、
  形状 (n_batches,)) を返します。それぞれ自分の更新の前に取った値です。
- 終わったあと、`model` と `optimizer` は、1 ステップずつのループのあとと
  まったく同じトレーニング済みの状態を持ちます (インプレースで更新します。
  たとえば `nnx.update` を使います)。

バッチのループは `jax.lax.scan` (または `nnx.scan`) にする必要があります。
そうすれば、コンパイル済みプログラムがバッチ数とともに大きくなりません:
1 ステップを `step(carry, batch) -> (carry, loss)` として書き、carry は
`nnx.split` で得た (model, optimizer) の状態にして、ステップの中でマージし
直します。

チェックされること: いくつかのエポックの長さとバッチ サイズで、損失、
パラメータ、オプティマイザのステップ数を 1 ステップずつのループと比較します。
また、8 バッチでトレースしたプログラムが 2 バッチのものより大きくないこと。
"""

import jax
import optax
from flax import nnx


def loss_fn(model: nnx.Module, x: jax.Array, y: jax.Array) -> jax.Array:
    logits = model(x).squeeze(-1)
    return optax.sigmoid_binary_cross_entropy(logits, y).mean()


def scan_epoch(model: nnx.Module, optimizer: nnx.Optimizer, xb: jax.Array, yb: jax.Array) -> jax.Array:
    # TODO: graphdef, state = nnx.split((model, optimizer))。ステップ関数は
    # merge して勾配のステップを 1 回進め、(新しい状態, 損失) を返します。
    # それを (xb, yb) について jax.lax.scan し、元のものを nnx.update して、損失を返します。
    raise NotImplementedError("TODO: scan_epoch を jax.lax.scan で書いてください")
