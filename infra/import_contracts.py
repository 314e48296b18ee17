"""An import-linter contract derived from the template (`infra/artifacts.py`): each zip
function's import closure — its handler and everything it imports, run-time imports only —
holds nothing but the standard library, the Lambda runtime's boto3 and what it needs, the
packages its layers' locks install, and our own packages its artifact ships. A function or a
layer added to the template is covered without a contract written for it.

Enabled in pyproject.toml (`contract_types`, and a contract of type `deploy_units`); checked
by `lint-imports`.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from importlib.metadata import packages_distributions
from pathlib import Path

import grimp
from importlinter.application import output
from importlinter.domain.contract import Contract, ContractCheck

from infra.artifacts import Unit, pins, units


@dataclass(frozen=True)
class Reach:
    """An import a unit's artifact cannot satisfy, with the chain that leads to it."""

    unit: str
    handler: str
    imported: str
    why: str
    chain: tuple[str, ...]


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def import_names(locks: tuple[Path, ...]) -> set[str]:
    """The top-level names the locks' distributions can be imported by (as installed here:
    the same versions, for this machine's platform)."""
    by_distribution: dict[str, set[str]] = {}
    for name, distributions in packages_distributions().items():
        for distribution in distributions:
            by_distribution.setdefault(_normal(distribution), set()).add(name)
    names: set[str] = set()
    for lock in locks:
        for distribution in pins(lock):
            if distribution not in by_distribution:
                raise RuntimeError(f"{distribution} ({lock.name}) is not installed here: run make")
            names |= by_distribution[distribution]
    return names


def reaches(unit: Unit, graph: grimp.ImportGraph) -> list[Reach]:
    allowed = set(sys.stdlib_module_names) | import_names(unit.locks)
    ours = set(unit.packages)
    found = []
    for module in sorted(graph.find_upstream_modules(unit.module)):
        if graph.is_module_squashed(module):  # another project's package
            if module in allowed:
                continue
            layers = ", ".join(layer.name for layer in unit.layers) or "none"
            why = f"which none of its artifact's locks installs (its layers: {layers})"
        elif module.split(".")[0] in ours:
            continue
        else:
            why = "which its artifact does not ship (its code folder and its layers' content)"
        chain = graph.find_shortest_chain(importer=unit.module, imported=module) or ()
        found.append(Reach(unit.name, unit.handler, module, why, tuple(chain)))
    return found


class DeployUnitContract(Contract):
    """Each zip function of the template imports only what its artifact holds."""

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        # the run-time imports alone (a stub imported for the type checker is not loaded)
        runtime = grimp.build_graph(
            *self.session_options["root_packages"],
            include_external_packages=True,
            exclude_type_checking_imports=True,
        )
        found = [r for unit in units() if not unit.image for r in reaches(unit, runtime)]
        return ContractCheck(kept=not found, warnings=[], metadata={"reaches": found})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for reach in check.metadata["reaches"]:
            output.print_error(
                f"{reach.unit} ({reach.handler}) imports {reach.imported}, {reach.why}:"
            )
            output.print_error(f"    {' -> '.join(reach.chain)}", bold=False)
            output.new_line()
