#!/usr/bin/env bash
# Set up, build, and run the main job: lesson 01, attention as kernel regression, in full
# (about a minute). Its story prints as it runs; figures, report.md and metrics.json land in
# out/01_attention_pooling/. Extra arguments go to the lesson (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec build/bin/01_attention_pooling "$@"
