#!/usr/bin/env bash
# Set up, build, and run the main job: the gradient checks of every op and module.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec build/bin/gradcheck "$@"
