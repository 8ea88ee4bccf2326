#!/usr/bin/env bash
# Cold `npm start`: a fresh clone at COMMIT (default HEAD) in a private temporary folder, with npm's
# cache, pnpm's store and pnpm's metadata cache pointed at empty folders of their own (the machine's
# own caches are neither read nor touched). Prints the seconds from `npm start` to the line with the
# MCP endpoint, then stops the gateway with SIGINT (Ctrl-C) and removes the folder.
#   bash bench/cold-start.sh [COMMIT]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
commit="${1:-HEAD}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
git clone -q "$repo" "$tmp/r" && git -C "$tmp/r" checkout -q "$commit"
export npm_config_cache="$tmp/npm-cache" XDG_DATA_HOME="$tmp/data" XDG_CACHE_HOME="$tmp/cache" XDG_STATE_HOME="$tmp/state"
export PORT=0 TURBO_TELEMETRY_DISABLED=1
log="$tmp/start.log"
cd "$tmp/r"
started=$(date +%s.%N)
setsid npm start >"$log" 2>&1 &
pid=$!
until grep -q "MCP endpoint :" "$log"; do
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "npm start ended before the endpoint line" >&2; exit 1; }
  sleep 0.2
done
ready=$(date +%s.%N)
kill -INT -- -"$pid"
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
kill -KILL -- -"$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
# The store's size says what was downloaded.
echo "$(git -C "$tmp/r" rev-parse --short HEAD) cold npm start: $(echo "$ready - $started" | bc) s to the MCP endpoint; pnpm store $(du -sh "$XDG_DATA_HOME" | cut -f1), .tools $(du -sh .tools | cut -f1); load $(cut -d' ' -f1-3 /proc/loadavg)"
