#!/usr/bin/env bash
# npm start: install (frozen lockfile), build, then run the reference gateway on an embedded
# PostgreSQL (or DATABASE_URL), with a witness cloud worker and a local desktop runner.
# It installs and builds only what running needs: the gateway's workspace graph without the
# test-only real opencode (a 177 MB binary), no MCP Inspector, no declaration files (npm test
# installs the rest and builds them, and type-checks).
set -euo pipefail
OPENWORK_TOOLS=start
source "$(dirname "$0")/pnpm.sh"
cd "$ROOT"
# The root (turbo, tsup) and the gateway with every workspace package it depends on.
pnpm install --frozen-lockfile --prefer-offline --filter . --filter '@openwork/gateway...' --filter '!@openwork/real-opencode'
BUILD_DECLARATIONS=0 pnpm turbo run build --filter=@openwork/gateway... --output-logs=errors-only
exec node apps/gateway/dist/main.js
