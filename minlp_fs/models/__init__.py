"""DFS-SVM (paper problem (4)): its one formulation per sense, written as a Pyomo model (exported to
.nl and .gms files) and as a SCIP model (:mod:`.scip_model`)."""
from .dfs_svm import (
           build_model,
           load_start,
           model_size,
           read_solution,
           solution_from_values,
)

__all__ = ["build_model", "load_start", "model_size", "read_solution",
           "solution_from_values"]
