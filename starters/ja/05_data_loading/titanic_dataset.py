"""演習: PyTorch の DataLoader を通して、タイタニック号のデータを JAX に渡します。

JAX には独自のデータローダがありません。よく使われる方法は (このコースもこれに
従います)、シャッフルとバッチ化には PyTorch の `Dataset`/`DataLoader` をその
まま使い、デフォルトの `collate_fn` (`torch.Tensor` を作る) を、NumPy 配列を
作るものに差し替えることです。NumPy 配列は、どの JAX の関数も受け付ける
形式です。

3 つのものを書きます。

1. `TitanicDataset(features, labels)`: `torch.utils.data.Dataset` です。
   - `features`: 形状 `(n, n_features)` の配列ライク。`labels`: 0/1 を持つ
     形状 `(n,)` の配列ライク。どちらも NumPy の `float32` 配列として保持
     します (`__init__` で変換します。入力は float64 や int かもしれません)。
   - `len(ds)` は `n`。
   - `ds[i]` は、形状 `(n_features,)` と `(1,)` の NumPy `float32` 配列の
     タプル `(x_i, y_i)` を返します (ラベルは要素 1 つのベクトルにします。
     こうするとラベルのバッチがモデルの出力の形状 `(batch, 1)` になります)。
   PyTorch で書くと: 同じクラスで、テンソルを返すもの。

2. `numpy_collate(batch)`: `collate_fn` です。`batch` は `ds[i]` のタプルの
   リストです。形状 `(len(batch), n_features)` と `(len(batch), 1)` の NumPy
   `float32` 配列のタプル `(x, y)` を、与えられた順の行で返します。
   PyTorch で書くと: テンソルを返す `torch.utils.data.default_collate`。

3. `numpy_batches(features, labels, batch_size, seed)`: PyTorch を使わない
   バッチ化です。`(x, y)` のバッチ (dtype と形状は `numpy_collate` と同じ) の
   リストを返します。すべての行を、`np.random.default_rng(seed)` でシャッフル
   した順にちょうど 1 回ずつ訪れます。最後を除くすべてのバッチは `batch_size`
   行で、最後のバッチは残りを持ちます (`drop_last=False` と同様)。同じシード
   なら同じ順序になる必要があります。

チェックの内容: さまざまなサイズのランダムなデータで
`DataLoader(TitanicDataset(...), batch_size=...,
shuffle=True, generator=torch.Generator().manual_seed(seed),
collate_fn=numpy_collate)` を作り、そのバッチを参照実装のもの (型、形状、
dtype、値) と比較します。`numpy_batches` を呼び、シード付きで、漏れがなく、
x と y がそろったシャッフルであり、入力の配列と NumPy のグローバルな乱数の
状態を元のままにすることを確認します。
"""

from __future__ import annotations

import numpy as np
from torch.utils.data import Dataset


class TitanicDataset(Dataset):
    def __init__(self, features, labels):
        # TODO: features と labels を float32 の NumPy 配列として保持します。
        raise NotImplementedError("TODO: TitanicDataset.__init__ を書いてください")

    def __len__(self) -> int:
        # TODO: 乗客の数。
        raise NotImplementedError("TODO: TitanicDataset.__len__ を書いてください")

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        # TODO: 1 人の乗客を (features (n_features,), label (1,)) として返します。どちらも float32 です。
        raise NotImplementedError("TODO: TitanicDataset.__getitem__ を書いてください")


def numpy_collate(batch: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    # TODO: サンプルを積み重ねて、NumPy 配列 (batch, n_features) と (batch, 1) にします。
    raise NotImplementedError("TODO: numpy_collate を書いてください")


def numpy_batches(features, labels, batch_size: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    # TODO: 行のインデックスを np.random.default_rng(seed) でシャッフルし、バッチに切り分けます。
    raise NotImplementedError("TODO: numpy_batches を書いてください")
