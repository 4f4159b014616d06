"""Small synthetic instances for the tests: one builder, each test module fixing its own sizes with a partial.

(``tests/`` is on sys.path through its conftest, so any test module can ``from builders import ...``.)
"""
from minlp_fs.datasets import make_synthetic
from minlp_fs.instance import make_instance


def synthetic_instance(kernel="poly2", sense="paper", *, m=12, n_informative=2, n_noise=2, B=2, C=10.0,
                       data_seed=0, name="small", **instance_options):
    """``make_synthetic(m, n_informative, n_noise, seed=data_seed)`` as an instance with B, kernel, C, sense;
    ``instance_options`` go to :func:`~minlp_fs.instance.make_instance` (e.g. ``m=`` rows drawn with ``seed=``)
    after the data rows: pass the generated size as ``m`` and a drawn subsample as ``rows``."""
    d = make_synthetic(m, n_informative, n_noise, seed=data_seed)
    rows = instance_options.pop("rows", None)
    return make_instance(d.X, d.y, B=B, kernel=kernel, C=C, sense=sense, name=name, m=rows, **instance_options)
