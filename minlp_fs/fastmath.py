"""Compiler flags shared by the compiled sums that may round differently from the plain formula.

fastmath lets LLVM reassociate sums and fuse multiply-adds (differences of a few ulps). Only those flags:
no "nnan"/"ninf", so an overflow still reaches the callers' finiteness checks as inf or NaN. Used where a
value is a warm start or a screening score whose winner is re-evaluated by the one objective
(:mod:`minlp_fs.objective`), never for a value that is reported as is.
"""

FASTMATH = {"reassoc", "contract", "nsz", "arcp"}
