"""The deploy units, read from the template: for each function, the code it ships, its
handler, and the packages its artifact installs — a zip function's layers (each layer's
content and its lock, `requirements.txt`) over the Lambda runtime's own boto3, an image's
locks as its Dockerfile installs them and the folders it copies into the task root.

Three readers, so that a function or layer added to the template is covered the day it is
added: the derived import contract (`infra/import_contracts.py`, part of `lint-imports`), the
folders the local runtime runs each function from (`python -m infra.locks install`, which
`make` runs: each lock installed for this interpreter under `<venv>/lambda/`), and the
deploy-unit tests (`tests/test_deploy_units.py`).
"""

from __future__ import annotations

import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from infra.transform import TEMPLATE, load

ROOT = TEMPLATE.parent.parent
# What the Lambda runtime itself provides besides the standard library: boto3 and what it
# needs. AWS updates it in place; this lock is the stand-in the tests and local runs use, and
# a constraint on every layer (a layer's copy of a package shadows the runtime's).
RUNTIME_LOCK = ROOT / "infra" / "lambda-runtime.txt"
LOCK = "requirements.txt"  # the file SAM installs in a layer folder: the lock
PACKAGE_DIRS = {"functions": "newsdesk_functions"}  # pyproject's package-dir, for handlers


@dataclass(frozen=True)
class Layer:
    name: str  # the logical id
    content: Path  # its ContentUri

    @property
    def lock(self) -> Path | None:
        """Its lock, where it installs packages (the lock's input, requirements.in, says so
        before the lock is first made)."""
        lock = self.content / LOCK
        return lock if lock.exists() or lock.with_suffix(".in").exists() else None

    @property
    def packages(self) -> tuple[str, ...]:
        """The importable packages the layer ships of its own (the newsdesk package)."""
        return tuple(sorted(p.name for p in self.content.iterdir() if (p / "__init__.py").exists()))


@dataclass(frozen=True)
class Unit:
    """One deploy unit: a function as its artifact holds it."""

    name: str  # the logical id
    image: bool
    handler: str  # as Lambda imports it: "worker.lambda_handler"
    sources: tuple[Path, ...]  # folders of our code on its path (task root, layers' content)
    locks: tuple[Path, ...]  # what is installed for it, the runtime's first
    layers: tuple[Layer, ...] = ()

    @property
    def module(self) -> str:
        """The handler's module as this repository's package installs it."""
        folder = self.sources[0].relative_to(ROOT)
        package = (PACKAGE_DIRS[folder.parts[0]], *folder.parts[1:])
        return ".".join((*package, self.handler.rsplit(".", 1)[0]))

    @property
    def packages(self) -> tuple[str, ...]:
        """Our own top-level packages the artifact holds."""
        return tuple(
            sorted(
                {p.name for s in self.sources for p in s.iterdir() if (p / "__init__.py").exists()}
            )
        )

    def installed(self) -> tuple[str, ...]:
        """The folders under <venv>/lambda/ its installed packages are in, in path order."""
        if self.image:
            return (f"images/{self.name}", "runtime")
        return (*(f"layers/{layer.name}/python" for layer in self.layers if layer.lock), "runtime")


def units(template: dict[str, Any] | None = None) -> list[Unit]:
    template = template or load()
    resources: dict[str, Any] = template["Resources"]
    found = []
    for name, resource in resources.items():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        props = resource["Properties"]
        if props.get("PackageType") == "Image":
            found.append(_image(name, resource))
            continue
        layers = tuple(
            Layer(
                ref["Ref"],
                (TEMPLATE.parent / resources[ref["Ref"]]["Properties"]["ContentUri"]).resolve(),
            )
            for ref in props.get("Layers", [])
        )
        code = (TEMPLATE.parent / props["CodeUri"]).resolve()
        found.append(
            Unit(
                name,
                image=False,
                handler=props["Handler"],
                sources=(code, *(layer.content for layer in layers)),
                locks=(RUNTIME_LOCK, *(layer.lock for layer in layers if layer.lock)),
                layers=layers,
            )
        )
    return found


def _image(name: str, resource: dict[str, Any]) -> Unit:
    """An image as its Dockerfile assembles it: the locks it installs (COPY'd to a temporary
    path, then `pip install -r`), the folders and files it copies into the task root, its CMD."""
    context = (TEMPLATE.parent / resource["Metadata"]["DockerContext"]).resolve()
    text = (context / resource["Metadata"]["Dockerfile"]).read_text(encoding="utf-8")
    copied: dict[str, Path] = {}
    sources: list[Path] = []
    for source, target in re.findall(r"^COPY\s+(\S+)\s+(\S+)\s*$", text, re.MULTILINE):
        if target.startswith("${LAMBDA_TASK_ROOT}"):
            # what is copied to <task root>/<its name> is found on the path from its parent
            folder = (context / source).resolve().parent
            if folder not in sources:
                sources.append(folder)
        else:
            copied[target] = (context / source).resolve()
    installs = [
        word
        for line in re.findall(r"pip install(.*?)(?<!\\)$", text, re.MULTILINE | re.DOTALL)
        for word in shlex.split(line.replace("\\\n", " "))
    ]
    locks = tuple(copied[installs[i + 1]] for i, w in enumerate(installs) if w == "-r")
    (handler,) = re.findall(r'^CMD \["([^"]+)"\]', text, re.MULTILINE)
    # the handler's own folder first, as a task root has it
    code = next(s for s in sources if (s / f"{handler.split('.')[0]}.py").exists())
    ordered = (code, *(s for s in sources if s != code))
    return Unit(name, image=True, handler=handler, sources=ordered, locks=(RUNTIME_LOCK, *locks))


def pins(lock: Path) -> dict[str, str]:
    """A lock's packages (normalised names) and versions."""
    text = lock.read_text(encoding="utf-8")
    return {
        re.sub(r"[-_.]+", "-", name).lower(): version
        for name, version in re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)", text, re.M)
    }


def folders() -> dict[str, tuple[Path, ...]]:
    """Each folder under <venv>/lambda/ and the locks installed into it."""
    wanted: dict[str, tuple[Path, ...]] = {"runtime": (RUNTIME_LOCK,)}
    for unit in units():
        if unit.image:
            wanted[f"images/{unit.name}"] = unit.locks[1:]
        for layer in unit.layers:
            if layer.lock:
                wanted[f"layers/{layer.name}/python"] = (layer.lock,)
    return wanted


def uv() -> str:
    """uv as make installs it, beside this interpreter."""
    return shutil.which("uv", path=str(Path(sys.executable).parent)) or "uv"
