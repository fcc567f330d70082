#!/usr/bin/env bash
# Set up on a fresh machine and run the main job on the bundled demo corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh all
exec .venv/bin/repetend demo --out demo-out "$@"
