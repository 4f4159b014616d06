"""Reproduce the paper's experiments: ``python benchmarks/run_experiments.py certified|multistart|params|accuracy``.

Same flags as ``minlp-fs bench`` (``--quick``, ``--data-dir``, ``--jobs``, ``--backend loky|dask|ray``,
``--scheduler``, ``--out``, ``--sense paper|fit|both``, ...); writes benchmarks/raw/, tables/, figures/
and the experiments section of benchmarks/RESULTS.md.
"""
import sys

from minlp_fs.experiments.cli import main

if __name__ == "__main__":
    sys.exit(main())
