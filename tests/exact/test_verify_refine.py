"""The verifier refines (solves exactly) only the probes an open child's bound reads: the same verdicts as
refining every probe of the node, on the certificates bnb writes and on weakened and tampered ones."""
import copy

import pytest

from minlp_fs.api import solve
from minlp_fs.exact import certificate
from minlp_fs.exact.certificate import _to_refine, load, verify

from bnb_helpers import random_instance


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    """Paper-sense certificates (the probes' sense) as written, with every alpha scaled by 0.01 (useless
    cheap bounds: refinements everywhere), without alphas (version 1) and tampered."""
    out = {}
    for kernel, (seed, m, n, B) in [("poly2", (8, 40, 9, 4)), ("poly2", (4, 30, 7, 3)), ("poly3", (4, 30, 7, 3)),
                                    ("poly5", (4, 30, 7, 3))]:
        path = tmp_path_factory.mktemp("cert") / "proof.json"
        solve(random_instance(seed, m, n, B, kernel, "paper"), "bnb", incumbent="none", certificate=str(path))
        doc = load(path)
        weak, old, better = copy.deepcopy(doc), copy.deepcopy(doc), copy.deepcopy(doc)
        for rec in weak["nodes"]:
            alphas = [p[3] for p in rec.get("probes", [])] + ([rec["alpha"]] if rec["kind"] == "leaf" else [])
            for a in filter(None, alphas):
                a["value"] = [0.01 * v for v in a["value"]]
        old["version"] = 1
        old["claim"].pop("alpha")
        for rec in old["nodes"]:
            rec.pop("alpha", None)
            for p in rec.get("probes", []):
                del p[3:]
        better["claim"]["value"] -= 1e-3 * max(1.0, abs(better["claim"]["value"]))
        name = f"{kernel}-{seed}"
        out.update({f"{name} as written": doc, f"{name} weakened": weak, f"{name} version 1": old,
                    f"{name} claims better": better})
    return out


def test_only_the_probes_read_by_open_children_and_below_target():
    order, target = [4, 1, 7, 2], 0.0
    scores = {4: -1.0, 1: 0.5, 7: -2.0, 2: None}
    assert _to_refine(order, scores, 0, target) == [4, 7, 2]
    assert _to_refine(order, scores, 2, target) == [7, 2]     # children 0, 1 closed: order[:2] is read by them alone


def test_same_verdicts_as_refining_every_probe(documents, monkeypatch):
    ours = {name: verify(doc) for name, doc in documents.items()}
    monkeypatch.setattr(certificate, "_to_refine", lambda order, scores, first, target: list(order))
    every = {name: verify(doc) for name, doc in documents.items()}
    saved = 0
    for name, verdict in ours.items():
        other = every[name]
        assert (verdict.proven, verdict.reason, verdict.n_closed, verdict.n_cheap) == \
            (other.proven, other.reason, other.n_closed, other.n_cheap), name
        assert verdict.proven == ("claims better" not in name), name
        assert verdict.n_qps <= other.n_qps, name
        saved += other.n_qps - verdict.n_qps
    assert saved > 0     # the weakened and version-1 certificates refine fewer probes


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_a_probe_alpha_whose_bound_overflows_cannot_close_a_child():
    """A forged paper-sense certificate: three probes with their optimal alphas, one with a finite but huge
    alpha (1e308 on two rows of opposite labels) whose weak-duality bound overflows to NaN. A NaN score once
    made sorted() return an unsorted list and the probe bound close the child holding {1, 2}, better than the
    claimed {2, 3}; the verifier now solves such a probe and finds that subset. (Since alphas are clipped into [0, C]
    before the bound, the poison's bound is finite and weak instead: it closes nothing either.)"""
    import itertools

    import numpy as np

    from minlp_fs.alpha import AlphaSubproblem
    from minlp_fs.exact.certificate import Recorder

    inst = random_instance(0, 24, 4, 2, "poly2", "paper")
    oracle = AlphaSubproblem(inst, tol=1e-10)
    single = {j: oracle.solve_gram(inst.kernel.gram(inst.X, [j]))[0] for j in range(4)}
    pairs = {S: oracle.solve(S) for S in itertools.combinations(range(4), 2)}
    claim = pairs[(2, 3)]
    assert pairs[(1, 2)].value < claim.value - 1.0     # the forged claim is wrong
    poison = np.zeros(inst.m)
    poison[[int(np.flatnonzero(inst.y > 0)[0]), int(np.flatnonzero(inst.y < 0)[0])]] = 1e308
    order = [1, 0, 3, 2]
    rec = Recorder(inst)
    rec.probes((), tuple(range(4)), 2, order, dict.fromkeys(order), {j: 0.0 for j in order},
               {1: single[1], 0: single[0], 3: poison, 2: single[2]})
    rec.leaf((2, 3), claim.value, claim.alpha)

    class Incumbent:
        subset, value, alpha = claim.subset, claim.value, claim.alpha

    verdict = verify(rec.document(Incumbent, True, claim.value))
    assert not verdict.proven
    bound = certificate.score_bound(inst, (3,), poison)
    assert bound is not None and bound <= oracle.solve((3,)).value + 1e-9 * max(1.0, abs(bound))
