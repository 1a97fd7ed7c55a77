"""データ並列のトレーニング ステップ: メッシュ上で、1 デバイスと同じ結果を。

PyTorch で書くと (DistributedDataParallel):
    model = DDP(model.to(rank), device_ids=[rank])   # 重みは複製される
    sampler = DistributedSampler(dataset)            # 各ランクが自分の担当分を読む
    loss = loss_fn(model(x_slice), y_slice)
    loss.backward()                                  # 勾配は all-reduce される
    optimizer.step()

JAX にはランクがありません: 1 つのプログラムがバッチ全体を見て、バッチは
そのシャーディングによってデバイスに分割され、all-reduce はコンパイラが
挿入します。

課題: 次を書きます

    replicate(model, optimizer, mesh) -> None
        model と optimizer のすべての配列を `mesh` のすべてのデバイスに、
        完全に複製して (PartitionSpec()) 置き、インプレースで更新します。
    data_parallel_step(model, optimizer, x, y, mesh) -> loss
        x (B, d) と y (B,) を軸 0 に沿ってメッシュの軸 "data" で分割し、
        `with jax.set_mesh(mesh):` の中で与えられた `train_step` を実行
        します。損失 (スカラーの配列) を返します。

`train_step` と `loss_fn` は与えられています。変更しないでください。`mesh` は
すべてのデバイスにわたる、軸名 "data" の 1 次元メッシュです。B はそのサイズで
割り切れます。

チェックは、CPU デバイスを 4 つに強制してコードを実行します
(XLA_FLAGS=--xla_force_host_platform_device_count=4)。

チェックされること: `replicate` のあと、すべてのパラメータとオプティマイザの
配列が 4 つのデバイスすべてに複製されていること。ステップが、行で 4 つの
デバイスに分割したバッチでモデルを実行すること (XLA がコンパイルしたとおりに)。
データ並列のステップを何回か行ったあとの損失、パラメータ、ステップ数が、同じ
開始点からの単一デバイスのトレーニングと等しいこと。
"""

import jax
import optax
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def loss_fn(model: nnx.Module, x: jax.Array, y: jax.Array) -> jax.Array:
    logits = model(x).squeeze(-1)
    return optax.sigmoid_binary_cross_entropy(logits, y).mean()


@nnx.jit
def train_step(model: nnx.Module, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss


def replicate(model: nnx.Module, optimizer: nnx.Optimizer, mesh: Mesh) -> None:
    # TODO: nnx.state((model, optimizer)) -> 複製する NamedSharding での
    # jax.device_put -> nnx.update
    raise NotImplementedError("TODO: replicate を書いてください")


def data_parallel_step(model, optimizer, x, y, mesh: Mesh) -> jax.Array:
    # TODO: x と y を "data" でシャーディングし、jax.set_mesh(mesh) の中で train_step を呼びます。
    raise NotImplementedError("TODO: data_parallel_step を書いてください")
