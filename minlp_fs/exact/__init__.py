"""Exact certification by branch-and-bound: proven bounds, the search tree, certificates (issue 12)."""
