"""The shape of the tf_scatter_ops package, from its import statements.

    .venv/bin/python tools/import_graph.py [--json] [--dot]

Prints the package's rooms (a top-level module, or a sub-package with all its
modules; with their lines), the arrows between rooms (one per importing room
and imported room, whether the import is at the top of a module or inside a
function), the floors (the longest chain of arrows, counting the rooms on it:
a room that imports no other room stands on floor 1), the cycles between
modules, and the reach-ins: one module using a `_private` name of another.
docs/architecture.md draws the result; tests/test_package_layout.py holds the
package to it.
"""

import ast
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = "tf_scatter_ops"


def modules(root=ROOT):
    found = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _resolve(name, known):
    """The package module a dotted name refers to (longest known prefix)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def analyse(root=ROOT):
    known = modules(root)
    arrows, reach_ins, lines = {}, [], {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(), str(path))
        lines[name] = len(path.read_text().splitlines())
        targets = set()
        aliases = {}  # local name -> package module
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = _resolve(alias.name, known)
                    if target and alias.name.startswith(PACKAGE):
                        targets.add(target)
                        if alias.asname:
                            aliases[alias.asname] = target
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                    and node.module.startswith(PACKAGE):
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    if full in known:  # from package import module
                        targets.add(full)
                        aliases[alias.asname or alias.name] = full
                    else:
                        target = _resolve(node.module, known)
                        targets.add(target)
                        if alias.name.startswith("_") and not alias.name.startswith("__"):
                            reach_ins.append((name, f"{target}.{alias.name}"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                reach_ins.append((name, f"{aliases[node.value.id]}.{node.attr}"))
        targets.discard(name)
        # a module's own package __init__ runs first anyway: not an arrow
        arrows[name] = sorted(t for t in targets if not name.startswith(t + ".") and t != PACKAGE
                              or t == PACKAGE and name == PACKAGE)
    return known, arrows, sorted(set(reach_ins)), lines


def _cycles(arrows):
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in arrows.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))
    sys.setrecursionlimit(10000)
    for v in arrows:
        if v not in index:
            visit(v)
    return out


def floors(arrows, cycles):
    """Floor of each module: 1 + the highest floor it imports (a cycle
    counts as one room)."""
    room = {m: m for m in arrows}
    for group in cycles:
        for m in group:
            room[m] = group[0]
    height = {}

    def of(m, seen=()):
        r = room[m]
        if r in height:
            return height[r]
        members = [x for x in arrows if room[x] == r]
        below = [room[t] for x in members for t in arrows[x] if room[t] != r]
        height[r] = 1 + max((of(t) for t in below), default=0)
        return height[r]
    return {m: of(m) for m in arrows}


def room(module):
    """tf_scatter_ops.a -> itself; tf_scatter_ops.sub.b -> tf_scatter_ops.sub."""
    return ".".join(module.split(".")[:2])


def rooms(arrows, lines):
    """(arrows between rooms, lines per room)."""
    between, size = {}, {}
    for m, targets in arrows.items():
        between.setdefault(room(m), set()).update(room(t) for t in targets if room(t) != room(m))
        size[room(m)] = size.get(room(m), 0) + lines[m]
    return {r: sorted(t) for r, t in between.items()}, size


def main():
    known, module_arrows, reach_ins, module_lines = analyse()
    cycles = _cycles(module_arrows)
    arrows, lines = rooms(module_arrows, module_lines)
    floor = floors(arrows, _cycles(arrows))
    summary = {
        "modules": len(known),
        "rooms": len(arrows),
        "lines": sum(lines.values()),
        "arrows": sum(len(v) for v in arrows.values()),
        "floors": max(floor.values()),
        "floors_without_init": max(f for m, f in floor.items() if m != PACKAGE),
        "cycles": cycles,
        "reach_ins": len(reach_ins),
    }
    if "--json" in sys.argv:
        print(json.dumps({"summary": summary, "arrows": arrows, "floor": floor,
                          "reach_ins": reach_ins, "lines": lines}, indent=1))
        return
    if "--dot" in sys.argv:
        print("digraph tf_scatter_ops {\n  rankdir=BT;")
        for m, targets in arrows.items():
            for t in targets:
                print(f'  "{m}" -> "{t}";')
        print("}")
        return
    for f in sorted(set(floor.values()), reverse=True):
        print(f"floor {f:2}: " + ", ".join(
            f"{m.replace(PACKAGE + '.', '')} ({lines[m]})" for m in sorted(floor) if floor[m] == f))
    print()
    for key, value in summary.items():
        print(f"{key}: {value}")
    for who, what in reach_ins:
        print(f"  reach-in: {who} uses {what}")


if __name__ == "__main__":
    main()
