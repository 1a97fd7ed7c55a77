"""The Titanic passenger list as NumPy arrays: the one data pipeline of the course.

Two file formats are accepted and normalised to one schema (lower-case column
names, typed values, missing values as NaN):

- *titanic3* (the 1309-passenger list vendored in `course/data/titanic3.csv`,
  missing values written `?`), the default;
- Kaggle's `train.csv` (891 passengers, capitalised column names, missing values
  left empty).

`load_titanic` turns a file into a seeded random train/test split of nine
standardised float32 features and a 0/1 label. Fill values (medians, the most
common port) and the standardisation are fitted on the training part only, so no
statistic of a test passenger leaks into training.

No torch or jax import here: the lab, the lessons and the checks all import this
module, and it must stay cheap. The PyTorch `Dataset`/`DataLoader` path of the
article lives in `course.lab.torch_data`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from course.i18n import _
from course.paths import DATA_DIR

DEFAULT_PATH = DATA_DIR / "titanic3.csv"

FEATURES = ("pclass", "sex", "age", "sibsp", "parch", "fare", "embarked_C", "embarked_Q", "embarked_S")
PORTS = ("C", "Q", "S")

# Columns every accepted file must have (after lower-casing the header).
REQUIRED = ("pclass", "survived", "sex", "age", "sibsp", "parch", "fare", "embarked")
# Kept when present, so that lessons can show passengers by name.
OPTIONAL = ("name", "ticket", "cabin")
# Only these may be missing: they are filled from the training part.
FILLABLE = ("age", "fare", "embarked")
MAX_SHOWN = 5


class TitanicDataError(ValueError):
    """The passenger file cannot be used; the message says why and where."""


def read_passengers(path: str | Path | None = None) -> pd.DataFrame:
    """Read a titanic3 or Kaggle `train.csv` file into one normalised DataFrame.

    Columns: pclass (int 1-3), survived (int 0/1), sex ("male"/"female"), age,
    sibsp, parch, fare (float, NaN when missing), embarked ("C"/"Q"/"S" or NaN),
    plus name/ticket/cabin when the file has them. Raises `TitanicDataError`
    for a missing or unreadable file, missing columns, bad values or no rows.
    """
    path = Path(DEFAULT_PATH if path is None else path)
    raw = _read_csv(path)
    raw.columns = [str(c).strip().lower() for c in raw.columns]
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        hint = ""
        if missing == ["survived"]:
            hint = " " + _("(Kaggle's test.csv has no labels: use train.csv)")
        raise TitanicDataError(_(
            "{path}: missing column(s) {missing}{hint}. "
            "Expected the titanic3 list or Kaggle's train.csv with columns {required}."
        ).format(path=path, missing=", ".join(missing), hint=hint, required=", ".join(REQUIRED)))
    if len(raw) == 0:
        raise TitanicDataError(_("{path}: the file has a header but no passenger rows.").format(path=path))

    out = pd.DataFrame(index=pd.RangeIndex(len(raw)))
    out["pclass"] = _integers(raw, "pclass", path, allowed={1, 2, 3})
    out["survived"] = _integers(raw, "survived", path, allowed={0, 1})
    out["sex"] = _categories(raw, "sex", path, allowed=("male", "female"), fold=str.lower)
    out["age"] = _numbers(raw, "age", path)
    out["sibsp"] = _integers(raw, "sibsp", path)
    out["parch"] = _integers(raw, "parch", path)
    out["fare"] = _numbers(raw, "fare", path)
    out["embarked"] = _categories(raw, "embarked", path, allowed=PORTS, fold=str.upper)
    for col in OPTIONAL:
        if col in raw.columns:
            out[col] = raw[col]
    return out


@dataclass
class TitanicSplit:
    """A train/test split ready for a model: `x_*` is (n, 9) float32, `y_*` is (n,) float32 0/1."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    feature_names: tuple[str, ...] = FEATURES
    # Fitted on the training part only: the values that replaced missing ones
    # and the per-feature mean/std used to standardise.
    fill: dict[str, float | str] = field(default_factory=dict)
    mean: np.ndarray = field(default_factory=lambda: np.zeros(len(FEATURES), np.float32))
    std: np.ndarray = field(default_factory=lambda: np.ones(len(FEATURES), np.float32))
    source: str = ""
    seed: int = 0
    # Row positions (0-based, in file order) of the passengers in each part.
    train_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    test_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    @property
    def n_train(self) -> int:
        return int(self.x_train.shape[0])

    @property
    def n_test(self) -> int:
        return int(self.x_test.shape[0])

    def transform(self, passengers: pd.DataFrame) -> np.ndarray:
        """Encode other passengers (from `read_passengers`) with this split's fitted statistics."""
        return _standardise(_encode(_filled(passengers, self.fill)), self.mean, self.std)


def load_titanic(path: str | Path | None = None, *, seed: int = 0, n_test: int = 418) -> TitanicSplit:
    """Load, split at random (seeded) and standardise the passenger list.

    The titanic3 file is sorted by class and name, so taking the first rows as a
    test set would test on first-class passengers only: the split is a seeded
    permutation instead. With the default file this gives 891 train / 418 test
    passengers, the sizes of Kaggle's competition.
    """
    passengers = read_passengers(path)
    n = len(passengers)
    if not isinstance(n_test, (int, np.integer)) or isinstance(n_test, bool) or not 0 < n_test < n:
        raise TitanicDataError(
            f"n_test must be a whole number between 1 and {n - 1} (the file has {n} passengers), got {n_test!r}."
        )
    order = np.random.default_rng(seed).permutation(n)
    test, train = passengers.iloc[order[:n_test]], passengers.iloc[order[n_test:]]

    fill = _fit_fill(train)
    x_train = _encode(_filled(train, fill))
    # Stored as float32 and used as stored, so that `transform` reproduces x_test exactly.
    mean = x_train.mean(axis=0).astype(np.float32)
    std = x_train.std(axis=0)
    # A constant feature (possible in a small custom file) would divide by zero.
    std = np.where(std > 1e-12, std, 1.0).astype(np.float32)
    return TitanicSplit(
        x_train=_standardise(x_train, mean, std),
        y_train=train["survived"].to_numpy(np.float32),
        x_test=_standardise(_encode(_filled(test, fill)), mean, std),
        y_test=test["survived"].to_numpy(np.float32),
        fill=fill,
        mean=mean,
        std=std,
        source=str(Path(DEFAULT_PATH if path is None else path)),
        seed=seed,
        train_rows=order[n_test:].copy(),
        test_rows=order[:n_test].copy(),
    )


def _read_csv(path: Path) -> pd.DataFrame:
    if not path.exists():
        raise TitanicDataError(_("{path}: no such file.").format(path=path))
    if not path.is_file():
        raise TitanicDataError(_("{path}: not a file.").format(path=path))
    try:
        # Only `?` (titanic3) and empty cells (Kaggle) mean "missing": pandas'
        # default list would also swallow values such as "NA" or "None".
        return pd.read_csv(path, na_values=["?", ""], keep_default_na=False, dtype=str)
    except pd.errors.EmptyDataError:
        raise TitanicDataError(_("{path}: the file is empty.").format(path=path)) from None
    except (pd.errors.ParserError, UnicodeDecodeError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TitanicDataError(_("{path}: not a readable CSV file ({error}).").format(path=path, error=first)) from None


def _bad(path: Path, col: str, rows: pd.Series, raw: pd.Series, what: str) -> TitanicDataError:
    # Line numbers as an editor shows them: the header is line 1.
    lines = [f"line {i + 2}: {raw.iloc[i]!r}" for i in np.flatnonzero(rows.to_numpy())[:MAX_SHOWN]]
    more = int(rows.sum()) - len(lines)
    tail = f" and {more} more" if more > 0 else ""
    return TitanicDataError(f"{path}: column {col!r} {what}: {'; '.join(lines)}{tail}.")


def _numbers(raw: pd.DataFrame, col: str, path: Path) -> pd.Series:
    text = raw[col].str.strip()
    values = pd.to_numeric(text, errors="coerce").astype(float)
    not_number = text.notna() & values.isna()
    if not_number.any():
        raise _bad(path, col, not_number, raw[col], "has values that are not numbers")
    if col not in FILLABLE and values.isna().any():
        raise _bad(path, col, values.isna(), raw[col], "has missing values")
    negative = values < 0
    if negative.any() or np.isinf(values).any():
        raise _bad(path, col, negative | np.isinf(values), raw[col], "has negative or infinite values")
    return values


def _integers(raw: pd.DataFrame, col: str, path: Path, allowed: set[int] | None = None) -> pd.Series:
    values = _numbers(raw, col, path)
    wrong = values != values.round()
    if allowed is not None:
        wrong |= ~values.isin(allowed)
    if wrong.any():
        expected = f"one of {sorted(allowed)}" if allowed else "whole numbers"
        raise _bad(path, col, wrong, raw[col], f"should hold {expected}")
    return values.astype(np.int64)


def _categories(raw: pd.DataFrame, col: str, path: Path, allowed: tuple[str, ...], fold) -> pd.Series:
    text = raw[col].str.strip().map(fold, na_action="ignore")
    if col not in FILLABLE and text.isna().any():
        raise _bad(path, col, text.isna(), raw[col], "has missing values")
    wrong = text.notna() & ~text.isin(allowed)
    if wrong.any():
        raise _bad(path, col, wrong, raw[col], f"should be one of {', '.join(allowed)}")
    return text.astype(object)


def _fit_fill(train: pd.DataFrame) -> dict[str, float | str]:
    port = train["embarked"].mode()
    return {
        "age": float(train["age"].median()) if train["age"].notna().any() else 0.0,
        "fare": float(train["fare"].median()) if train["fare"].notna().any() else 0.0,
        "embarked": str(port.iloc[0]) if len(port) else "S",
    }


def _filled(passengers: pd.DataFrame, fill: dict[str, float | str]) -> pd.DataFrame:
    return passengers.fillna({col: fill[col] for col in FILLABLE})


def _encode(passengers: pd.DataFrame) -> np.ndarray:
    columns = [
        passengers["pclass"].to_numpy(float),
        (passengers["sex"] == "female").to_numpy(float),
        passengers["age"].to_numpy(float),
        passengers["sibsp"].to_numpy(float),
        passengers["parch"].to_numpy(float),
        passengers["fare"].to_numpy(float),
    ]
    columns += [(passengers["embarked"] == port).to_numpy(float) for port in PORTS]
    return np.stack(columns, axis=1)


def _standardise(x: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    return ((x - mean) / std).astype(np.float32)
