#!/usr/bin/env python3
"""Fails when a crate's modules import each other in a cycle, or a map lies (`make test`).

For every crate in the workspace it reads each module's non-test code, finds the sibling
modules it names (`crate::a`, `super::b`, `self::c`, or a bare path from a `use` of the parent),
and checks, at every level of the module tree, that the graph of siblings has no cycle. Test
code (`#[cfg(test)]` items, `tests.rs`, `tests/` directories) may reach anywhere and is skipped.
A crate root whose module map says each module "imports only modules listed after it" is
held to it. Names re-exported by a parent (`pub use engine::Handle;`) count as the module they come from.
Prints each cycle found with the files that close it.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRATE_DIRS = ["crates", "fixtures", "src-tauri"]

# A path that starts at the crate root or the parent: `crate::a::b`, `super::a`.
PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
REEXPORT = re.compile(r"^\s*pub(?:\([^)]*\))?\s+use\s+(?:self::)?([a-z_][a-z0-9_]*)::(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)", re.M)
MOD_DECL = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;", re.M)


def strip_tests(text):
    """The text without `#[cfg(test)]` items: the attribute and the braced item after it."""
    out, i = [], 0
    while True:
        j = text.find("#[cfg(test)]", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k = text.find("{", j)
        semi = text.find(";", j)
        if semi >= 0 and (k < 0 or semi < k):
            i = semi + 1  # `#[cfg(test)] mod tests;`
            continue
        depth = 0
        while k < len(text):
            if text[k] == "{":
                depth += 1
            elif text[k] == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        i = k + 1


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def module_file(directory, name):
    for candidate in (os.path.join(directory, name + ".rs"), os.path.join(directory, name, "mod.rs")):
        if os.path.exists(candidate):
            return candidate
    return None


def child_dir(path):
    """Where `path`'s own submodules live."""
    base = os.path.basename(path)
    if base in ("mod.rs", "lib.rs", "main.rs"):
        return os.path.dirname(path)
    return path[: -len(".rs")]


class Module:
    def __init__(self, path, chain):
        self.path, self.chain, self.children = path, chain, {}


def load(path, chain):
    module = Module(path, chain)
    with open(path, encoding="utf-8") as f:
        text = strip_comments(strip_tests(f.read()))
    module.text = text
    # `pub use engine::{Handle, Tidings};` at this level: `crate::Handle` names `engine`.
    module.reexports = {}
    for source, items in REEXPORT.findall(text):
        for item in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", items.split(" as ")[-1] if "{" not in items else items):
            module.reexports.setdefault(item, source)
    for name in MOD_DECL.findall(text):
        if name == "tests":
            continue
        found = module_file(child_dir(path), name)
        if found:
            module.children[name] = load(found, chain + [name])
    return module


def walk(module):
    yield module
    for child in module.children.values():
        yield from walk(child)


def names(module):
    """Absolute module chains this module's code names, resolved against its position."""
    found = set()
    for root, rest in PATH.findall(module.text):
        parts = rest.strip(":").split("::")
        if root == "crate":
            base = []
        elif root == "self":
            base = list(module.chain)
        else:
            base = list(module.chain[:-1])
            while parts and parts[0] == "super":
                parts.pop(0)
                base = base[:-1]
        found.add(tuple(base + parts))
    return found


def cycles_at(parent, modules):
    """Cycles among `parent`'s children: an edge a -> b when code under a names b."""
    children = parent.children
    edges = {name: {} for name in children}
    for name, child in children.items():
        for module in walk(child):
            for chain in names(module):
                depth = len(parent.chain)
                if len(chain) > depth and list(chain[:depth]) == parent.chain:
                    target = chain[depth]
                    target = parent.reexports.get(target, target)
                    if target in children and target != name:
                        edges[name].setdefault(target, module.path)
    found, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        stack.append(node)
        for nxt in edges[node]:
            if state.get(nxt) == "open":
                loop = stack[stack.index(nxt):] + [nxt]
                found.append([(a, b, edges[a][b]) for a, b in zip(loop, loop[1:])])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [])
    return found


def map_order_problems(root, crate):
    """A crate root whose map says "each imports only modules listed after it": is it so?"""
    with open(root, encoding="utf-8") as f:
        text = f.read()
    if "listed after it" not in text:
        return []
    order = []
    for line in re.findall(r"^//! - (.*)$", text, re.M):
        for name in re.findall(r"`([a-z_][a-z0-9_]*)`", line.split(":")[0]):
            if name in crate.children and name not in order:
                order.append(name)
    found = [f"{name} is missing from the map" for name in crate.children if name not in order]
    for name, child in crate.children.items():
        for module in walk(child):
            for chain in names(module):
                target = crate.reexports.get(chain[0], chain[0]) if chain else None
                if target in order and name in order and order.index(target) < order.index(name):
                    found.append(f"{name} imports {target}, listed before it "
                                 f"({os.path.relpath(module.path, ROOT)})")
    return sorted(set(found))


def crate_roots():
    for top in CRATE_DIRS:
        base = os.path.join(ROOT, top)
        dirs = [base] if os.path.exists(os.path.join(base, "Cargo.toml")) else [
            os.path.join(base, d) for d in sorted(os.listdir(base))
        ]
        for d in dirs:
            for root in ("src/lib.rs", "src/main.rs"):
                path = os.path.join(d, root)
                if os.path.exists(path):
                    yield path


def main():
    problems = 0
    for root in crate_roots():
        crate = load(root, [])
        for module in walk(crate):
            for cycle in cycles_at(module, None):
                problems += 1
                where = "::".join(module.chain) or os.path.relpath(root, ROOT)
                print(f"module cycle in {where}:", file=sys.stderr)
                for a, b, path in cycle:
                    print(f"  {a} -> {b}  ({os.path.relpath(path, ROOT)})", file=sys.stderr)
        for problem in map_order_problems(root, crate):
            problems += 1
            print(f"{os.path.relpath(root, ROOT)}'s module map: {problem}", file=sys.stderr)
    if problems:
        print(f"{problems} problem(s): make the imports point one way, the maps true",
              file=sys.stderr)
        return 1
    print("no module cycles; the ordered module maps hold", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
