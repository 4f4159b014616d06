"""The README is the contract: its Python blocks run as written (on scikit-learn's built-in sets)."""
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_the_api_tour_and_the_estimator_examples():
    assert len(BLOCKS) == 4


@pytest.mark.parametrize("block", BLOCKS, ids=["api", "estimator", "estimator-cv", "multiclass"])
def test_readme_python_block_runs(block, capsys, tmp_path, monkeypatch):
    if "plot_cv_results" in block:
        pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)                           # files a block writes (its plot) stay out of the tree
    exec(compile(block, str(README), "exec"), {"__name__": "readme"})
    assert capsys.readouterr().out.strip()
