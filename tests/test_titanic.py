"""The Titanic data pipeline: what lessons, checks and the lab rely on."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from course.titanic import FEATURES, TitanicDataError, TitanicSplit, load_titanic, read_passengers

KAGGLE_COLUMNS = ["PassengerId", "Survived", "Pclass", "Name", "Sex", "Age", "SibSp", "Parch", "Ticket", "Fare", "Cabin", "Embarked"]


@pytest.fixture(scope="module")
def split():
    return load_titanic()


def write_titanic3(tmp_path, frame: pd.DataFrame, name="passengers.csv"):
    path = tmp_path / name
    frame.to_csv(path, index=False, na_rep="?")
    return path


def raw_titanic3() -> pd.DataFrame:
    from course.titanic import DEFAULT_PATH

    return pd.read_csv(DEFAULT_PATH, dtype=str, keep_default_na=False)


def test_vendored_file_reads_as_the_full_titanic3_list():
    passengers = read_passengers()
    assert len(passengers) == 1309
    assert set(passengers["pclass"]) == {1, 2, 3}
    assert set(passengers["survived"]) == {0, 1}
    assert set(passengers["sex"]) == {"male", "female"}
    assert set(passengers["embarked"].dropna()) == {"C", "Q", "S"}
    # `?` means missing in titanic3.
    assert passengers["age"].isna().sum() == 263
    assert passengers["embarked"].isna().sum() == 2


def test_default_split_has_kaggle_sizes_and_model_ready_arrays(split):
    assert split.x_train.shape == (891, len(FEATURES)) and split.x_train.dtype == np.float32
    assert split.x_test.shape == (418, len(FEATURES)) and split.x_test.dtype == np.float32
    assert split.y_train.shape == (891,) and split.y_train.dtype == np.float32
    assert set(np.unique(np.concatenate([split.y_train, split.y_test]))) == {0.0, 1.0}
    assert split.feature_names == FEATURES == (
        "pclass", "sex", "age", "sibsp", "parch", "fare", "embarked_C", "embarked_Q", "embarked_S"
    )
    assert np.isfinite(split.x_train).all() and np.isfinite(split.x_test).all()
    np.testing.assert_allclose(split.x_train.mean(axis=0), 0, atol=1e-5)
    np.testing.assert_allclose(split.x_train.std(axis=0), 1, atol=1e-4)
    assert sorted(np.concatenate([split.train_rows, split.test_rows])) == list(range(1309))


def test_split_is_random_not_the_first_rows_and_seeded(split):
    # The file is sorted by class: a "first 418 rows" test set would be first class only.
    classes = read_passengers()["pclass"].to_numpy()[split.test_rows]
    assert set(classes) == {1, 2, 3}
    again = load_titanic(seed=0)
    np.testing.assert_array_equal(again.x_test, split.x_test)
    other = load_titanic(seed=1)
    assert not np.array_equal(other.test_rows, split.test_rows)


def test_fill_values_and_scaling_come_from_the_training_part_only(tmp_path, split):
    frame = raw_titanic3()
    frame.loc[split.test_rows, "age"] = "80"
    frame.loc[split.test_rows, "fare"] = "500"
    frame.loc[split.test_rows, "embarked"] = "Q"
    changed = load_titanic(write_titanic3(tmp_path, frame), seed=0)
    np.testing.assert_array_equal(changed.x_train, split.x_train)
    np.testing.assert_array_equal(changed.mean, split.mean)
    assert changed.fill == split.fill
    train = read_passengers().iloc[split.train_rows]
    assert split.fill["age"] == pytest.approx(train["age"].median())


def test_transform_encodes_new_passengers_like_the_split(split):
    passengers = read_passengers()
    np.testing.assert_allclose(split.transform(passengers.iloc[split.test_rows]), split.x_test)


def test_kaggle_train_csv_is_normalised_to_the_same_schema(tmp_path):
    titanic3 = raw_titanic3().iloc[:120]
    kaggle = pd.DataFrame({
        "PassengerId": range(1, 121),
        "Survived": titanic3["survived"], "Pclass": titanic3["pclass"], "Name": titanic3["name"],
        "Sex": titanic3["sex"], "Age": titanic3["age"].replace("?", ""), "SibSp": titanic3["sibsp"],
        "Parch": titanic3["parch"], "Ticket": titanic3["ticket"], "Fare": titanic3["fare"].replace("?", ""),
        "Cabin": titanic3["cabin"].replace("?", ""), "Embarked": titanic3["embarked"].replace("?", ""),
    })[KAGGLE_COLUMNS]
    path = tmp_path / "train.csv"
    kaggle.to_csv(path, index=False)
    got = read_passengers(path)
    want = read_passengers().iloc[:120]
    cols = ["pclass", "survived", "sex", "age", "sibsp", "parch", "fare", "embarked", "name"]
    pd.testing.assert_frame_equal(got[cols].reset_index(drop=True), want[cols].reset_index(drop=True))
    small = load_titanic(path, n_test=40)
    assert small.x_train.shape == (80, 9) and small.x_test.shape == (40, 9)


def test_missing_file(tmp_path):
    with pytest.raises(TitanicDataError, match="no such file"):
        read_passengers(tmp_path / "nope.csv")


def test_missing_columns_are_named(tmp_path):
    path = write_titanic3(tmp_path, raw_titanic3().drop(columns=["fare", "sex"]))
    with pytest.raises(TitanicDataError, match="missing column.*sex, fare"):
        read_passengers(path)


def test_kaggle_test_csv_gets_a_hint(tmp_path):
    path = write_titanic3(tmp_path, raw_titanic3().drop(columns=["survived"]), "test.csv")
    with pytest.raises(TitanicDataError, match="train.csv"):
        read_passengers(path)


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("sex", "robot", "'sex' should be one of male, female"),
        ("age", "old", "'age' has values that are not numbers"),
        ("fare", "-3", "'fare' has negative"),
        ("pclass", "4", r"'pclass' should hold one of \[1, 2, 3\]"),
        ("survived", "", "'survived' has missing values"),
        ("embarked", "X", "'embarked' should be one of C, Q, S"),
        ("sibsp", "1.5", "'sibsp' should hold whole numbers"),
    ],
)
def test_bad_values_name_the_column_and_line(tmp_path, column, value, message):
    frame = raw_titanic3()
    frame.loc[10, column] = value
    path = tmp_path / "bad.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(TitanicDataError, match=message) as info:
        read_passengers(path)
    assert "line 12" in str(info.value)  # row 10 sits under the header, on line 12


def test_no_rows(tmp_path):
    path = write_titanic3(tmp_path, raw_titanic3().iloc[:0])
    with pytest.raises(TitanicDataError, match="no passenger rows"):
        read_passengers(path)


@pytest.mark.parametrize(("content", "message"), [(b"", "empty"), (b"\xff\xfe\x00\x81binary\x00", "not a readable CSV")])
def test_unreadable_files(tmp_path, content, message):
    path = tmp_path / "odd.csv"
    path.write_bytes(content)
    with pytest.raises(TitanicDataError, match=message):
        read_passengers(path)


def test_a_directory_is_not_a_file(tmp_path):
    with pytest.raises(TitanicDataError, match="not a file"):
        read_passengers(tmp_path)


@pytest.mark.parametrize("n_test", [0, 1309, -1, 0.3])
def test_impossible_test_sizes(n_test):
    with pytest.raises(TitanicDataError, match="n_test"):
        load_titanic(n_test=n_test)


def test_torch_loader_feeds_numpy_batches_without_a_ragged_last_one(split):
    from course.lab.torch_data import make_loader

    loader = make_loader(split, batch_size=32, shuffle=True, seed=0)
    batches = list(loader)
    assert len(batches) == 891 // 32
    assert all(isinstance(x, np.ndarray) and x.shape == (32, 9) and y.shape == (32,) for x, y in batches)
    again = list(make_loader(split, batch_size=32, shuffle=True, seed=0))
    np.testing.assert_array_equal(batches[0][0], again[0][0])
    # Within an epoch no passenger comes twice: tag each row with its index to see it.
    tagged = TitanicSplit(x_train=np.arange(891, dtype=np.float32)[:, None].repeat(9, 1), y_train=split.y_train,
                          x_test=split.x_test, y_test=split.y_test)
    seen = np.concatenate([x[:, 0] for x, _ in make_loader(tagged, seed=3)])
    assert len(seen) == 864 and len(np.unique(seen)) == 864
    x, _ = next(iter(make_loader(split, to_torch=True)))
    import torch

    assert isinstance(x, torch.Tensor) and x.dtype == torch.float32


def test_data_module_imports_neither_torch_nor_jax():
    code = "import sys, course.titanic, course.lab; print(sorted(m for m in ('torch', 'jax', 'textual') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
