"""What scikit-learn's estimator checks cannot pass for our estimators, with the reason (both estimator test files)."""
from minlp_fs import CardinalitySVC


def expected_check_failures(estimator) -> dict:
    """check_classifiers_train wants accuracy > 0.83 on its 3 blobs in 2 columns, which no single column
    reaches (an SVC on either alone: 0.74-0.78), so a classifier of n_features=1 cannot pass it."""
    if isinstance(estimator, CardinalitySVC) and estimator.n_features == 1:
        return {"check_classifiers_train": "no single column of the check's 3-class blobs reaches 0.83 accuracy"}
    return {}
