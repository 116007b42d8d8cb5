"""A PEP 517 build backend written with the standard library, so that ``pip install clients/python`` works with
no network (no setuptools to download) and ``npm run build`` can make the wheel the server hands out.

It builds a pure-Python wheel (PEP 427: a zip of the package and a ``.dist-info`` with METADATA, WHEEL, RECORD
and the LICENSE) and an sdist of the tree. Its input is ``pyproject.toml``'s ``[project]`` table, read with
a small parser (``tomllib`` is 3.11+; Python 3.9 must build this too) that accepts what that file holds.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import time
import zipfile
from pathlib import Path
from typing import Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "promptstore"
#: Zip entries need a date; a fixed one (or SOURCE_DATE_EPOCH) makes the same tree build the same bytes.
DATE = time.gmtime(int(os.environ.get("SOURCE_DATE_EPOCH", "315532800")))[:6]


def project() -> Dict[str, object]:
    """``[project]`` of pyproject.toml: strings, string lists and inline ``{ text = ... }`` tables."""
    text = (ROOT / "pyproject.toml").read_text("utf-8")
    section = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if section is None:
        raise RuntimeError("pyproject.toml has no [project] table")
    fields: Dict[str, object] = {}
    for match in re.finditer(r'^(\w[\w-]*)\s*=\s*(\[.*?\]|\{.*?\}|"[^"]*")\s*$', section.group(1), re.M | re.S):
        name, value = match.group(1), match.group(2)
        if value.startswith("["):
            fields[name] = re.findall(r'"([^"]*)"', value)
        elif value.startswith("{"):
            inner = re.search(r'text\s*=\s*"([^"]*)"', value)
            fields[name] = inner.group(1) if inner else ""
        else:
            fields[name] = value[1:-1]
    return fields


def _metadata() -> Tuple[str, str, str]:
    info = project()
    name, version = str(info["name"]), str(info["version"])
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: {info.get('description', '')}",
        f"License: {info.get('license', '')}",
        f"Requires-Python: {info.get('requires-python', '>=3.9')}",
    ]
    lines += [f"Classifier: {c}" for c in info.get("classifiers", [])]  # type: ignore[union-attr]
    lines += [f"Keywords: {','.join(info.get('keywords', []))}"]  # type: ignore[arg-type]
    lines += ["Description-Content-Type: text/markdown", "", (ROOT / "README.md").read_text("utf-8")]
    return name, version, "\n".join(lines)


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _files() -> List[Tuple[str, bytes]]:
    source = ROOT / "src" / PACKAGE
    found = [p for p in sorted(source.rglob("*")) if p.is_file() and "__pycache__" not in p.parts]
    return [(f"{PACKAGE}/{p.relative_to(source).as_posix()}", p.read_bytes()) for p in found]


def _add(archive: zipfile.ZipFile, path: str, data: bytes) -> None:
    entry = zipfile.ZipInfo(path, DATE)
    entry.external_attr = 0o644 << 16
    entry.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(entry, data)


def _dist_info(name: str, version: str, metadata: str) -> List[Tuple[str, bytes]]:
    info = f"{name}-{version}.dist-info"
    wheel = "Wheel-Version: 1.0\nGenerator: promptstore_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    return [
        (f"{info}/METADATA", metadata.encode("utf-8")),
        (f"{info}/WHEEL", wheel.encode()),
        (f"{info}/LICENSE", (ROOT / "LICENSE").read_bytes()),
    ]


# ---------------------------------------------------------------------- PEP 517 hooks


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[dict] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[dict] = None) -> str:
    name, version, metadata = _metadata()
    for path, data in _dist_info(name, version, metadata):
        target = Path(metadata_directory) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return f"{name}-{version}.dist-info"


def build_wheel(
    wheel_directory: str, config_settings: Optional[dict] = None, metadata_directory: Optional[str] = None
) -> str:
    name, version, metadata = _metadata()
    filename = f"{name}-{version}-py3-none-any.whl"
    entries = _files() + _dist_info(name, version, metadata)
    record_path = f"{name}-{version}.dist-info/RECORD"
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in entries) + f"{record_path},,\n"
    Path(wheel_directory).mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(Path(wheel_directory) / filename, "w") as archive:
        for path, data in entries:
            _add(archive, path, data)
        _add(archive, record_path, record.encode())
    return filename


def build_sdist(sdist_directory: str, config_settings: Optional[dict] = None) -> str:
    name, version, metadata = _metadata()
    base = f"{name}-{version}"
    members = ["pyproject.toml", "README.md", "LICENSE", "build_backend/promptstore_build.py"]
    members += [f"src/{path}" for path, _ in _files()]
    Path(sdist_directory).mkdir(parents=True, exist_ok=True)
    filename = f"{base}.tar.gz"
    with tarfile.open(Path(sdist_directory) / filename, "w:gz", format=tarfile.PAX_FORMAT) as archive:
        for member in [*members, "PKG-INFO"]:
            data = metadata.encode("utf-8") if member == "PKG-INFO" else (ROOT / member).read_bytes()
            entry = tarfile.TarInfo(f"{base}/{member}")
            entry.size = len(data)
            entry.mtime = 315532800
            entry.mode = 0o644
            archive.addfile(entry, io.BytesIO(data))
    return filename


if __name__ == "__main__":
    import sys

    # python3 build_backend/promptstore_build.py <dir>: the wheel, for npm run build (it prints its name).
    print(build_wheel(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "dist")))
