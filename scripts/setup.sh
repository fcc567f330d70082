#!/usr/bin/env bash
# Create .venv (if missing) and install repetend into it with the given extras.
# Usage: bash scripts/setup.sh [extras]   (default extras: all)
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-all}"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[${extras}]"
