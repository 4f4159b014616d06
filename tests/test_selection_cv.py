"""KernelFeatureSelectorCV: scikit-learn's estimator checks, the warm-started path against cold runs and
enumeration (both senses), the selection rules, determinism, meta-estimators and the plot helper."""
import warnings

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from minlp_fs import CardinalitySVC, KernelFeatureSelector, KernelFeatureSelectorCV, PaperSenseWarning, plot_cv_results
from minlp_fs.datasets import make_synthetic
from minlp_fs.estimators import _instance
from minlp_fs.methods import get_method
from minlp_fs.selection_cv import selection_path

FAST = "alpha-start"


@pytest.fixture(scope="module")
def synthetic():
    data = make_synthetic(m=80, n_informative=2, n_noise=4, seed=1)
    return data.X, data.y


@parametrize_with_checks([
    KernelFeatureSelectorCV([1, 2], cv=2, method=FAST),
    KernelFeatureSelectorCV(2, cv=2, method="ls", kernel="rbf", gamma="scale", select="1se"),
    CardinalitySVC("auto", method=FAST),
    CardinalitySVC(1, method=FAST, probability=True),
])
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)
