"""バッチを複数のデバイスに分割し、その上で計算します。

PyTorch で書くと (DataParallel 風の scatter と gather):
    chunks = x.chunk(n_devices)                       # GPU ごとに 1 つ
    outs = [model_on[i](c.to(f"cuda:{i}")) for i, c in enumerate(chunks)]
    out = torch.cat([o.cpu() for o in outs])

課題: 次を書きます

    data_mesh() -> Mesh
        jax.devices() の「すべて」にわたる、軸名 "data" の 1 次元メッシュ。
    shard_batch(x, mesh) -> jax.Array
        x (NumPy 配列 (B, ...)。B はデバイス数で割り切れる) をメッシュに
        置き、軸 0 は "data" に沿って均等に分割し、他の軸はそのままにします:
        デバイス k は行 k*B/n .. (k+1)*B/n を持ちます。
    forward_sharded(model, x, mesh) -> np.ndarray
        x をシャーディングし、`with jax.set_mesh(mesh):` の中で nnx.jit を
        使って `model` を実行し、(B, ...) の結果全体を、ホスト上の 1 つの
        NumPy 配列として返します。

チェックは、CPU デバイスを 4 つに強制してコードを実行します
(XLA_FLAGS=--xla_force_host_platform_device_count=4)。

チェックされること: メッシュのサイズと軸名。すべてのシャードの形状と
デバイス。値が変わっていないこと。forward_sharded のモデルが本当に
シャーディングしたバッチで実行されること (XLA がコンパイルしたとおりに、
各デバイスが自分の行を持つ)。さまざまなバッチ サイズと特徴量の数で、
シャーディングなしで実行した同じモデルとの出力の比較。
"""

import jax
import numpy as np
from flax import nnx
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def data_mesh() -> Mesh:
    # TODO: すべてのデバイスにわたる jax.make_mesh。軸の名前は "data" です。
    raise NotImplementedError("TODO: data_mesh を書いてください")


def shard_batch(x: np.ndarray, mesh: Mesh) -> jax.Array:
    # TODO: 軸 0 を "data" で分割する NamedSharding で jax.device_put します。
    raise NotImplementedError("TODO: shard_batch を書いてください")


def forward_sharded(model: nnx.Module, x: np.ndarray, mesh: Mesh) -> np.ndarray:
    # TODO: シャーディングし、jax.set_mesh(mesh) の中でモデルを実行して、結果を手元に戻します。
    raise NotImplementedError("TODO: forward_sharded を書いてください")
