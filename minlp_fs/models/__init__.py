"""Pyomo models of DFS-SVM (paper problem (4)) and their export to .nl and .gms files."""
from .dfs_svm import (
           build_model,
           load_start,
           model_size,
           read_solution,
           solution_from_values,
)

__all__ = ["build_model", "load_start", "model_size", "read_solution",
           "solution_from_values"]
