#!/usr/bin/env python3
"""The layout check (ctest `layout_check`, docs/architecture.md).

Fails, naming the files, when
  - a file in core/ includes app/, ImGui, GLFW, epoxy or OpenGL;
  - an include goes up the stack of rooms (core/ and app/gui/ each list theirs
    below, bottom first), or two rooms include each other;
  - two modules (a header and its .cpp) include each other, directly or round a
    longer circle;
  - a source file in core/ or app/ is over 600 lines without a comment in its
    first lines saying why ("over 600 lines: ...").

  python3 tools/check_layout.py [--root DIR]
  python3 tools/check_layout.py --self-test   # plants each violation in a copy and expects a failure
"""
import argparse
import pathlib
import re
import shutil
import sys
import tempfile

CORE_ROOMS = ["base", "model", "numerics", "training", "io", "editing", "teaching"]
GUI_ROOMS = ["platform", "gl", "state", "widgets", "panels", "labs", "shell"]
MAX_LINES = 600
LONG_FILE_REASON = re.compile(r"over 600 lines", re.I)
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)
GUI_LIBRARIES = re.compile(r"^(imgui|GLFW/|epoxy/|GL/|GLES|backends/imgui)", re.I)
SOURCE_SUFFIXES = {".cpp", ".hpp", ".h"}


def sources(root):
    for top in ("core", "app"):
        for path in sorted((root / top).rglob("*")):
            if path.suffix in SOURCE_SUFFIXES and path.is_file():
                yield path


def resolve(root, including, name):
    """The repository file a quoted include names, or None (a library header)."""
    for folder in (including.parent, root / "core", root / "app" / "gui", root / "app"):
        candidate = folder / name
        if candidate.is_file():
            return candidate.resolve()
    return None


def room_of(root, path):
    """('core', 'numerics'), ('gui', 'panels'), ('app', '') or None."""
    rel = path.relative_to(root).parts
    if rel[0] == "core" and len(rel) > 2:
        return ("core", rel[1])
    if rel[:2] == ("app", "gui") and len(rel) > 3:
        return ("gui", rel[2])
    if rel[0] == "app":
        return ("app", "")
    return None


def room_rank(room):
    kind, name = room
    if kind == "core":
        return CORE_ROOMS.index(name) if name in CORE_ROOMS else None
    if kind == "gui":
        return len(CORE_ROOMS) + GUI_ROOMS.index(name) if name in GUI_ROOMS else None
    return len(CORE_ROOMS) + len(GUI_ROOMS)  # app/ top level: the command line, above everything


def circles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def check(root):
    root = root.resolve()
    problems = []
    modules, rooms = {}, {}
    for path in sources(root):
        rel = path.relative_to(root)
        text = path.read_text(encoding="utf-8", errors="replace")
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        head = "\n".join(text.splitlines()[:10])
        if lines > MAX_LINES and not LONG_FILE_REASON.search(head):
            problems.append(f"{rel}: {lines} lines, and no comment at its top saying why it is over 600 lines")
        module = str(rel.with_suffix(""))
        here = room_of(root, path)
        for bracket, name in INCLUDE.findall(text):
            if rel.parts[0] == "core":
                if GUI_LIBRARIES.match(name) or name.startswith(("app/", "gui/")):
                    problems.append(f"{rel}: core must not include {bracket}{name} (GUI, GL or app)")
            if bracket != '"':
                continue
            target = resolve(root, path, name)
            if target is None or root not in target.parents:
                continue
            target_rel = target.relative_to(root)
            if rel.parts[0] == "core" and target_rel.parts[0] != "core":
                problems.append(f"{rel}: core must not include {target_rel}")
            target_module = str(target_rel.with_suffix(""))
            if target_module != module:
                modules.setdefault(module, set()).add(target_module)
            there = room_of(root, target)
            if here and there and here != there:
                rooms.setdefault(here, set()).add(there)
                rank_here, rank_there = room_rank(here), room_rank(there)
                if rank_here is None or rank_there is None:
                    unknown = here if rank_here is None else there
                    problems.append(f"{rel}: room {'/'.join(unknown)} is not in the list of tools/check_layout.py")
                elif rank_there > rank_here:
                    problems.append(f"{rel}: includes {name}, a room above its own ({'/'.join(here)} -> {'/'.join(there)})")
    for component in circles(rooms):
        problems.append("rooms include each other: " + " <-> ".join("/".join(r) for r in component))
    for component in circles(modules):
        problems.append("modules include each other: " + " <-> ".join(component))
    return problems


def plant(root, relative, text):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def self_test(root):
    """Each planted violation alone must make check() fail (and the clean copy pass)."""
    root = root.resolve()
    plants = {
        "core includes ImGui": [("core/base/planted.cpp", "#include <imgui.h>\n")],
        "core includes GL": [("core/base/planted.cpp", "#include <epoxy/gl.h>\n")],
        "core includes app": [("core/base/planted.cpp", '#include "panels/panels.hpp"\n')],
        "include up the stack": [("core/numerics/planted.cpp", '#include "io/session_io.hpp"\n')],
        "gui include up the stack": [("app/gui/state/planted.cpp", '#include "panels/panels.hpp"\n')],
        "module circle": [("core/base/planted_a.hpp", '#include "base/planted_b.hpp"\n'),
                          ("core/base/planted_b.cpp", '#include "base/planted_a.hpp"\n'),
                          ("core/base/planted_b.hpp", "\n")],
        "long file": [("core/base/planted.cpp", "// a long file\n" + "int x;\n" * (MAX_LINES + 1))],
    }
    failures = []
    with tempfile.TemporaryDirectory() as scratch:
        for what, files in plants.items():
            copy = pathlib.Path(scratch) / "tree"
            for top in ("core", "app"):
                shutil.copytree(root / top, copy / top)
            if check(copy):
                failures.append("the unplanted copy already fails")
            for relative, text in files:
                plant(copy, relative, text)
            if not check(copy):
                failures.append(f"planted '{what}' was not caught")
            shutil.rmtree(copy)
    for failure in failures:
        print("self-test:", failure)
    print("self-test:", "FAILED" if failures else f"every one of {len(plants)} planted violations caught")
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent.parent)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test(args.root)
    problems = check(args.root)
    for problem in problems:
        print(problem)
    print(f"layout check: {len(problems)} problem(s)" if problems else "layout check: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
