#!/usr/bin/env python3
"""The house rules of ARCHITECTURE.md, checked from the code: which room each crate may import
(arrows point down only), no circle of files importing each other inside a crate, no source file
over 800 lines. Prints every breach and exits 1 if there is one.

Usage: python3 tests/house.py [REPO]   (needs cargo, for `cargo metadata`; builds nothing)
"""

import collections
import fnmatch
import json
import os
import pathlib
import re
import subprocess
import sys

# A crate's directory (glob) -> the directories (globs) of the workspace crates it may import.
# Order does not matter; every workspace crate must match exactly one row.
ROOMS = [
    ("sdk", []),
    ("extensions/ros2", []),
    # The learning tasks' observations and rewards: pure functions, for the batch and plugins.
    ("tasks", []),
    ("core", ["sdk"]),
    ("engines/rapier", ["core"]),
    ("engines/kinematic", ["core"]),
    ("engines/planar", ["core"]),
    ("engines/view", ["core", "sdk"]),
    ("engines/builtin", ["core", "engines/rapier", "engines/kinematic", "engines/planar"]),
    ("artifacts", ["core", "sdk"]),
    # Plugins: the SDK only (the Zenoh extension also speaks ROS 2's wire format).
    # (Every driver but the policy driver, whose row follows.)
    ("drivers/[!p]*", ["sdk"]),
    # The policy driver builds each agent's observation with the tasks' own code.
    ("drivers/policy", ["sdk", "tasks"]),
    ("sensors/*", ["sdk"]),
    ("extensions/explore", ["sdk"]),
    ("extensions/zenoh", ["sdk", "extensions/ros2"]),
    ("extensions/zenoh/client-rs", []),
    ("tests/fixtures/rust", ["sdk"]),
    # Above the engines and the extensions: worlds in one program.
    ("worlds", ["core", "sdk", "tasks", "artifacts", "engines/*", "extensions/zenoh"]),
    # The programs.
    (".", ["core", "sdk", "artifacts", "engines/*", "worlds", "tests"]),
    ("python", ["core", "sdk", "artifacts", "engines/*", "worlds", "extensions/zenoh"]),
    ("tests", ["core", "sdk", "artifacts", "engines/*", "worlds", "drivers/quadrotor", "extensions/ros2"]),
]
MAX_LINES = 800
# Whole on purpose: the header's source, in the header's order (ARCHITECTURE.md).
LONG_ALLOWED = {"sdk/src/abi.rs"}
SKIP_DIRS = {"target", "vendor", "node_modules", ".git"}


def room_of(path):
    rows = [r for r in ROOMS if fnmatch.fnmatchcase(path, r[0])]
    return rows[0] if len(rows) == 1 else None


def rooms(repo):
    out = subprocess.run(
        ["cargo", "metadata", "--no-deps", "--format-version", "1", "--offline"],
        cwd=repo, capture_output=True, text=True, check=True,
    ).stdout
    meta = json.loads(out)
    root = meta["workspace_root"]
    dirs = {p["name"]: os.path.relpath(os.path.dirname(p["manifest_path"]), root) for p in meta["packages"]}
    breaches = []
    for p in meta["packages"]:
        me = dirs[p["name"]]
        row = room_of(me)
        if row is None:
            breaches.append(f"room: {me} is in no room of tests/house.py's ROOMS (or in two)")
            continue
        for d in p["dependencies"]:
            if d["name"] not in dirs:
                continue
            to = dirs[d["name"]]
            if not any(fnmatch.fnmatchcase(to, allowed) for allowed in row[1]):
                breaches.append(f"room: {me} imports {to} ({d['name']}), not a room below it")
    return breaches, [pathlib.Path(repo, d) for d in dirs.values()]


def module_of(src, f):
    parts = list(f.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return tuple(parts)


def references(text, me):
    """The module paths a file names through `crate::` and `super::`, comments and test modules
    left out."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.split(r"#\[cfg\(test\)\]\s*mod tests", text)[0]
    refs = set()
    for m in re.finditer(r"crate::([a-z_0-9]+(?:::[a-z_0-9]+)*)", text):
        refs.add(tuple(m.group(1).split("::")))
    for m in re.finditer(r"crate::\{([^}]*)\}", text):
        refs.update(tuple(i.strip().split("::")) for i in m.group(1).split(",") if i.strip())
    # `super` of a mod.rs or of a file module is its parent module.
    parent = me[:-1]
    for m in re.finditer(r"\bsuper::([a-z_0-9]+(?:::[a-z_0-9]+)*)", text):
        refs.add(parent + tuple(m.group(1).split("::")))
    for m in re.finditer(r"\bsuper::\{([^}]*)\}", text):
        refs.update(parent + tuple(i.strip().split("::")) for i in m.group(1).split(",") if i.strip())
    return refs


def circles(crate):
    src = crate / "src"
    if not src.is_dir():
        return []
    files = [f for f in src.rglob("*.rs") if not SKIP_DIRS & set(f.parts)]
    mods = {module_of(src, f): f for f in files}
    edges = collections.defaultdict(set)
    for me, f in mods.items():
        for r in references(f.read_text(), me):
            for k in range(len(r), 0, -1):
                if r[:k] in mods:
                    if r[:k] != me:
                        edges[me].add(r[:k])
                    break
    # Tarjan's strongly connected components.
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(str(mods[c]) for c in comp))

    for v in list(mods):
        if v not in index:
            visit(v)
    return [f"circle: {' <-> '.join(c)}" for c in found]


def lengths(repo):
    out = []
    for f in pathlib.Path(repo).rglob("*.rs"):
        rel = f.relative_to(repo)
        if SKIP_DIRS & set(rel.parts) or str(rel) in LONG_ALLOWED:
            continue
        n = sum(1 for _ in f.open(encoding="utf-8"))
        if n > MAX_LINES:
            out.append(f"long: {rel} has {n} lines (at most {MAX_LINES})")
    return out


def main():
    repo = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent).resolve()
    breaches, crates = rooms(repo)
    for c in crates:
        breaches += [b.replace(str(repo) + "/", "") for b in circles(c)]
    breaches += lengths(repo)
    for b in breaches:
        print(b)
    print(f"house: {len(breaches)} breaches")
    sys.exit(1 if breaches else 0)


if __name__ == "__main__":
    main()
