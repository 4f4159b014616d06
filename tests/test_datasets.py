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


def _as_sklearn_loads_it():
    from sklearn.datasets import load_breast_cancer
    data = load_breast_cancer()
    names = []
    for f in data.feature_names:   # "mean concave points" -> concave_points_mean, "radius error" -> radius_se
        words = f.split()
        stat, base = (words[0], words[1:]) if words[0] in ("mean", "worst") else ("se", words[:-1])
        names.append("_".join(base + [stat]))
    return data.data, np.where(data.target == 0, 1.0, -1.0), tuple(names), tuple(data.target_names)


@pytest.mark.parametrize("direct", [True, False])
def test_builtin_bcd_is_scikit_learns_set_read_directly_or_through_it(monkeypatch, direct):
    """The built-in BCD reads scikit-learn's CSV without importing scikit-learn (1.5-3 s of `make run`); read so,
    or through load_breast_cancer when the file is not found, it is load_breast_cancer's set, value for value."""
    import minlp_fs.datasets as datasets
    if not direct:
        monkeypatch.setattr(datasets, "_sklearn_bcd_file", lambda: None)
    else:
        assert datasets._sklearn_bcd_file() is not None
    X, y, names, classes = _as_sklearn_loads_it()
    d = load_dataset("bcd")
    np.testing.assert_array_equal(d.X, X)
    np.testing.assert_array_equal(d.y, y)
    assert d.feature_names == names and d.X.flags.c_contiguous
    assert classes == ("malignant", "benign") and sum(d.y > 0) == 212   # malignant -> +1


def test_builtin_bcd_does_not_import_scikit_learn():
    import subprocess
    import sys
    code = ("import sys\nfrom minlp_fs.datasets import load_dataset\nd = load_dataset('bcd')\n"
            "print(d.shape, 'sklearn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["(569,", "30)", "False"]


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


# --- issue 13: label by name, header checks, encodings, line numbers, names and folders ----------

FLAGGED = "y,x0,x1,flag\n1,0.5,2,0\n-1,0.1,3,1\n1,0.7,1,1\n-1,0.2,5,0\n"


def test_the_label_column_is_found_by_name_not_position(tmp_path):
    """A CSV y,x0,x1,flag: the labels are y (not the last column) and flag stays a feature."""
    d = read_csv(write(tmp_path / "f.csv", FLAGGED))
    assert d.feature_names == ("x0", "x1", "flag")
    np.testing.assert_array_equal(d.y, [1, -1, 1, -1])
    np.testing.assert_array_equal(d.X[:, 2], [0, 1, 1, 0])


def test_label_argument_names_another_column(tmp_path):
    write(tmp_path / "f.csv", FLAGGED)
    d = load_dataset("f", tmp_path, label="flag")
    assert d.feature_names == ("y", "x0", "x1")
    np.testing.assert_array_equal(d.y, [-1, 1, 1, -1])
    with pytest.raises(InputError, match=r"no column named 'z' for the labels; the columns are y, x0, x1, flag"):
        load_dataset("f", tmp_path, label="z")
    with pytest.raises(InputError, match="the built-in bcd has its labels in 'y'"):
        load_dataset("bcd", label="diagnosis")


def test_string_class_names_are_labels(tmp_path):
    d = read_csv(write(tmp_path / "s.csv", "a,class\n1,M\n2,B\n3,M\n"), label="class")
    np.testing.assert_array_equal(d.y, [1, -1, 1])  # B < M: B -> -1
    assert d.classes == ("B", "M") and list(d.labels) == ["M", "B", "M"]


def test_the_class_names_reach_the_instance(tmp_path):
    """build_instance encodes the CSV's own labels, so the instance (and `solve`'s output) names the classes."""
    from minlp_fs.api import build_instance

    write(tmp_path / "s.csv", "a,b,class\n1,0,M\n2,1,B\n3,1,M\n4,0,B\n")
    inst = build_instance("s", tmp_path, B=1, label="class")
    assert inst.classes == ("B", "M") and inst.describe()["classes"] == ["B", "M"]
    np.testing.assert_array_equal(inst.y, [1, -1, 1, -1])
    assert build_instance("bcd", B=1).describe()["classes"] == ["benign", "malignant"]


def test_three_class_names_stay_labels(tmp_path):
    """More than two values: y keeps them (a multiclass instance, minlp_fs.multiclass)."""
    d = read_csv(write(tmp_path / "t.csv", "a,kind\n1,oak\n2,ash\n3,elm\n4,oak\n"), label="kind")
    np.testing.assert_array_equal(d.y, ["oak", "ash", "elm", "oak"])


@pytest.mark.parametrize("text, message", [
    ("a,b,flag\n1,2,1\n3,4,-1\n", "no label column named 'y'; name the label column with --label COLUMN"),
    ("a,a,y\n1,2,1\n3,4,-1\n", "the header repeats the column name(s) 'a'; names must be unique"),
    ("a,,y\n1,2,1\n3,4,-1\n", "the header has an empty name in column(s) 2"),
    ("a,y\n1,1\n2,1\n3,1\n", "the label column 'y' has a single value (1); it needs at least two classes"),
    ("y\n1\n-1\n", "no feature columns besides the label column 'y'"),
    ("a,y\n1,1\n\n\nnan,-1\n", "line 5, column 'a': 'nan' is not a finite number"),
    ("a,y\n1,1\n\n\n2,x\n", "the label column 'y' mixes numbers ('1', line 2) and names ('x', line 5)"),
    ("a,y\n1,a\n2,b\n", None),  # string labels: two names
    ("a,y\n1,1\n2,-1\n3,NA\n", "line 4, column 'y': the label 'NA' is missing"),
    ("a,y\n1,1\n2,-1\n3,\n", "line 4, column 'y': the label '' is missing"),
    ("a,y\n1,1\n2,-1\n3,inf\n", "line 4, column 'y': the label 'inf' is not a finite number"),
    ("a,y\n1,1\n2,-1\n3,1.0\n4,?\n", "line 5, column 'y': the label '?' is missing"),
    ("a,y\n\"1\n2\",1\n3,-1\n", "line 2, column 'a': '1\\n2' is not a number"),
])
def test_header_and_label_checks(tmp_path, text, message):
    path = write(tmp_path / "h.csv", text)
    if message is None:
        assert read_csv(path).y.tolist() == [-1.0, 1.0]
        return
    with pytest.raises(InputError) as info:
        read_csv(path)
    assert message in str(info.value) and str(path) in str(info.value)


def test_line_numbers_count_blank_lines(tmp_path):
    path = write(tmp_path / "b.csv", "a,b,y\n1,2,1\n\n\n3,x,-1\n\n5,6,1\n")
    with pytest.raises(InputError, match=r"b.csv, line 5, column 'b': 'x' is not a number"):
        read_csv(path)
    path = write(tmp_path / "b.csv", "a,b,y\n1,2,1\n\n\n3,4,-1\n\n5,6\n")
    with pytest.raises(InputError, match=r"b.csv, line 7: 2 fields where the header has 3"):
        read_csv(path)


def test_a_utf8_bom_is_not_part_of_the_first_name(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffage,y\n1,1\n2,-1\n".encode("utf-8"))
    assert read_csv(path).feature_names == ("age",)


def test_a_latin1_file_is_a_clear_error_naming_the_line(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("a,y\n1,1\n2,-1\n".encode() + "café,y\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"latin.csv is not UTF-8 text \(byte 16 cannot be decoded, line 4\); "
                                         r"save it as UTF-8"):
        read_csv(path)
    (tmp_path / "u.csv").write_text("café,y\n1,1\n2,-1\n", encoding="utf-8")
    assert read_csv(tmp_path / "u.csv").feature_names == ("café",)


def test_file_names_with_capitals_load(tmp_path):
    write(tmp_path / "MyData.csv", "a,y\n1,1\n2,-1\n")
    for name in ("MyData", "mydata", "MYDATA", "MyData.csv"):
        d = load_dataset(name, tmp_path)
        assert d.name == "mydata" and d.X.shape == (2, 1)


def test_names_differing_only_in_case_are_ambiguous(tmp_path):
    write(tmp_path / "Toy.csv", "a,y\n1,1\n2,-1\n")
    write(tmp_path / "TOY.csv", "a,y\n1,1\n2,-1\n")
    if len(list(tmp_path.glob("*.csv"))) < 2:
        pytest.skip("case-insensitive file system")
    with pytest.raises(InputError, match=r"dataset 'toy' matches TOY.csv, Toy.csv in .* \(names differing only in case"):
        load_dataset("toy", tmp_path)


@pytest.mark.parametrize("name", ["../outside", "sub/inner", "/etc/passwd", "..", ".", "a\\b", ""])
def test_a_dataset_name_cannot_leave_the_data_folder(tmp_path, name):
    inner = tmp_path / "data"
    (inner / "sub").mkdir(parents=True)
    write(tmp_path / "outside.csv", "a,y\n1,1\n2,-1\n")
    write(inner / "sub" / "inner.csv", "a,y\n1,1\n2,-1\n")
    with pytest.raises(InputError, match="must be a file name in the data folder, not a path"):
        load_dataset(name, inner)


def test_a_data_dir_that_is_a_file_says_so(tmp_path, monkeypatch):
    path = write(tmp_path / "x.csv", "a,y\n1,1\n2,-1\n")
    with pytest.raises(InputError, match=r"data directory .*x.csv is a file, not a folder"):
        load_dataset("x", path)
    monkeypatch.setenv(DATA_ENV, str(path))
    with pytest.raises(InputError, match=r"is a file, not a folder"):
        load_dataset("x")


def test_unreadable_csv_syntax_is_an_input_error(tmp_path):
    path = write(tmp_path / "long.csv", "a,y\n" + "1" * 200_000 + ",1\n2,-1\n")
    with pytest.raises(InputError, match=r"long.csv: not a readable CSV file \(field larger than field limit"):
        read_csv(path)
