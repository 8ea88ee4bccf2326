#!/usr/bin/env bash
# npm run schema:dump: rewrites each package's schema.md (the schema its migrations make and what
# each one changes) from a real PostgreSQL; the same tests fail in npm test when a dump is stale.
set -euo pipefail
source "$(dirname "$0")/pnpm.sh"
cd "$ROOT"
pnpm turbo run build --output-logs=errors-only
pnpm vitest run --update schema-dump
