"""Shared fixtures: the shared datasets folder, two small synthetic instances, random feasible alphas.

The paper's CSVs live in ``shared/datasets`` beside the repository (CI clones the repository with
``shared/`` next to it). Tests that read them take the ``data_dir`` fixture or carry
``@pytest.mark.requires_data``; both skip, with the reason, when the folder is absent. Tests that run the GAMS
executable (gamspy-base) carry ``@pytest.mark.requires_gams``: skipped, with GAMS's reason, when gamspy-base is not
installed or GAMS refuses its licence (the demo licence is time-limited).
"""
import importlib.util
from functools import lru_cache
from pathlib import Path

import pytest

from minlp_fs.datasets import make_synthetic
from minlp_fs.instance import make_instance

DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
MISSING_DATA = f"shared datasets folder {DATA_DIR} is absent"


@lru_cache(maxsize=None)
def gams_unusable() -> str | None:
    """Why the GAMS executable cannot run here (gamspy-base missing, or its licence refused), else None."""
    if importlib.util.find_spec("gamspy_base") is None:
        return "gamspy-base not installed: pip install 'minlp-fs[gams]'"
    from minlp_fs.errors import SolverUnavailableError
    from minlp_fs.solvers.gams import licence_problem

    try:
        return licence_problem()
    except SolverUnavailableError as exc:  # GAMS did not start or answer
        return str(exc)


def pytest_configure(config):
    config.addinivalue_line("markers", "requires_data: needs the shared datasets folder beside the repository")
    config.addinivalue_line("markers", "requires_gams: runs the GAMS executable of gamspy-base under its licence")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "requires_data" in item.keywords and not DATA_DIR.is_dir():
            item.add_marker(pytest.mark.skip(reason=MISSING_DATA))
        if "requires_gams" in item.keywords and gams_unusable():
            item.add_marker(pytest.mark.skip(reason=gams_unusable()))


@pytest.fixture
def data_dir() -> Path:
    """The shared datasets folder (the test is skipped when it is absent)."""
    if not DATA_DIR.is_dir():
        pytest.skip(MISSING_DATA)
    return DATA_DIR


def _small(kernel: str):
    d = make_synthetic(m=40, n_informative=3, n_noise=3, seed=0)
    return make_instance(d.X, d.y, B=3, kernel=kernel, feature_names=d.feature_names, name="small")


@pytest.fixture
def small_poly_instance():
    """Synthetic m=40, n=6 (3 informative, 3 noise), B=3, poly2, paper sense."""
    return _small("poly2")


@pytest.fixture
def small_rbf_instance():
    """Synthetic m=40, n=6 (3 informative, 3 noise), B=3, Gaussian kernel, paper sense."""
    return _small("rbf")


def _random_feasible_alpha(rng, y, C, zero_share=0.3):
    """A random point of {0 <= a <= C, y'a = 0}: a box point with the larger class side scaled down."""
    a = rng.uniform(0, C, size=y.size) * (rng.uniform(size=y.size) >= zero_share)
    pos, neg = a[y > 0].sum(), a[y < 0].sum()
    if pos > neg:
        a[y > 0] *= neg / pos
    elif neg > 0:
        a[y < 0] *= pos / neg
    return a


@pytest.fixture(scope="session")
def random_feasible_alpha():
    """``f(rng, y, C, zero_share=0.3)``: a random feasible alpha of the SVM dual polytope."""
    return _random_feasible_alpha
