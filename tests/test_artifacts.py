"""What AWS runs is what the template and the Dockerfile ship: the Lambda layer, the zip
functions' folders and the cluster image hold runtime code only — nothing of the local tooling
(newsdesk_local: the CLI, emulated services, the Lambda pool, demo and test servers, the quality
harness, the seed reference) and no import of moto, pgserver or argparse. Read from the
template's ContentUri and CodeUri and the Dockerfile's COPY lines, so a new path is checked the
day it is added."""

import ast
import re
from pathlib import Path

import pytest

from infra.transform import load
from tests.conftest import ROOT

TEMPLATE = ROOT / "infra" / "template.yaml"
LOCAL_ONLY = {"newsdesk_local", "moto", "pgserver", "argparse"}
LOCAL_PACKAGE = ROOT / "local" / "newsdesk_local"


def shipped_paths() -> dict[str, Path]:
    """Each shipped folder or file, named by what ships it."""
    resources = load(TEMPLATE)["Resources"]
    paths: dict[str, Path] = {}
    for name, resource in resources.items():
        props = resource.get("Properties", {})
        for key in ("ContentUri", "CodeUri"):
            if isinstance(props.get(key), str):
                paths[f"{name} {key}"] = (TEMPLATE.parent / props[key]).resolve()
        dockerfile = resource.get("Metadata", {}).get("Dockerfile")
        if dockerfile:
            context = (TEMPLATE.parent / resource["Metadata"]["DockerContext"]).resolve()
            text = (context / dockerfile).read_text(encoding="utf-8")
            for line in re.findall(r"^COPY\s+(.+)$", text, re.MULTILINE):
                *sources, _destination = line.split()
                for source in (s for s in sources if not s.startswith("--")):
                    paths[f"{name} COPY {source}"] = (context / source).resolve()
    return paths


def python_files(path: Path) -> list[Path]:
    return [path] if path.is_file() else sorted(path.rglob("*.py"))


def imported_packages(path: Path) -> set[str]:
    if path.suffix != ".py":
        return set()
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


SHIPPED = shipped_paths()


def test_the_template_and_dockerfile_ship_the_layer_the_functions_and_the_image():
    shipped = {str(p.relative_to(ROOT)) for p in SHIPPED.values()}
    assert {"layers/common", "functions/collect", "functions/migrate"} <= shipped
    assert {"layers/common/newsdesk", "functions/cluster/app.py"} <= shipped


@pytest.mark.parametrize("what", sorted(SHIPPED))
def test_nothing_local_is_shipped(what):
    path = SHIPPED[what]
    assert path.exists(), f"{what}: {path} does not exist"
    local_files = {p.read_bytes() for p in LOCAL_PACKAGE.rglob("*.py") if p.stat().st_size}
    for file in python_files(path):
        assert not file.is_relative_to(LOCAL_PACKAGE), f"{what} ships {file}"
        imports = imported_packages(file) & LOCAL_ONLY
        assert not imports, f"{what} ships {file.relative_to(ROOT)}, which imports {imports}"
    folders = [path] if path.is_dir() else []
    for folder in folders:
        for file in folder.rglob("*"):
            relative = file.relative_to(folder)
            assert "newsdesk_local" not in relative.parts, f"{what} ships {relative}"
            # a local-only module copied under another package
            if file.suffix == ".py":
                assert file.read_bytes() not in local_files, f"{what} ships a copy: {relative}"
