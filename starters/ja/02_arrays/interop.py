"""dtype や形状を失わずに、配列を PyTorch、NumPy、JAX の間で移します。

3 つの変換を書きます。どれも形状、値、dtype (float32、float16、bfloat16、
int32、uint8、bool) を保つ必要があります (`bfloat16` には NumPy ネイティブの
dtype がないので、`.numpy()` を経由する方法はこの dtype で失敗します)。

1. `torch_to_jax(t: torch.Tensor) -> jax.Array`
   `t` は勾配が必要な (requires grad の) テンソル (モデルの重みなど) かも
   しれず、非連続 (たとえば転置 `w.T`) かもしれません。
                                     PyTorch analogue: `t.detach().numpy()`

2. `jax_to_torch(x: jax.Array) -> torch.Tensor`
   同じ dtype の `torch.Tensor` (`jnp.bfloat16` -> `torch.bfloat16`, ...)。
                                     PyTorch analogue: `torch.from_numpy(a)`

3. `jax_to_numpy(x: jax.Array) -> numpy.ndarray`
   「書き込み可能な」NumPy 配列 (呼び出し側がインプレースで変更することがある。
   たとえばデータ拡張のため)。その変更が `x` に届いてはいけません。
                                     PyTorch analogue: `t.numpy().copy()`

チェックされること: 上記のすべての dtype、1 次元・2 次元・転置の形状のランダム
な配列 (`requires_grad=True` のテンソルを含む) に対する各変換の、結果の型、
dtype、形状、値。また `jax_to_numpy` については、結果に書き込んでも JAX の
配列が変わらないこと。
"""

import jax
import jax.numpy as jnp
import numpy as np
import torch


def torch_to_jax(t: torch.Tensor) -> jax.Array:
    # TODO: dtype (bfloat16 も) と形状を保ちます。t は requires_grad=True かもしれません。
    raise NotImplementedError("TODO: torch のテンソルを jax.Array に変換してください")


def jax_to_torch(x: jax.Array) -> torch.Tensor:
    # TODO: dtype、形状、値が同じ torch.Tensor。
    raise NotImplementedError("TODO: jax.Array を torch のテンソルに変換してください")


def jax_to_numpy(x: jax.Array) -> np.ndarray:
    # TODO: 書き込み可能な NumPy 配列。np.asarray(x) だけでは読み取り専用のビューです。
    raise NotImplementedError("TODO: jax.Array を書き込み可能な NumPy 配列に変換してください")
