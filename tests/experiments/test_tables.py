"""Markdown tables from known records, with the paper's numbers beside ours."""
from minlp_fs.experiments import metrics, tables
from minlp_fs.experiments.budget import Plan
from exp_records import DEFAULTS, accuracy_records, certified_records, multistart_records, params_records


def _row(text, start):
    return next(line for line in text.splitlines() if line.startswith(start))


def test_certified_table_paper_sense_has_the_paper_numbers_beside():
    text = tables.certified_table(metrics.certified_summary(certified_records()), "paper", "poly")
    assert _row(text, "| Wholesale | ls* |") == "| Wholesale | ls* | 2 | 2.50 | 1/2 |  | 2.00 | 9 | 0.00 | 9/9 | – |"
    assert _row(text, "| Wholesale | rfe1 |") == "| Wholesale | rfe1 | 2 | 10.00 | 0/2 | 1 | 0.50 | 9 | 0.81 | 7/9 | – |"
    assert _row(text, "| **Overall** | ls* |").endswith("| 195 | 3.63 | 142/195 | 1.3 |")
    assert "trivial bound" in text and "Wholesale 1" in text


def test_certified_table_fit_sense_has_no_paper_columns():
    text = tables.certified_table(metrics.certified_summary(certified_records()), "fit", "poly")
    assert "paper" not in text.splitlines()[0]
    assert _row(text, "| Wholesale | ls* |") == "| Wholesale | ls* | 1 | 10.00 | 0/1 |  | 1.00 |"


def test_multistart_table():
    text = tables.multistart_table(metrics.multistart_summary(multistart_records()), "paper")
    assert _row(text, "| rfe2 |") == "| rfe2 | 1 | 20.00 | 0/1 | – | 1.00 | 36 | 6.23 | 12/36 | – | – |"
    assert _row(text, "| ls* |").startswith("| ls* | 2 | 0.00 | 2/2 | 15.0 |")
    assert _row(text, "| ls* |").endswith("| 36 | 0.51 | 32/36 | 6.3 | 2.1-2.9 |")


def test_multistart_by_dataset():
    text = tables.multistart_by_dataset(metrics.multistart_summary(multistart_records()), "paper")
    assert text.splitlines()[0] == ("| dataset | ls* reached (spread %) | ls* time (s) | acso* reached (spread %) "
                                    "| acso* time (s) | rfe2 reached (spread %) | rfe2 time (s) |")
    # ls*: poly3 spread 10 % (gaps 0, 5, 10), rbf spread 20 % (gaps 0, 20): both reach the best known
    assert _row(text, "| Wholesale |") == "| Wholesale | 2/2 (15.0) | 1.50 | 1/1 (0.0) | 4.00 | 0/1 (–) | 1.00 |"
    assert tables.multistart_by_dataset(metrics.multistart_summary(multistart_records()), "fit").count("\n") == 1


def test_params_table_marks_the_paper_choice_and_single():
    text = tables.params_table(metrics.params_summary(params_records(), DEFAULTS))
    assert "| ls* | refit_fraction | **0.1** | 1 | 0.00 | 40 |" in text
    assert "| ls* | refit_fraction | single | 1 | 10.00 | 8 | 1.00 | 3.00 |" in text


def test_accuracy_and_coverage_tables():
    text = tables.accuracy_table(metrics.accuracy_summary(accuracy_records()))
    assert "| Cleveland | poly2 | 5 | ls* | fit | 85.0 (5.0) | 2 | 2.00 |" in text
    plan = Plan("cleveland", 13, 297, 3, "cap", 286, 2000, 0.01, 0.002)
    rec = {"unit": {"dataset": "cleveland", "method": "enumerate"},
           "result": {"n_svm_solves": 1500, "wall_time_s": 7200.0}}
    text = tables.coverage_table([plan], [rec], n_cores=2)
    assert _row(text, "| Cleveland |") == ("| Cleveland | 13 | 297 | <u>3</u> | cap | 286 | 2,000 | 0.010 | 1,500 "
                                           "| 1.000 | 2.00 | 6 | 1,700 | 1.6e4 |")


def test_every_markdown_table_is_written_as_csv_beside_it(tmp_path):
    import csv
    md = tmp_path / "certified-quick.md"
    md.write_text("### Title\n\n- a bullet\n\n#### Sense `paper`, poly\n\n"
                  + tables.markdown(["dataset", "gap %"], [["Wholesale, 1", "2.50"], ["x \\| y", tables.NONE]])
                  + "\n\nBy dataset:\n\n" + tables.markdown(["a"], [["1"]]) + "\n")
    stale = tmp_path / "certified-quick-t9-old.csv"
    other = tmp_path / "certified-t1-kept.csv"      # another file's CSV stays
    stale.write_text("old\n")
    other.write_text("kept\n")
    paths = tables.write_table_csvs(md)
    assert [p.name for p in paths] == ["certified-quick-t1-sense-paper-poly.csv", "certified-quick-t2-by-dataset.csv"]
    with paths[0].open(newline="") as fh:
        assert list(csv.reader(fh)) == [["dataset", "gap %"], ["Wholesale, 1", "2.50"], ["x | y", tables.NONE]]
    with paths[1].open(newline="") as fh:
        assert list(csv.reader(fh)) == [["a"], ["1"]]
    assert not stale.exists() and other.read_text() == "kept\n"
