"""The set-enumeration split partitions a node: every subset of the node is in exactly one child."""
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from minlp_fs.exact import tree


def members(fixed, free, need):
    return {tuple(sorted((*fixed, *R))) for R in itertools.combinations(free, need)}


@st.composite
def nodes(draw):
    n = draw(st.integers(1, 8))
    perm = draw(st.permutations(range(n)))
    k = draw(st.integers(0, n))
    fixed, free = tuple(sorted(perm[:k])), tuple(perm[k:])
    need = draw(st.integers(0, len(free)))
    order = draw(st.permutations(free))
    return fixed, tuple(sorted(free)), need, order


@given(nodes())
@settings(max_examples=200, deadline=None)
def test_children_partition_the_node(node):
    fixed, free, need, order = node
    if tree.is_leaf(free, need):
        assert members(fixed, free, need) == {tree.leaf_subset(fixed, free, need)}
        return
    seen = []
    for t, f_t, F_t in tree.split(fixed, free, need, order):
        assert set(f_t) == set(fixed) | {order[t]} and set(F_t) == set(order[t + 1:])
        seen.extend(members(f_t, F_t, need - 1))
    assert sorted(seen) == sorted(members(fixed, free, need))


def test_root_holds_every_B_subset():
    fixed, free, need = tree.root(6, 3)
    assert members(fixed, free, need) == set(itertools.combinations(range(6), 3))


def test_split_rejects_an_order_that_is_not_a_permutation():
    import pytest

    with pytest.raises(ValueError, match="not a permutation"):
        list(tree.split((), (0, 1, 2), 1, (0, 1, 1)))


@given(nodes())
@settings(max_examples=200, deadline=None)
def test_a_childs_universe_holds_every_later_siblings_subsets(node):
    """tree.Siblings' premise: child t's universe I + order[t:] contains every subset of each child after it."""
    fixed, free, need, order = node
    if tree.is_leaf(free, need):
        return
    children = list(tree.split(fixed, free, need, order))
    for t, f_t, F_t in children:
        assert tree.universe(f_t, F_t) == tuple(sorted((*fixed, *order[t:])))
        for _, f_l, F_l in children[t + 1:]:
            assert all(set(S) <= set(tree.universe(f_t, F_t)) for S in members(f_l, F_l, need - 1))


def test_siblings_give_their_best_universe_bound_to_later_children_only():
    siblings = tree.Siblings()
    assert siblings.bound(3) is None
    siblings.offer(1, -5.0, "alpha1")
    siblings.offer(2, -7.0, "alpha2")   # a weaker bound is not kept
    assert siblings.bound(1) is None and siblings.bound(2) == (-5.0, "alpha1") and siblings.bound(4) == (-5.0, "alpha1")
    siblings.offer(3, -2.0, "alpha3")
    assert siblings.bound(3) is None and siblings.bound(4) == (-2.0, "alpha3")   # child 3 searched out of order: none
    twin = siblings.copy()
    twin.offer(5, 0.0, "alpha5")
    assert siblings.bound(6) == (-2.0, "alpha3") and twin.bound(6) == (0.0, "alpha5")
