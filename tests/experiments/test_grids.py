"""The experiment grids: units, shared random starts, skipped methods, deduplicated configurations."""
import pytest

from minlp_fs.experiments.accuracy import BASELINES, accuracy_grid
from minlp_fs.experiments.grids import budgets, certified_grid, multistart_grid, params_grid
from minlp_fs.experiments.runner import unit_key
from minlp_fs.experiments.units import solver_options, unavailable_reason


def test_certified_grid_units_and_acso_left_out_on_rbf():
    g = certified_grid(["synthetic"], {"synthetic": 2}, kernels=("poly2", "rbf"), senses=("paper",),
                       methods=("ls*", "acso*", "rfe1"))
    assert len(g.units) == 2 * (1 + 3) + 2 * (1 + 2)
    assert not any(u["method"] == "acso*" and u["kernel"] == "rbf" for u in g.units)
    assert "polynomial" in g.skipped["acso*"]
    assert sum(u["method"] == "enumerate" for u in g.units) == 4
    assert all("options" not in u for u in g.units)  # our heuristics get no solver time limit


def test_solver_time_limit_only_for_external_solvers():
    assert solver_options("ls*", 5.0) == {}
    if unavailable_reason("ipopt") is None:
        assert solver_options("ipopt", 5.0) == {"time_limit": 5.0}


def test_an_unknown_module_is_reported_not_raised():
    from minlp_fs.methods import REGISTRY

    REGISTRY["fake-solver"] = "minlp_fs.solvers.no_such_module:Nope"
    try:
        g = certified_grid(["synthetic"], {"synthetic": 1}, kernels=("poly2",), senses=("fit",),
                           methods=("fake-solver", "rfe1"))
    finally:
        del REGISTRY["fake-solver"]
    assert "not importable" in g.skipped["fake-solver"]
    assert [u["method"] for u in g.units] == ["enumerate", "rfe1"]


def test_multistart_grid_shares_the_random_starts():
    g = multistart_grid(["synthetic"], kernels=("poly2",), senses=("fit",), methods=("ls*", "acso*", "rfe1"),
                        n_starts=3, certify_max_subsets=1000)
    assert {u["B"] for u in g.units} == {5}
    ls = [u for u in g.units if u["method"] == "ls*"]
    acso = [u for u in g.units if u["method"] == "acso*"]
    assert [u["seed"] for u in ls] == [0, 1, 2] == [u["seed"] for u in acso]
    assert [u["start"] for u in ls] == [u["start"] for u in acso]
    assert len({tuple(u["start"]) for u in ls}) == 3 and all(len(u["start"]) == 5 for u in ls)
    assert [u for u in g.units if u["method"] == "rfe1"] == [
        {"dataset": "synthetic", "kernel": "poly2", "B": 5, "sense": "fit", "method": "rfe1"}]
    assert sum(u["method"] == "enumerate" for u in g.units) == 1
    g = multistart_grid(["synthetic"], kernels=("poly2",), senses=("fit",), methods=("rfe1",), n_starts=3)
    assert [u["method"] for u in g.units] == ["rfe1"]


def test_params_grid_default_configuration_once_per_case():
    g = params_grid(["synthetic"], kernels=("poly2",), fractions=(0.5,))
    distinct = {unit_key(u) for u in g.units}
    assert len(distinct) == (5 + 4 + 3 - 2) + (4 + 3 - 1)
    assert all(u["B"] == 5 and u["sense"] == "paper" for u in g.units)


@pytest.mark.parametrize("n, expected", [(7, [1, 2, 3, 4]), (60, [6, 12, 18, 24, 30]), (3, [1, 2])])
def test_budgets(n, expected):
    assert budgets(n) == expected


def test_accuracy_grid_has_baselines_without_sense():
    g = accuracy_grid(["synthetic"], B=2, methods=("ls*",), n_folds=3)
    base = [u for u in g.units if u["method"] in BASELINES]
    assert len(base) == 3 * len(BASELINES) and all(u["sense"] is None for u in base)
    assert sorted({u["sense"] for u in g.units if u["method"] == "ls*"}) == ["fit", "paper"]


def test_n_comes_from_metadata_not_from_an_instance(tmp_path, monkeypatch):
    from minlp_fs.experiments import grids

    rows = ["a,b,c,y"] + [f"{i},{i % 3},{i % 5},{1 if i % 2 else -1}" for i in range(11)]
    (tmp_path / "mine.csv").write_text("\n".join(rows) + "\n\n")

    def load(*args, **kwargs):
        raise AssertionError("the grid loaded a dataset to read n")

    monkeypatch.setattr(grids, "load_dataset", load)
    assert grids.dataset_shape("mine", tmp_path) == (11, 3)
    assert grids.dataset_shape("bcd") == (569, 30) and grids.dataset_shape("synthetic") == (200, 10)
    g = multistart_grid(["mine"], tmp_path, kernels=("poly2",), senses=("fit",), methods=("ls*",), n_starts=2)
    assert {u["B"] for u in g.units} == {1} and len(g.units) == 2
    assert {u["B"] for u in params_grid(["mine"], tmp_path, kernels=("poly2",), fractions=(0.5, 1.0)).units} == {2, 3}


def test_an_unknown_dataset_gets_the_loaders_error():
    from minlp_fs.errors import InputError
    from minlp_fs.experiments.grids import dataset_shape

    with pytest.raises(InputError, match="unknown dataset"):
        dataset_shape("nope")
