"""演習: トレーニング済みの PyTorch モデルの重みを NNX のモデルに移植します。

下の `TorchMLP` と `MLP` は、PyTorch と Flax NNX で書いた同じネットワーク
(デフォルトは 9 -> 64 -> 1、ReLU、ロジット 1 つ) です。これらは与えられた
ものなので、変更しないでください。

`model.load_state_dict(torch_model.state_dict())` の NNX 側にあたる
`port_weights(torch_model, model)` を書きます:

    port_weights(torch_model: TorchMLP, model: MLP) -> None

- `fc1` を `linear1` に、`fc2` を `linear2` に、重みとバイアスをインプレースで
  コピーします (`load_state_dict` と同様に、何も返しません)。
- `torch.nn.Linear.weight` の形状は `(out, in)` です (`x @ W.T + b` を計算)。
  `nnx.Linear.kernel` の形状は `(in, out)` です (`x @ K + b` を計算)。
- パラメータは float32 の JAX 配列を持つ `nnx.Param` のままである必要が
  あります。そこに書き込む (`param[...] = value`) か、新しい `nnx.Param` で
  置き換えます。裸の配列で置き換えてはいけません (裸の配列はもうパラメータ
  ではないので、オプティマイザから見えません)。

そのあと、どんな入力でも `model(x)` が `torch_model(x)` と一致する必要があり
ます。

チェックの内容: ランダムな重み (サイズとシードはチェック時に決定) の
`TorchMLP` と、別の初期化の `MLP` を作り、`port_weights` を呼びます。そして
ランダムな入力での NNX の出力を PyTorch の出力と、移植した kernel とバイアスを
PyTorch の重みと比較します。
"""

from __future__ import annotations

import jax
import torch
from flax import nnx


class TorchMLP(torch.nn.Module):
    def __init__(self, in_features: int = 9, hidden: int = 64, out_features: int = 1):
        super().__init__()
        self.fc1 = torch.nn.Linear(in_features, hidden)
        self.fc2 = torch.nn.Linear(hidden, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class MLP(nnx.Module):
    def __init__(self, in_features: int = 9, hidden: int = 64, out_features: int = 1, *, rngs: nnx.Rngs):
        self.linear1 = nnx.Linear(in_features, hidden, rngs=rngs)
        self.linear2 = nnx.Linear(hidden, out_features, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.linear2(nnx.relu(self.linear1(x)))


def port_weights(torch_model: TorchMLP, model: MLP) -> None:
    # TODO: fc1 -> linear1、fc2 -> linear2 とコピーします (kernel は weight の転置、bias はそのまま)。
    raise NotImplementedError("TODO: port_weights を書いてください")
