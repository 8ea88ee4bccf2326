# Sourced by the root scripts: puts the pinned pnpm on PATH without touching the machine, with
# the MCP Inspector CLI beside it (its engines field says Node 22, so pnpm's engine-strict
# install refuses it; its CLI runs on Node 20 and the end-to-end tests use it).
# A fresh machine has only Node and npm; a global pnpm of another version would try to
# self-switch and fail (the registry here serves no signatures), so we keep our own copy.
PNPM_VERSION=12.4.2
INSPECTOR_VERSION=2.12.0
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
inspector_version() { node -p "require('$TOOLS/node_modules/@modelcontextprotocol/inspector/package.json').version" 2>/dev/null; }
# OPENWORK_TOOLS=start (set by scripts/start.sh) asks for pnpm alone: the Inspector and the consumer
# tests' npm cache serve only the tests, and a cold start need not wait for them.
OPENWORK_TOOLS="${OPENWORK_TOOLS:-test}"
TOOL_SPECS="pnpm@$PNPM_VERSION"
[ "$OPENWORK_TOOLS" = start ] || TOOL_SPECS="$TOOL_SPECS @modelcontextprotocol/inspector@$INSPECTOR_VERSION"
if [ "$("$TOOLS/node_modules/.bin/pnpm" --version 2>/dev/null)" != "$PNPM_VERSION" ] \
  || { [ "$OPENWORK_TOOLS" != start ] && [ "$(inspector_version)" != "$INSPECTOR_VERSION" ]; }; then
  echo "› installing $TOOL_SPECS into .tools/"
  # engine-strict off for this one install only: the repository's .npmrc turns it on.
  npm install --prefix "$TOOLS" --no-save --no-audit --no-fund --loglevel=error --engine-strict=false \
    $TOOL_SPECS >"$ROOT/.tools.log" 2>&1 \
    || { cat "$ROOT/.tools.log" >&2; echo "could not install the tools into .tools/" >&2; exit 1; }
  rm -f "$ROOT/.tools.log"
fi
# The consumer tests (tools/consumers) install the packed packages with `npm install --offline`
# in a folder outside the workspace: npm's cache must hold every third-party package they need.
# Installing the list once fills the cache with each one's whole tree (about 20 s, 160 packages);
# the marker holds the list, so this runs again only when the list changes.
CONSUMER_LISTS="$ROOT/tools/consumers/cache-packages.txt $ROOT/tools/consumers/cache-extra.txt"
CONSUMER_MARKER="$TOOLS/consumer-cache.done"
if [ "$OPENWORK_TOOLS" != start ] && [ -f "$ROOT/tools/consumers/cache-packages.txt" ] && ! cat $CONSUMER_LISTS 2>/dev/null | cmp -s - "$CONSUMER_MARKER"; then
  echo "› filling npm's cache for the consumer tests"
  specs() { grep -v '^#' "$1" | grep -v '^$'; }
  # A folder of its own: several shells may source this at once.
  consumer_prefix="$(mktemp -d)"
  if { npm install --prefix "$consumer_prefix" --no-save --no-audit --no-fund --loglevel=error --engine-strict=false --ignore-scripts \
      $(specs "$ROOT/tools/consumers/cache-packages.txt") \
    && npm cache add $(specs "$ROOT/tools/consumers/cache-extra.txt"); } >"$consumer_prefix.log" 2>&1; then
    cat $CONSUMER_LISTS >"$CONSUMER_MARKER"
  else
    # Not fatal for this shell: only the consumer tests need the cache, and they say what is missing.
    cat "$consumer_prefix.log" >&2; echo "could not fill npm's cache for the consumer tests" >&2
  fi
  rm -rf "$consumer_prefix" "$consumer_prefix.log"
fi
export PATH="$TOOLS/node_modules/.bin:$ROOT/node_modules/.bin:$PATH"
export TURBO_TELEMETRY_DISABLED=1
