#!/usr/bin/env bash
# npm test: install (frozen lockfile), build and type-check through turbo (cached), then run
# every test in one vitest process so the run ends with one "N passed, N failed, N skipped" line.
set -euo pipefail
source "$(dirname "$0")/pnpm.sh"
cd "$ROOT"
pnpm install --frozen-lockfile --prefer-offline
pnpm turbo run build typecheck --output-logs=errors-only
pnpm vitest run "$@"
