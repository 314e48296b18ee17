"""Each function as `sam local invoke` would start its container — the environment, handler,
code and layers — resolved by SAM CLI's own code (its stack and function providers, its
--env-vars reader, LocalLambdaRunner's invoke configuration) from the built template and an
env.json, for the proof without Docker (tests/test_deploy_units.py). Run it with the SAM CLI's
interpreter, after `sam build`:

    .venv-sam/bin/python infra/sam_env.py > build/sam-env.json    (make sam-env)

SAM CLI also lets the shell's environment set any variable the template declares, and gives
the container the credentials and region boto3 finds. Here the shell is empty of both: no
variable of the functions', no credentials, profile or metadata service (SAM then gives its
placeholder keys, and nothing is looked up or written that could be a real key), and the
region is samconfig.toml's for local_invoke, as `sam local invoke` run from infra/ takes it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

INFRA = Path(__file__).resolve().parent
BUILT = INFRA / ".aws-sam" / "build" / "template.yaml"
# What the result and the build follow from (the code and layers' folders whole); the test
# refuses a result older than any of them.
INPUTS = ("infra/template.yaml", "infra/env.example.json", "infra/samconfig.toml")
BUILT_FROM = ("functions", "layers")


def inputs(root: Path) -> list[str]:
    files = [
        str(path.relative_to(root))
        for folder in BUILT_FROM
        for path in sorted((root / folder).rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    ]
    return [*INPUTS, *files]


def digests(root: Path) -> dict[str, str]:
    return {name: hashlib.sha256((root / name).read_bytes()).hexdigest() for name in inputs(root)}


def local_invoke_parameters() -> dict[str, Any]:
    config = tomllib.loads((INFRA / "samconfig.toml").read_text(encoding="utf-8"))
    parameters: dict[str, Any] = config["default"]["local_invoke"]["parameters"]
    return parameters


def clean_shell() -> None:
    """As if from a shell that sets nothing SAM CLI would pass on."""
    keep = {key: os.environ[key] for key in ("PATH",) if key in os.environ}
    os.environ.clear()
    os.environ.update(
        keep,
        AWS_SHARED_CREDENTIALS_FILE=os.devnull,
        AWS_CONFIG_FILE=os.devnull,
        AWS_EC2_METADATA_DISABLED="true",
        SAM_CLI_TELEMETRY="0",
    )


def resolve(template: Path, env_vars: Path, region: str) -> dict[str, Any]:
    # SAM CLI's own classes, as InvokeContext wires them for `sam local invoke`
    from samcli.commands.local.cli_common.invoke_context import InvokeContext
    from samcli.commands.local.lib.local_lambda import LocalLambdaRunner
    from samcli.lib.providers.sam_function_provider import SamFunctionProvider
    from samcli.lib.providers.sam_stack_provider import SamLocalStackProvider

    stacks, _ = SamLocalStackProvider.get_stacks(
        str(template), global_parameter_overrides={"AWS::Region": region}
    )
    provider = SamFunctionProvider(stacks)
    runner = LocalLambdaRunner(
        local_runtime=None,  # nothing is run
        function_provider=provider,
        cwd=str(template.parent),
        real_path=str(template.parent),
        aws_region=region,
        env_vars_values=InvokeContext._get_env_vars_value(str(env_vars)),
    )
    functions: dict[str, Any] = {}
    for function in provider.get_all():
        config = runner.get_invoke_config(function)
        functions[function.name] = {
            "packagetype": config.packagetype,
            "handler": config.handler,
            "code": config.code_abs_path,
            "layers": [str(Path(template.parent, layer.codeuri)) for layer in config.layers],
            "metadata": function.metadata or {},
            "environment": config.env_vars.resolve(),
        }
    return functions


def main() -> None:
    parameters = local_invoke_parameters()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--template", type=Path, default=BUILT)
    parser.add_argument("--env-vars", type=Path, default=INFRA / "env.example.json")
    parser.add_argument("--region", default=parameters["region"])
    args = parser.parse_args()
    if not args.template.is_file():
        sys.exit(f"{args.template}: no built template (run `make infra-check`, i.e. sam build)")
    clean_shell()
    document = {
        "inputs": digests(INFRA.parent),
        "template": str(args.template.resolve()),
        "env_vars": str(args.env_vars.resolve()),
        "region": args.region,
        "functions": resolve(args.template.resolve(), args.env_vars.resolve(), args.region),
    }
    json.dump(document, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
