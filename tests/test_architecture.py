"""The rules of the house, read from the source text of ``src/repetend``.

Every check is pure AST/text reading (nothing is imported, no network), so it runs
in well under a second and works whatever the modules are called:

* no import cycle among the top-level packages and modules of ``repetend``
  (``phrases``, ``neardup``, ``scan``, ``_atomic``…; a subpackage belongs to its
  top-level package);
* no import cycle between modules;
* the library never imports the command line (``repetend.cli``);
* no module imports a leading-underscore name or module from another top-level
  package (the shared base modules in :data:`BASE_MODULES` excepted);
* no source-numbering ("seed 000") in ``src/``, no test file named for when or
  who ("session", "review").

Every import counts: at module level or inside a function, absolute or
relative, ``import a.b`` or ``from .a import b``, and ``importlib.import_module``
with a constant name.  The checker itself is tested on small trees built in
``tmp_path`` (the ``test_checker_*`` tests at the end).  docs/architecture.md
describes the layers these rules protect.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = "repetend"

#: Top-level modules every package may use, private names included in their module
#: path: the shared base layer (atomic writes, numba set-up, memory limits, spilling,
#: array helpers, hashing, searching, progress bars).
BASE_MODULES = frozenset({"_atomic", "_jit", "_memory", "_spill", "_arrays", "_hashing",
                          "_search", "_progress", "_compile_notice"})

#: Modules above the command line: ``python -m repetend`` has to live outside ``cli/``.
ENTRY_POINTS = frozenset({"__main__"})

#: "seed 000", "seeds 001, 003", "seed-004": sources are cited by name (docs/references.md).
SOURCE_NUMBER = re.compile(r"\bseeds?[ -]?0\d\d", re.IGNORECASE)

#: Test file names that say when or who instead of what.
WHEN_OR_WHO = ("session", "review")


# ---------------------------------------------------------------------------
# the checker
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Edge:
    """One import: module ``src`` imports module ``dst`` (names ``names`` from it)."""

    src: str
    dst: str
    names: tuple[str, ...]
    line: int
    text: str

    def where(self, graph: ImportGraph) -> str:
        """``path:line  statement`` of this import."""
        path = graph.paths[self.src].relative_to(graph.root.parent)
        return f"{path}:{self.line}  {self.text}"


@dataclass
class ImportGraph:
    """The modules of one package on disk and every import between them."""

    root: Path                      # the package directory (…/src/repetend)
    name: str                       # its import name (repetend)
    paths: dict[str, Path] = field(default_factory=dict)      # dotted name -> file
    packages: set[str] = field(default_factory=set)           # dotted names of packages
    edges: list[Edge] = field(default_factory=list)

    # -- names ---------------------------------------------------------------
    def top(self, module: str) -> str:
        """The top-level package or module of ``module`` (``repetend.phrases.x`` -> ``phrases``).

        The root package's ``__init__`` is ``""``.
        """
        parts = module.split(".")
        return parts[1] if len(parts) > 1 else ""

    def ancestors(self, module: str) -> set[str]:
        """The packages whose ``__init__`` runs before ``module`` (its own included)."""
        parts = module.split(".")
        out = {".".join(parts[:i]) for i in range(1, len(parts))}
        if module in self.packages:
            out.discard(module)
        return out

    def resolve(self, dotted: str) -> str | None:
        """The longest known module that ``dotted`` names or lies inside."""
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            cand = ".".join(parts[:i])
            if cand in self.paths:
                return cand
        return None


def _module_name(pkg_root: Path, name: str, path: Path) -> str:
    rel = path.relative_to(pkg_root).with_suffix("")
    parts = [name, *rel.parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _statement(source_lines: list[str], node: ast.AST) -> str:
    return " ".join(source_lines[node.lineno - 1].split())


def build_graph(pkg_root: Path, name: str | None = None) -> ImportGraph:
    """Read every ``*.py`` under ``pkg_root`` and every import between its modules."""
    pkg_root = Path(pkg_root)
    name = name or pkg_root.name
    g = ImportGraph(pkg_root, name)
    files = sorted(p for p in pkg_root.rglob("*.py") if "__pycache__" not in p.parts)
    for p in files:
        mod = _module_name(pkg_root, name, p)
        g.paths[mod] = p
        if p.name == "__init__.py":
            g.packages.add(mod)
    for mod, p in sorted(g.paths.items()):
        text = p.read_text(encoding="utf-8")
        lines = text.splitlines()
        tree = ast.parse(text, filename=str(p))
        # the package a relative import starts from
        here = mod if mod in g.packages else mod.rpartition(".")[0]
        for node in ast.walk(tree):
            targets: list[tuple[str, tuple[str, ...]]] = []
            if isinstance(node, ast.Import):
                targets = [(a.name, ()) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base_parts = here.split(".")
                    if node.level > 1:
                        base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                    base = ".".join(base_parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                names_from_base = []
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    if a.name != "*" and sub in g.paths:
                        targets.append((sub, ()))          # from pkg import module
                    else:
                        names_from_base.append(a.name)     # from module import name
                if names_from_base:
                    targets.append((base, tuple(names_from_base)))
            elif (isinstance(node, ast.Call) and node.args
                  and isinstance(node.args[0], ast.Constant)
                  and isinstance(node.args[0].value, str)
                  and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                       or (isinstance(node.func, ast.Name)
                           and node.func.id in ("import_module", "__import__")))):
                targets = [(node.args[0].value, ())]
            if not targets:
                continue
            for dotted, names in targets:
                if dotted != name and not dotted.startswith(name + "."):
                    continue
                dst = g.resolve(dotted)
                if dst is None:
                    continue
                if dotted != dst and not names:
                    # ``import a.b._c`` where _c is not a file: keep the name it reaches
                    names = (dotted[len(dst) + 1:].split(".")[0],)
                g.edges.append(Edge(mod, dst, tuple(names), node.lineno, _statement(lines, node)))
    return g


def _sccs(nodes: list[str], succ: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(succ.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(succ.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    out.append(sorted(comp))
    return out


def _shortest_cycle(comp: list[str], succ: dict[str, set[str]]) -> list[str]:
    """A shortest cycle through the first node of a strongly connected component."""
    start, inside = comp[0], set(comp)
    prev: dict[str, str] = {}
    frontier, seen = [start], {start}
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(succ.get(v, ())):
                if w not in inside:
                    continue
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if w not in seen:
                    seen.add(w)
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return [start, start]


def _cycles(edges: dict[tuple[str, str], list[Edge]], graph: ImportGraph) -> list[str]:
    succ: dict[str, set[str]] = {}
    for a, b in edges:
        succ.setdefault(a, set()).add(b)
    nodes = sorted({n for e in edges for n in e})
    msgs = []
    for comp in _sccs(nodes, succ):
        if len(comp) == 1 and comp[0] not in succ.get(comp[0], ()):
            continue
        cyc = _shortest_cycle(comp, succ)
        lines = [f"import cycle: {' -> '.join(cyc)}"
                 + (f"  (component: {', '.join(comp)})" if len(comp) > len(cyc) - 1 else "")]
        for a, b in zip(cyc, cyc[1:]):
            first = sorted(edges[(a, b)], key=lambda e: (e.src, e.line))[0]
            more = len(edges[(a, b)]) - 1
            lines.append(f"    {a} -> {b}: {first.where(graph)}"
                         + (f"  (+{more} more)" if more else ""))
        msgs.append("\n".join(lines))
    return msgs


def package_cycles(graph: ImportGraph) -> list[str]:
    """Cycles among the top-level packages/modules, each with one import per arrow."""
    edges: dict[tuple[str, str], list[Edge]] = {}
    for e in graph.edges:
        a, b = graph.top(e.src), graph.top(e.dst)
        if a and b and a != b:
            edges.setdefault((a, b), []).append(e)
    return _cycles(edges, graph)


def module_cycles(graph: ImportGraph) -> list[str]:
    """Cycles between modules (an import of one's own package ``__init__`` not counted)."""
    edges: dict[tuple[str, str], list[Edge]] = {}
    for e in graph.edges:
        if e.src == e.dst or e.dst in graph.ancestors(e.src):
            continue
        edges.setdefault((e.src, e.dst), []).append(e)
    return _cycles(edges, graph)


def cli_imports(graph: ImportGraph, cli: str = "cli",
                entry_points: frozenset[str] = ENTRY_POINTS) -> list[str]:
    """Imports of ``<package>.<cli>`` from modules outside it (entry points excepted)."""
    msgs = []
    for e in graph.edges:
        if graph.top(e.dst) == cli and graph.top(e.src) not in (cli, *entry_points):
            msgs.append(f"{e.src} imports the command line ({e.dst}): {e.where(graph)}")
    return msgs


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(graph: ImportGraph, base: frozenset[str] = BASE_MODULES) -> list[str]:
    """Leading-underscore names or modules imported from another top-level package."""
    msgs = []
    for e in graph.edges:
        a, b = graph.top(e.src), graph.top(e.dst)
        if a == b:
            continue
        inner = e.dst.split(".")[1:]          # top-level name and the modules below it
        if b in base:
            inner = inner[1:]                 # a base module itself is public to all
        bad = [p for p in inner if _private(p)] + [n for n in e.names if _private(n)]
        if bad:
            msgs.append(f"{e.src} imports {', '.join(bad)} from {e.dst}: {e.where(graph)}")
    return msgs


def source_numbers(src: Path) -> list[str]:
    """Lines under ``src`` that number a source ("seed 000") instead of naming it."""
    msgs = []
    for p in sorted(src.rglob("*")):
        if not p.is_file() or "__pycache__" in p.parts or p.suffix in (".pyc", ".so"):
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for i, line in enumerate(text.splitlines(), 1):
            if SOURCE_NUMBER.search(line):
                msgs.append(f"{p.relative_to(src.parent)}:{i}: {line.strip()}")
    return msgs


def when_or_who_tests(tests: Path) -> list[str]:
    """Test files whose name says when or who ("session", "review")."""
    return [p.name for p in sorted(tests.glob("*.py"))
            if any(w in p.name.lower() for w in WHEN_OR_WHO)]


def _report(title: str, msgs: list[str]) -> str:
    return f"{title} ({len(msgs)}):\n" + "\n".join(msgs)


# ---------------------------------------------------------------------------
# the rules, on src/repetend
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def graph() -> ImportGraph:
    return build_graph(SRC / PACKAGE, PACKAGE)


def test_no_cycle_between_top_level_packages(graph):
    msgs = package_cycles(graph)
    assert not msgs, _report("cycles between top-level packages", msgs)


def test_no_cycle_between_modules(graph):
    msgs = module_cycles(graph)
    assert not msgs, _report("cycles between modules", msgs)


def test_library_never_imports_the_cli(graph):
    msgs = cli_imports(graph)
    assert not msgs, _report("library modules importing repetend.cli", msgs)


def test_no_private_name_crosses_a_package(graph):
    msgs = private_imports(graph)
    assert not msgs, _report("private names imported from another top-level package", msgs)


def test_sources_are_named_not_numbered():
    msgs = source_numbers(SRC)
    assert not msgs, _report('"seed 00N" in src/ (cite the source, docs/references.md)', msgs)


def test_test_files_say_what_they_test():
    names = when_or_who_tests(ROOT / "tests")
    assert not names, _report("test files named for when or who", names)


def test_graph_reads_the_whole_package(graph):
    # a checker that silently reads nothing would pass every rule
    assert f"{PACKAGE}.cli" in graph.packages
    assert len(graph.paths) > 50 and len(graph.edges) > 100


# ---------------------------------------------------------------------------
# the checker itself, on small trees
# ---------------------------------------------------------------------------

def _tree(tmp_path: Path, files: dict[str, str]) -> ImportGraph:
    root = tmp_path / "pkg"
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return build_graph(root, "pkg")


CLEAN = {
    "__init__.py": "from .core import api\nfrom .core.api import run\n",
    "__main__.py": "from pkg.cli import main\nmain()\n",
    "_base.py": "def _helper():\n    pass\n",
    "core/__init__.py": "from .api import run\n__all__ = ['run']\n",
    "core/api.py": ("from .. import _base\nfrom ._kernels import _fast\n"
                    "from . import _kernels as K\nimport pkg.core\n\n"
                    "def run():\n    from pkg.core import _kernels\n    return _fast()\n"),
    "core/_kernels.py": "def _fast():\n    return 1\n",
    "core/sub/__init__.py": "",
    "core/sub/deep.py": "from ...core import api\nfrom ... import _base\n",
    "report.py": "from .core import run\n",
    "cli/__init__.py": "from ..report import run\n\ndef main():\n    pass\n",
    "cli/_common.py": "",
}


def test_checker_passes_a_clean_tree(tmp_path):
    g = _tree(tmp_path, CLEAN)
    assert package_cycles(g) == []
    assert module_cycles(g) == []
    assert cli_imports(g) == []
    assert private_imports(g, frozenset({"_base"})) == []
    # relative imports resolve to modules, names to their module
    pairs = {(e.src, e.dst) for e in g.edges}
    assert ("pkg.core.sub.deep", "pkg.core.api") in pairs
    assert ("pkg.core.sub.deep", "pkg._base") in pairs
    assert ("pkg.core.api", "pkg.core._kernels") in pairs
    assert ("pkg.cli", "pkg.report") in pairs


def test_checker_finds_a_package_cycle_inside_a_function(tmp_path):
    g = _tree(tmp_path, {**CLEAN, "report.py": (
        "from .core import run\n\ndef f():\n    from .cli import main\n")})
    msgs = package_cycles(g)
    assert len(msgs) == 1 and "cli -> report -> cli" in msgs[0]
    assert "pkg/report.py:4" in msgs[0]
    assert cli_imports(g) and "pkg.report imports the command line" in cli_imports(g)[0]


def test_checker_counts_subpackages_in_their_top_level_package(tmp_path):
    g = _tree(tmp_path, {**CLEAN, "core/sub/deep.py": "import pkg.report\n"})
    msgs = package_cycles(g)
    assert len(msgs) == 1 and "core -> report -> core" in msgs[0]


def test_checker_finds_a_module_cycle_and_skips_own_package(tmp_path):
    g = _tree(tmp_path, {**CLEAN, "core/_kernels.py": (
        "import pkg.core\nfrom . import api as A\n\ndef _fast():\n    return 1\n")})
    assert package_cycles(g) == []
    msgs = module_cycles(g)
    assert len(msgs) == 1
    assert "pkg.core._kernels -> pkg.core.api -> pkg.core._kernels" in msgs[0]
    assert "pkg.core -" not in msgs[0].splitlines()[0]   # own __init__ not counted


def test_checker_finds_private_imports_across_packages(tmp_path):
    g = _tree(tmp_path, {**CLEAN,
                         "report.py": "from .core._kernels import _fast\nfrom .cli import _common\n",
                         "core/sub/deep.py": "from ..._base import _helper\n"})
    msgs = private_imports(g, frozenset({"_base"}))
    assert any("pkg.report imports _kernels, _fast from pkg.core._kernels" in m for m in msgs)
    assert any("pkg.report imports _common from pkg.cli._common" in m for m in msgs)
    assert any("pkg.core.sub.deep imports _helper from pkg._base" in m for m in msgs)
    assert len(msgs) == 3
    # without the base-module allowance, importing the module _base is private too
    assert len(private_imports(_tree(tmp_path / "b", CLEAN), frozenset())) >= 2


def test_checker_follows_import_module_with_a_constant(tmp_path):
    g = _tree(tmp_path, {**CLEAN, "core/api.py": (
        "import importlib\n\ndef run():\n    return importlib.import_module('pkg.cli')\n")})
    assert cli_imports(g) and "pkg.core.api imports the command line (pkg.cli)" in cli_imports(g)[0]


def test_checker_text_rules(tmp_path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "a.py").write_text('"""As in seed 000, part 4; seeds 001/003."""\n'
                                      "rng = make(seed=3)  # a random seed is fine\n")
    (src / "pkg" / "b.py").write_text('"""The BloomSpan paper, §4."""\n')
    assert source_numbers(src) == ['src/pkg/a.py:1: """As in seed 000, part 4; seeds 001/003."""']
    tests = tmp_path / "tests"
    tests.mkdir()
    for n in ("test_store.py", "test_review_kernels.py", "test_x_session3.py"):
        (tests / n).write_text("")
    assert when_or_who_tests(tests) == ["test_review_kernels.py", "test_x_session3.py"]
