"""Imports inside functions hide loops between packages: allowed only with a comment saying why
(a heavy or process-local package, a per-command CLI import)."""

import ast

from toolroute.config import ROOT


def test_every_import_inside_a_function_says_why():
    silent = []
    for path in sorted((ROOT / "src" / "toolroute").rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for sub in ast.walk(node):
                    if isinstance(sub, (ast.Import, ast.ImportFrom)) and "#" not in lines[sub.end_lineno - 1]:
                        silent.append(f"{path.relative_to(ROOT)}:{sub.lineno}")
    assert silent == [], "hoist these imports to module level, or say why they are late: " + ", ".join(silent)
