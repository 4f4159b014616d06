"""The README is the contract: its Python blocks run as written (on the built-in BCD set)."""
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_the_api_tour_and_the_estimator_example():
    assert len(BLOCKS) == 2


@pytest.mark.parametrize("block", BLOCKS, ids=["api", "estimator"])
def test_readme_python_block_runs(block, capsys):
    exec(compile(block, str(README), "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out.strip()
