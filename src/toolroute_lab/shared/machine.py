"""Where a run ran: the CPU type, recorded with every run and evaluation."""

from __future__ import annotations

import hashlib
import platform
from pathlib import Path


def cpu_model() -> str:
    """The CPU type: model name, family/model and a digest of the feature flags (VMs often report
    a generic name). e5-small's vectors are exact only on the same CPU type (see
    tests/integration/test_reference.py), so a run records where it ran."""
    try:
        info = {}
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "cpu family", "model", "flags") and key.strip() not in info:
                info[key.strip()] = value.strip()
        flags = hashlib.sha256(" ".join(sorted(info.get("flags", "").split())).encode()).hexdigest()[:8]
        return f"{info.get('model name', '?')} (family {info.get('cpu family', '?')} model {info.get('model', '?')}, flags {flags})"
    except OSError:
        return platform.processor() or platform.machine()
