"""Reproduction of the paper's experiments (section 5, appendices app:param and app:cert).

``runner`` (resumable joblib dispatch of independent units), ``units`` (one method run),
``budget`` (B_max from an enumeration budget), ``grids`` and ``slices`` (the experiment grids and
their quick slices), ``accuracy`` (held-out CV accuracy), ``metrics`` (gaps, summaries, performance
profiles), ``tables`` and ``figures`` (the paper's layouts), ``paper`` (its published numbers),
``report`` (RESULTS.md), ``pipeline`` and ``cli`` (``minlp-fs bench``).
"""
