"""Reproduction of the paper's experiments (section 5, appendices app:param and app:cert).

``registry`` (the experiments, one module each: grid, unit function, renderer), ``config`` (what
``minlp-fs bench`` was asked, where its files go), ``runner`` (resumable joblib dispatch of
independent units), ``store`` (the results store: JSON lines, writer's lock, atomic side files;
the benchmark scripts use it too), ``units`` (one method run), ``budget`` (B_max from an
enumeration budget), ``grids`` and ``slices`` (the experiment grids and their quick slices),
``accuracy`` (held-out CV accuracy), ``metrics`` (gaps, summaries, performance profiles),
``tables`` and ``figures`` (the paper's layouts), ``published`` (the paper's published numbers),
``report`` (RESULTS.md), ``pipeline`` and ``cli`` (``minlp-fs bench``).
"""
