"""小さな PyTorch の CNN を Flax NNX へ: レイアウト、flatten の順序、BatchNorm。

下の `TorchCNN` は PyTorch のモデルです (変更しないでください)。`in_channels`
チャネルで `size` x `size` ピクセル (size は 4 の倍数) の画像に対して:

    conv1: Conv2d(in_channels, 8, 3, padding=1) -> bn1: BatchNorm2d(8) -> ReLU -> MaxPool2d(2)
    conv2: Conv2d(8, 16, 3, stride=2, padding=1) -> bn2: BatchNorm2d(16) -> ReLU
    flatten -> fc: Linear(16 * (size // 4) ** 2, n_classes)

課題: 次を書きます

    class CNN(nnx.Module)          CNN(in_channels, n_classes, size, *, rngs=...)
    torch_to_nnx(state_dict, size) -> dict
    nnx_to_torch(params, size) -> dict
    predict(model, images) -> logits

- `CNN` は Flax NNX で書いた同じネットワークで、属性 conv1、bn1、conv2、
  bn2、fc (nnx.Conv、nnx.BatchNorm、nnx.Linear。プーリングは nnx.max_pool)
  を持ちます。`model(x)` は NHWC の画像、形状 (N, size, size, in_channels) の
  x を受け取り、(N, n_classes) のロジットを返します。最後の特徴マップは
  そのまま x.reshape(N, -1) で、(H, W, C) の順に flatten します。パディング
  は、stride 2 のものも含めて両方の conv で PyTorch の `padding=1` を再現する
  必要があります。BatchNorm 層は PyTorch のデフォルトどおりに振る舞います:
  eps 1e-5、移動統計量は PyTorch の momentum 0.1 で更新します (Flax の流儀で
  表します)。どちらの統計量を使うかはモデルのモード (model.train() /
  model.eval()) に従います。
- `torch_to_nnx(state_dict, size)` は、テンソルが NumPy 配列で与えられた
  `TorchCNN.state_dict()` (名前は PyTorch の書き方: 'conv1.weight'、
  'bn1.running_mean'、'bn1.num_batches_tracked'、...) を、
  `nnx.to_pure_dict(nnx.state(CNN(...)))` のレイアウトの入れ子の dict に
  変換します:
      {'conv1': {'kernel', 'bias'}, 'bn1': {'scale', 'bias', 'mean', 'var'},
       'conv2': {...}, 'bn2': {...}, 'fc': {'kernel', 'bias'}}
  配列は float32 の JAX 配列で、ちょうどこれらの項目だけを持ち、ほかは持ち
  ません。畳み込みのカーネルは PyTorch の (out, in, kH, kW) から Flax の
  (kH, kW, in, out) にします。最初の Linear の行は、PyTorch の (C, H, W)
  ではなく、`CNN` の NHWC での flatten の順に従う必要があります。
- `nnx_to_torch(params, size)` は逆向きの変換で、JAX でトレーニングした
  モデルを書き出すためのものです: `torch_to_nnx` の結果と同じレイアウトの
  入れ子の dict (NumPy でも JAX の配列でも可) から、2 つの
  `num_batches_tracked` を除いた `TorchCNN(...).state_dict()` のキーを
  ちょうど持つ、float32 の NumPy 配列の dict を PyTorch のレイアウトで
  作ります (`strict=False` で読み込みます)。レッスンは一方向にしか変換
  しません: 各ステップを逆にたどります。
- `predict(model, images)` は、PyTorch の DataLoader が渡す形の画像、つまり
  形状 (N, in_channels, size, size) の NCHW float32 を受け取り、評価モード
  (移動統計量を使う) での `model` のロジットを、形状 (N, n_classes) の
  float32 で返します。呼び出し側のモデルのモードは元のまま残す必要があり
  (レッスン 7 の `nnx.view`)、画像の JAX 関数である必要があります: チェックは
  `jax.jit(lambda images: predict(model, images))` を lower します。

チェックされること (PyTorch のモデルはチェックのたびに新しいランダムな重みと
BatchNorm の統計量を受け取ります。形状は小さな集合から選ばれます):
- `torch_to_nnx` が返す配列と、state_dict の正確な変換との比較 (float32、
  rtol 1e-4、atol 1e-5)。入れ子の構造全体も比べます。また、それを使って
  ネットワークが計算するロジットと、評価モードの `TorchCNN` のロジットとの
  比較。`nnx_to_torch` と正確な逆変換との比較。
- 正しく変換した重みを読み込んだ自分の `CNN` を JAX のプログラムとして:
  その順伝播は、あなたのプロセスの中で形状だけを使って jax.jit で lower
  され、チェックがあとから引いた画像で実行します。`predict` と `TorchCNN`
  の評価モードのロジットとの比較。`predict` の前と後での、トレーニング
  モードの順伝播と、トレーニング モードの `TorchCNN` との比較。
- 自分の `CNN` をトレーニング モードで 1 回呼んだあとの評価モードのロジット
  と、更新で得られるはずの移動統計量を持つ `TorchCNN` のロジットとの比較:
  移動平均は PyTorch のもの、移動分散は 0.9 * old + 0.1 * (バッチの
  標本分散) で、これが nnx.BatchNorm の計算するものです。PyTorch の
  running_var は不偏のバッチ分散 (n / (n - 1) 倍大きい。n = N * H * W) を
  使うので少し異なりますが、その違いは想定どおりです。
"""

from __future__ import annotations

import jax
import numpy as np
import torch
from flax import nnx


class TorchCNN(torch.nn.Module):
    """移植する PyTorch のモデル。変更しないでください。"""

    def __init__(self, in_channels: int, n_classes: int, size: int):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(in_channels, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.bn2 = torch.nn.BatchNorm2d(16)
        self.fc = torch.nn.Linear(16 * (size // 4) ** 2, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.nn.functional.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        x = torch.relu(self.bn2(self.conv2(x)))
        return self.fc(x.flatten(1))


class CNN(nnx.Module):
    def __init__(self, in_channels: int, n_classes: int, size: int, *, rngs: nnx.Rngs):
        # TODO: conv1、bn1、conv2、bn2、fc。ストライド 2 の畳み込みのパディングと、
        # BatchNorm の momentum (Flax では数え方が逆です) に注意してください。
        raise NotImplementedError("TODO: CNN.__init__ を書いてください")

    def __call__(self, x: jax.Array) -> jax.Array:
        # TODO: x は NHWC です。nnx.max_pool でプーリングし、x.reshape(x.shape[0], -1) で平坦化します。
        raise NotImplementedError("TODO: CNN.__call__ を書いてください")


def torch_to_nnx(state_dict: dict[str, np.ndarray], size: int) -> dict:
    # TODO: カーネルは (out, in, kH, kW) -> (kH, kW, in, out)、weight -> scale、
    # running_mean/var -> mean/var。fc は転置し、NHWC の平坦化に合わせて行を並べ替えます。
    raise NotImplementedError("TODO: torch_to_nnx を書いてください")


def nnx_to_torch(params: dict, size: int) -> dict[str, np.ndarray]:
    # TODO: torch_to_nnx の逆を 1 段ずつ。カーネルは (out, in, kH, kW) に、
    # scale/mean/var は PyTorch の名前に、fc のカーネルは (C, H, W) の順の (out, in) に戻します。
    raise NotImplementedError("TODO: nnx_to_torch を書いてください")


def predict(model: CNN, images: np.ndarray) -> jax.Array:
    # TODO: NCHW -> NHWC のあと、呼び出し側のモデルを変えずに、評価モードでモデルを実行します。
    raise NotImplementedError("TODO: predict を書いてください")
