"""Unit functions that fail the way a run can fail (importable by loky's worker processes)."""
import os
import signal


def exit_on_two(unit):
    """The worker process dies in the middle of unit 2 (as if killed by the OOM killer)."""
    if unit["x"] == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return {"y": unit["x"] ** 2}
