"""Datasets: the paper's nine CSVs (Table 1), the built-in BCD, the MINLP_FS_DATA folder, clear errors
on missing or malformed files, and the synthetic generator."""
import numpy as np
import pytest
from sklearn.model_selection import cross_val_score
from sklearn.svm import SVC

from minlp_fs.datasets import DATA_ENV, PAPER_DATASETS, load_dataset, make_synthetic, read_csv
from minlp_fs.errors import InputError


@pytest.fixture(autouse=True)
def no_env_folder(monkeypatch):
    monkeypatch.delenv(DATA_ENV, raising=False)


def write(path, text):
    path.write_text(text)
    return path


def test_builtin_bcd_equals_the_shared_csv(data_dir):
    builtin = load_dataset("bcd")
    shared = read_csv(data_dir / "bcd.csv")
    assert builtin.name == shared.name == "bcd"
    np.testing.assert_array_equal(builtin.X, shared.X)
    np.testing.assert_array_equal(builtin.y, shared.y)
    assert builtin.feature_names == shared.feature_names
    assert builtin.shape == PAPER_DATASETS["bcd"]


@pytest.mark.parametrize("name", list(PAPER_DATASETS))
def test_paper_datasets_load(name, data_dir):
    d = load_dataset(name, data_dir)
    assert d.name == name
    assert d.shape == PAPER_DATASETS[name]
    assert len(d.feature_names) == d.X.shape[1] and d.y.shape == (d.X.shape[0],)
    assert set(np.unique(d.y)) == {-1.0, 1.0}
    assert np.all(np.isfinite(d.X)) and np.all(np.ptp(d.X, axis=0) > 0)


def test_env_folder(monkeypatch, data_dir):
    monkeypatch.setenv(DATA_ENV, str(data_dir))
    d = load_dataset("Sonar")
    assert d.name == "sonar" and d.shape == PAPER_DATASETS["sonar"]


def test_env_folder_with_own_csv(monkeypatch, tmp_path):
    write(tmp_path / "toy.csv", "a,b,y\n1,2,1\n3,4.5,-1\n5,6,1\n")
    monkeypatch.setenv(DATA_ENV, str(tmp_path))
    d = load_dataset("toy")
    assert d.feature_names == ("a", "b") and d.name == "toy"
    np.testing.assert_array_equal(d.X, [[1, 2], [3, 4.5], [5, 6]])
    np.testing.assert_array_equal(d.y, [1, -1, 1])
    assert load_dataset("bcd").shape == PAPER_DATASETS["bcd"]  # bcd.csv absent there: built-in copy
    other = tmp_path / "other"
    other.mkdir()
    write(other / "toy.csv", "a,y\n7,1\n8,-1\n")
    assert load_dataset("toy", other).X.shape == (2, 1)  # data_dir wins over the environment


def test_missing_and_unknown(tmp_path):
    with pytest.raises(InputError, match="dataset 'sonar' not found: no file .*sonar.csv$"):
        load_dataset("sonar", tmp_path)
    write(tmp_path / "toy.csv", "a,y\n1,1\n2,-1\n")
    with pytest.raises(InputError, match=r"dataset 'iris' not found.*\(this folder has: toy\)"):
        load_dataset("iris", tmp_path)
    with pytest.raises(InputError, match=r"unknown dataset 'iris'; the paper's are wholesale, diabetes"):
        load_dataset("iris")
    with pytest.raises(InputError, match=f"dataset 'german' needs its CSV file.*{DATA_ENV}"):
        load_dataset("german")
    with pytest.raises(InputError, match="data directory .*nowhere does not exist"):
        load_dataset("sonar", tmp_path / "nowhere")


@pytest.mark.parametrize("text, message", [
    ("a,b,y\n1,2,1\n3,-1\n5,6,1\n", "line 3: 2 fields where the header has 3"),
    ("a,b,y\n1,2,1\n3,4,5,-1\n", "line 3: 4 fields where the header has 3"),
    ("a,b,y\n1,2,1\n3,x,-1\n", "every field must be numeric"),
    ("a,b,y\n1,,1\n3,4,-1\n", "every field must be numeric"),
    ("", "a header and at least two data rows are needed"),
    ("a,b,y\n", "a header and at least two data rows are needed"),
    ("a,b,y\n1,2,1\n\n\n", "a header and at least two data rows are needed"),
])
def test_malformed_csv(tmp_path, text, message):
    path = write(tmp_path / "bad.csv", text)
    with pytest.raises(InputError) as info:
        read_csv(path)
    assert message in str(info.value) and str(path) in str(info.value)
    with pytest.raises(InputError, match="every field|fields where|at least two data rows"):
        load_dataset("bad", tmp_path)


def test_unreadable_file(tmp_path):
    with pytest.raises(InputError, match="cannot read dataset file .*absent.csv"):
        read_csv(tmp_path / "absent.csv")
    with pytest.raises(InputError, match="cannot read dataset file"):
        read_csv(tmp_path)


def test_blank_lines_are_ignored(tmp_path):
    d = read_csv(write(tmp_path / "t.csv", "a,y\n1,1\n\n2,-1\n\n"), name="t2")
    assert d.name == "t2" and d.X.shape == (2, 1)


def test_synthetic_is_deterministic():
    a, b = make_synthetic(m=60, seed=3), make_synthetic(m=60, seed=3)
    np.testing.assert_array_equal(a.X, b.X)
    np.testing.assert_array_equal(a.y, b.y)
    c = make_synthetic(m=60, seed=4)
    assert not np.array_equal(a.X, c.X)
    assert a.shape == (60, 10)
    assert a.feature_names == ("inf0", "inf1", "inf2") + tuple(f"noise{k}" for k in range(7))
    assert set(np.unique(a.y)) == {-1.0, 1.0}
    assert np.all((a.X >= 0) & (a.X <= 1))


def test_synthetic_flip_share():
    clean = make_synthetic(m=400, n_informative=2, n_noise=1, seed=0, flip=0.0)
    r = ((clean.X[:, :2] - 0.5) ** 2).sum(axis=1)
    np.testing.assert_array_equal(clean.y, np.where(r > np.median(r), 1.0, -1.0))
    noisy = make_synthetic(m=400, n_informative=2, n_noise=1, seed=0, flip=0.1)
    assert 0.05 < np.mean(noisy.y != clean.y) < 0.15


def test_informative_features_matter():
    d = make_synthetic(m=300, n_informative=3, n_noise=3, seed=1)
    svc = SVC(kernel="rbf", C=10.0, gamma=2.0)
    informative = cross_val_score(svc, d.X[:, :3], d.y, cv=5).mean()
    noise = cross_val_score(svc, d.X[:, 3:], d.y, cv=5).mean()
    assert informative > 0.8
    assert informative > noise + 0.2


@pytest.mark.parametrize("kw", [dict(m=3), dict(n_informative=0), dict(n_noise=-1)])
def test_synthetic_errors(kw):
    with pytest.raises(InputError, match="synthetic data needs m >= 4, n_informative >= 1 and n_noise >= 0"):
        make_synthetic(**kw)
