"""``minlp-fs methods`` (the method catalogue), ``solvers``' demo limits, and a command line that starts
without scikit-learn or Pyomo."""
import dataclasses
import json
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import minlp_fs
from minlp_fs.catalog import _option_row, format_catalog, method_catalog
from minlp_fs.cli import main
from minlp_fs.methods import REGISTRY, method_class

ROOT = Path(__file__).resolve().parents[1]


def test_catalog_lists_every_method_with_its_options_and_defaults():
    rows = {r["name"]: r for r in method_catalog()}
    assert set(rows) == set(REGISTRY) | {"hybrid:SOLVER"}
    for name in REGISTRY:
        cls = method_class(name)
        opts = {o["name"]: o["default"] for o in rows[name]["options"]}
        assert opts == {k: d for k, (_, d) in cls.options().items()}
        assert rows[name]["summary"] and rows[name]["certifies"] == cls.certifies
    assert rows["ls*"]["aliases"] == ["ls-star"] and rows["hybrid:SOLVER"]["options"][0]["name"] == "solver"
    text = format_catalog(list(rows.values()))
    assert "ls* (alias ls-star): LS*, Algorithm 2" in text and "    refit_fraction  float = 0.1" in text


def test_option_meaning_comes_from_the_option_declaration():
    from minlp_fs.options import declared, option

    @dataclasses.dataclass
    class M:
        b: float = option(0.5, float, low=0, high=1, low_open=True, doc="share of candidates re-fitted")
        c: typing.Optional[int] = None
        d: list = dataclasses.field(default_factory=list)

    hints, specs = typing.get_type_hints(M), declared(M)
    b, c, d = (_option_row(f, hints, specs.get(f.name)) for f in dataclasses.fields(M))
    assert (b["doc"], b["accepts"], b["default"]) == ("share of candidates re-fitted", "a number in (0, 1]", 0.5)
    assert (c["doc"], c["accepts"], c["type"], c["default"]) == ("", "", "Optional[int]", None)
    assert d["default"] == []
    row = {"name": "m", "aliases": [], "summary": "M.", "options": [b, c]}
    assert "b  float = 0.5  share of candidates re-fitted; accepts a number in (0, 1]" in format_catalog([row])


def test_the_catalogue_says_what_the_checker_and_option_docs_say():
    from minlp_fs.catalog import method_catalog
    from minlp_fs.methods import method_class

    for row in method_catalog():
        if row["name"].startswith("hybrid") or not row["options"]:
            continue
        docs = method_class(row["name"]).option_docs()
        for o in row["options"]:
            if o["name"] in docs:
                assert docs[o["name"]] == (f"{o['accepts']}; {o['doc']}" if o["doc"] else o["accepts"])


def test_cli_methods_and_solvers_demo_limits(capsys):
    assert main(["methods", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["name"] for r in rows} >= {"ls*", "enumerate", "scip", "hybrid:SOLVER"}
    assert main(["methods"]) == 0 and "acso* (alias acso-star)" in capsys.readouterr().out
    assert main(["solvers", "--json"]) == 0
    limits = {r["name"]: r["demo_limit"] for r in json.loads(capsys.readouterr().out)}
    assert limits["baron"] == 50 and limits["gams-knitro"] == 300 and limits["scip"] is None


def test_package_names_resolve_on_first_use():
    assert minlp_fs.CardinalitySVC.__name__ == "CardinalitySVC" and "solve" in dir(minlp_fs)
    with pytest.raises(AttributeError, match="has no attribute 'nosuch'"):
        minlp_fs.nosuch


@pytest.mark.parametrize("verb", ["--help", "datasets", "methods", "solvers"])
def test_fast_verbs_import_neither_scikit_learn_nor_pyomo(verb):
    code = ("import sys, contextlib, io\nfrom minlp_fs.cli import main\n"
            f"with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    try:\n        main([{verb!r}])\n    except SystemExit:\n        pass\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'sklearn', 'pyomo'}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
