"""Every figure is written as a small PNG from known summaries."""
import pytest

from minlp_fs.experiments import figures, metrics, published
from exp_records import DEFAULTS, accuracy_records, certified_records, multistart_records, params_records

pytest.importorskip("matplotlib", reason="matplotlib (the 'plots' extra) is not installed")
PNG = b"\x89PNG\r\n\x1a\n"


def _check(path):
    data = path.read_bytes()
    assert data[:8] == PNG and 1000 < len(data) < 300_000


def test_all_figures_are_png_files(tmp_path):
    cs = metrics.certified_summary(certified_records())
    ms = metrics.multistart_summary(multistart_records())
    ps = metrics.params_summary(params_records(), DEFAULTS)
    made = [figures.cert_gap_by_B(cs, "paper", tmp_path / "a.png"),
            figures.cert_times(cs, "paper", tmp_path / "b.png"),
            figures.multistart_box(ms, "paper", tmp_path / "c.png"),
            figures.multistart_times(ms, "paper", tmp_path / "d.png"),
            figures.multistart_profiles(ms, "paper", tmp_path / "e.png"),
            figures.params_figure(ps, tmp_path / "f" / "g.png", published.PARAM_CHOICE),
            figures.accuracy_figure(metrics.accuracy_summary(accuracy_records()), tmp_path / "h.png")]
    for path in made:
        _check(path)
