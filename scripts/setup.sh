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
# Compile the numba kernels once now (1–3 min the first time, seconds after), so that
# the first real run does not stall on it; REPETEND_NO_WARMUP=1 skips this.
if [ "${REPETEND_NO_WARMUP:-0}" != "1" ]; then
  .venv/bin/repetend warmup -q
fi
