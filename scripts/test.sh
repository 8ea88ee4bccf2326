#!/usr/bin/env bash
# npm test: install (frozen lockfile), build and type-check through turbo (cached), then run
# every test in one vitest process so the run ends with one "N passed, N failed, N skipped" line.
set -euo pipefail
source "$(dirname "$0")/pnpm.sh"
cd "$ROOT"
pnpm install --frozen-lockfile --prefer-offline
# The card is tested in a real headless browser: Debian's Chromium (no browser download).
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "› installing Debian's chromium for the card's browser test"
  apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
fi
# One style and the linter's rules everywhere (biome.json): a failure names the file and the line.
pnpm exec biome ci .
pnpm turbo run build typecheck --output-logs=errors-only
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
pnpm vitest run "$@" 2>&1 | tee "$log"
# The count line is the verdict: an error outside any test (an unhandled rejection in a library)
# counts as a failure even where vitest's exit code would let it pass.
grep -qE '^[0-9]+ passed, 0 failed, [0-9]+ skipped$' "$log"
