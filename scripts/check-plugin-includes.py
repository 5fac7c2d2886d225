#!/usr/bin/env python3
"""Fails when a plugin reaches into another plugin's folder (issue 20).

A source file under input/<p>/, process/<p>/ or output/<p>/ may include headers of its own
folder, of a shared library (<family>/common/...), of the SDK (rowprobe/...) and system
headers; never another plugin's folder or a loose header beside the plugin folders. Likewise
no CMakeLists.txt of a plugin adds an include directory inside another plugin's folder.

Usage: check-plugin-includes.py [SOURCE_DIR]   (exit 0 clean, 1 with one line per violation)
"""
import re
import sys
from pathlib import Path

FAMILIES = ("input", "process", "output")
SOURCE_SUFFIXES = {".c", ".cc", ".cpp", ".h", ".hh", ".hpp", ".inc"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
CMAKE_DIR = re.compile(r"\$\{(?:PROJECT_SOURCE_DIR|CMAKE_SOURCE_DIR)\}/([A-Za-z0-9_./-]+)")


def owner(rel: Path):
    """(family, plugin) of a path relative to the source root, or None outside plugins."""
    parts = rel.parts
    if len(parts) >= 2 and parts[0] in FAMILIES:
        return parts[0], parts[1]
    return None


def allowed(src_owner, target: Path) -> bool:
    """Whether a file of plugin `src_owner` may use `target` (relative to the root)."""
    tgt = owner(target)
    if tgt is None:
        # Outside the plugin families: only the SDK (plugins/include/rowprobe) and core are
        # public; a loose header next to the plugin folders is not.
        return not (target.parts and target.parts[0] in FAMILIES)
    if tgt[1] == "common":
        return True
    return tgt == src_owner


def check_sources(root: Path):
    problems = []
    for family in FAMILIES:
        for path in sorted((root / family).rglob("*")):
            if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
                continue
            rel = path.relative_to(root)
            src = owner(rel)
            if src is None or len(rel.parts) < 3:
                continue
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                name = m.group(1)
                if name.startswith("rowprobe/"):
                    continue
                local = (path.parent / name).resolve()
                if local.exists():
                    target = local.relative_to(root.resolve()) if local.is_relative_to(
                        root.resolve()) else None
                elif (root / name).exists():
                    target = Path(name)
                else:
                    continue  # a system or third-party header
                if target is None or not allowed(src, target):
                    problems.append(f"{rel}:{n}: includes \"{name}\" "
                                    f"(another plugin's folder; share it through "
                                    f"{src[0]}/common/ or the SDK)")
    return problems


def check_cmake(root: Path):
    problems = []
    for family in FAMILIES:
        for path in sorted((root / family).rglob("CMakeLists.txt")):
            rel = path.relative_to(root)
            src = owner(rel)
            if src is None or len(rel.parts) < 3:
                continue
            text = path.read_text(errors="replace")
            for block in re.finditer(r"target_include_directories\s*\(([^)]*)\)", text):
                for m in CMAKE_DIR.finditer(block.group(1)):
                    target = Path(m.group(1).rstrip("/"))
                    if not allowed(src, target / "x"):
                        n = text.count("\n", 0, block.start()) + 1
                        problems.append(f"{rel}:{n}: include directory {m.group(0)} is inside "
                                        f"another plugin's folder")
    return problems


def self_test() -> int:
    """The check catches each kind of violation and passes the allowed includes."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = {
            "output/a/a.cpp": '#include "a.hpp"\n#include "output/common/c.hpp"\n'
                              '#include "rowprobe/x.hpp"\n#include <vector>\n',
            "output/a/a.hpp": "",
            "output/common/c.hpp": "",
            "output/b/b.hpp": "",
            "output/loose.hpp": "",
            "output/a/bad1.cpp": '#include "output/b/b.hpp"\n',
            "output/a/bad2.cpp": '#include "../b/b.hpp"\n',
            "output/a/bad3.cpp": '#include "../loose.hpp"\n',
            "output/a/CMakeLists.txt":
                "target_include_directories(a PRIVATE ${PROJECT_SOURCE_DIR}/output/b)\n",
        }
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        found = check_sources(root) + check_cmake(root)
        expected = ["bad1.cpp", "bad2.cpp", "bad3.cpp", "CMakeLists.txt"]
        ok = len(found) == len(expected) and all(
            any(e in f for f in found) for e in expected)
        print("\n".join(found))
        print("self-test", "passed" if ok else "FAILED")
        return 0 if ok else 1


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        return self_test()
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    problems = check_sources(root) + check_cmake(root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) reach into another plugin's folder", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
