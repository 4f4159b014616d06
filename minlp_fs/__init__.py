"""minlp-fs: embedded feature selection in nonlinear SVMs with an exact cardinality constraint."""
