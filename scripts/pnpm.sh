# Sourced by the root scripts: puts the pinned pnpm on PATH without touching the machine.
# A fresh machine has only Node and npm; a global pnpm of another version would try to
# self-switch and fail (the registry here serves no signatures), so we keep our own copy.
PNPM_VERSION=12.4.2
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
if [ "$("$TOOLS/node_modules/.bin/pnpm" --version 2>/dev/null)" != "$PNPM_VERSION" ]; then
  echo "› installing pnpm $PNPM_VERSION into .tools/"
  npm install --prefix "$TOOLS" --no-save --no-audit --no-fund --loglevel=error "pnpm@$PNPM_VERSION" >/dev/null
fi
export PATH="$TOOLS/node_modules/.bin:$ROOT/node_modules/.bin:$PATH"
export TURBO_TELEMETRY_DISABLED=1
