"""The package's modules import each other without circles: each idea lives in one module, and a module
that needs two others sits above both (e.g. ``instance.make_instance`` above ``binary.Instance`` and
``multiclass.MulticlassInstance``; ``estimators.CardinalitySVC`` above ``selector`` and ``selection_cv``).

Every import statement counts, at module level or inside a function (an import moved into a function
still ties the two modules); importing ``a.b`` also runs ``a/__init__.py`` (an edge, unless the importer
lies inside package ``a``: a package's face re-exporting its own modules is no circle).
"""
import ast
from pathlib import Path

import minlp_fs

ROOT = Path(minlp_fs.__file__).parent
#: circles other work removes (none left)
KNOWN: set = set()


def _modules() -> dict:
    """module name -> its file, for every module of the package."""
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _targets(name: str, modules: dict, importer: str) -> set:
    """The package's modules that importing ``name`` runs: it (if a module of ours) and its packages'
    ``__init__``, but not the packages that hold ``importer`` (the top package's face among them)."""
    parts = name.split(".")
    found = {".".join(parts[:k]) for k in range(1, len(parts) + 1) if ".".join(parts[:k]) in modules}
    return {m for m in found if not importer.startswith(m + ".")}


def _graph() -> dict:
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    edges |= _targets(alias.name, modules, name)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                edges |= _targets(source, modules, name)
                for alias in node.names:  # "from . import large_m": a submodule
                    edges |= _targets(f"{source}.{alias.name}", modules, name)
        edges.discard(name)
        graph[name] = edges
    return graph


def _circles(graph: dict) -> list:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_reads_the_imports():
    graph = _graph()
    assert "minlp_fs.binary" in graph["minlp_fs.instance"]
    assert "minlp_fs.multiclass.instance" in graph["minlp_fs.instance"]
    assert {"minlp_fs.selector", "minlp_fs.selection_cv"} <= graph["minlp_fs.estimators"]
    assert "minlp_fs.large_m" in graph["minlp_fs.selector"]                      # from . import large_m
    assert "minlp_fs.heuristics.starts" in graph["minlp_fs.methods"]             # an import inside a function
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]


def test_no_module_imports_itself_through_others():
    circles = [sorted(c) for c in _circles(_graph()) if c not in KNOWN]
    assert circles == []
