#!/usr/bin/env bash
# What functions/cluster/Dockerfile assembles, checked without Docker: the same requirements
# installed into one folder with the package and app.py, then the handler imported from that
# folder and the standard library alone (boto3 stands in for the one the base image ships).
# Usage: infra/check_cluster_image.sh [PYTHON]   (the Lambda runtime is Python 3.12)
set -euo pipefail
python=${1:-python3}
root=$(cd "$(dirname "$0")/.." && pwd)
task_root=$(mktemp -d)
trap 'rm -rf "$task_root"' EXIT

"$python" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target "$task_root" boto3 \
    -r "$root/layers/common/requirements.txt" -r "$root/functions/cluster/requirements.txt"
cp -r "$root/layers/common/newsdesk" "$task_root/newsdesk"
cp "$root/functions/cluster/app.py" "$task_root/"
cd "$task_root"
DATABASE_URL=postgresql://unused@127.0.0.1:9/none AWS_DEFAULT_REGION=ap-northeast-2 \
POWERTOOLS_METRICS_NAMESPACE=newsdesk "$python" -I -S -c '
import sys
sys.path.insert(0, ".")
import app
from newsdesk.clustering import cluster_titles
assert cluster_titles(["국회 예산안 통과"] * 3) == [[0, 1, 2]]
print("cluster image contents: app.lambda_handler imports and clusters")
'
echo "cluster image dependencies: $(du -sm "$task_root" | cut -f1) MB"
