"""vmap によるサンプルごとの損失と勾配。

PyTorch で書くと:
    from torch.func import functional_call, grad, vmap
    def example_loss(params, x, y):
        logit = functional_call(model, params, (x[None],))[0, 0]
        return F.binary_cross_entropy_with_logits(logit, y)
    grads = vmap(grad(example_loss), in_dims=(None, 0, 0))(params, x, y)

課題: 次を書きます

    per_example_grads(model, x, y) -> (losses, grads)

- `model`: バッチ (B, d) をロジット (B, 1) に写す任意の NNX モデル。たとえば
  タイタニック号の MLP 9 -> 64 -> 1。変更してはいけません。
- `x`: float32 配列 (B, d)。`y`: 0.0 / 1.0 のラベルの float32 配列 (B,)。
- `losses`: float32 配列 (B,)。`losses[i]` は `example_loss(model, x[i], y[i])`
- `grads`: モデルの `nnx.Param` に関する、各サンプルの損失の勾配。
  `nnx.state(model, nnx.Param)` と同じ構造の `nnx.State` (またはその入れ子の
  dict) で、すべてのリーフの先頭にサイズ B の軸が 1 つ加わります:
  `grads["l1"]["kernel"][i]` はサンプル i のものです。

結果は、サンプルを 1 つずつ回す Python のループと一致する必要がありますが、
そのループは書きません: `jax.vmap` (`nnx.split` のあと、パラメータの関数に
対して) か `nnx.vmap` を使います。モデル自体は変更してはいけません。

チェックされること: さまざまなサイズのランダムなモデルとバッチで、損失と
勾配のすべてのリーフを、サンプルを回すループと比較します。また、サンプルごと
の勾配の平均が、通常のバッチの勾配になることを確認します。
"""

import jax
import jax.numpy as jnp
import optax
from flax import nnx


def example_loss(model: nnx.Module, x: jax.Array, y: jax.Array) -> jax.Array:
    """サンプル 1 つだけに対する、ロジットからの 2 値交差エントロピー: x (d,), y () -> ()"""
    logit = model(x[None, :])[0, 0]
    return optax.sigmoid_binary_cross_entropy(logit, y)


def per_example_grads(model: nnx.Module, x: jax.Array, y: jax.Array):
    # TODO: `example_loss` の値と勾配を、サンプルについてだけ vmap します
    # (パラメータはすべてのサンプルで共通なので、その in_axes は None)。
    raise NotImplementedError("TODO: per_example_grads を jax.vmap か nnx.vmap で書いてください")
