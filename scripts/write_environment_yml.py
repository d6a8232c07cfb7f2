"""Write environment.yml from requirements.lock so conda users install exactly the pinned set."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
pins = [line.strip() for line in (ROOT / "requirements.lock").read_text().splitlines()
        if line.strip() and not line.startswith("#")]
lines = [
    "# Generated from requirements.lock by scripts/write_environment_yml.py (make lock): do not edit by hand.",
    "name: toolroute",
    "channels:",
    "  - conda-forge",
    "dependencies:",
    "  - python=3.11",
    "  - pip",
    "  - pip:",
    *[f"      - {pin}" for pin in pins],
    "      - -e .",
]
(ROOT / "environment.yml").write_text("\n".join(lines) + "\n")
print(f"environment.yml: {len(pins)} pins")
