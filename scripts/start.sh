#!/usr/bin/env bash
# npm start: install (frozen lockfile), build, then run the reference gateway on an embedded
# PostgreSQL (or DATABASE_URL), with a witness cloud worker and a local desktop runner.
set -euo pipefail
source "$(dirname "$0")/pnpm.sh"
cd "$ROOT"
pnpm install --frozen-lockfile --prefer-offline
pnpm turbo run build --filter=@openwork/gateway... --output-logs=errors-only
exec node apps/gateway/dist/main.js
