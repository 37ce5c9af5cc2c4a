#!/usr/bin/env bash
# `npm run soak`: the load mix for several minutes against a local server started here, with the
# server's memory sampled throughout. Fails on any load error or when memory keeps growing.
set -euo pipefail

case "${1:-}" in
  -h|--help)
    cat <<'USAGE'
Usage: npm run soak [-- --help]

Starts `npm start` on a free port, runs `npm run load` against it for SOAK_SECONDS (default 180)
at SOAK_RATE user requests per second (default 20), and samples the Node server's resident memory
every 5 s. Prints the samples and fails (exit 1) on any load error, or when the last third of the
run averages more than SOAK_MAX_GROWTH percent (default 25) above the middle third.
USAGE
    exit 0 ;;
  "") ;;
  *) echo "soak: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
SECONDS_TOTAL="${SOAK_SECONDS:-180}"
RATE="${SOAK_RATE:-20}"
MAX_GROWTH="${SOAK_MAX_GROWTH:-25}"
WORK=.local/soak
mkdir -p "$WORK"
PORT="${PORT:-$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")}"

setsid env PORT="$PORT" LOG_LEVEL=silent npm start > "$WORK/server.out" 2> "$WORK/server.err" &
GROUP=$!
cleanup() { kill -TERM -- "-$GROUP" 2>/dev/null || true; sleep 1; kill -KILL -- "-$GROUP" 2>/dev/null || true; }
trap cleanup EXIT
for _ in $(seq 1 600); do grep -q ready "$WORK/server.out" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$WORK/server.out" || { echo "soak: the local server did not start" >&2; cat "$WORK/server.err" >&2; exit 1; }

# The Node server: the deepest node process of the group (npm -> tsx -> node).
server_rss_kb() { ps -o pid=,comm=,rss= -g "$GROUP" | awk '$2 == "node" { rss = $3 } END { print rss + 0 }'; }

: > "$WORK/rss.txt"
( while kill -0 "$GROUP" 2>/dev/null; do echo "$(date +%s) $(server_rss_kb)" >> "$WORK/rss.txt"; sleep 5; done ) &
SAMPLER=$!

echo "soak: ${SECONDS_TOTAL}s at ${RATE} user requests/s against https://127.0.0.1:$PORT" >&2
status=0
PORT="$PORT" LOAD_DURATION="$SECONDS_TOTAL" LOAD_RATE="$RATE" bash infra/load/run.sh || status=$?
kill "$SAMPLER" 2>/dev/null || true

node - "$WORK/rss.txt" "$MAX_GROWTH" <<'NODE' || status=1
const [file, maxGrowth] = process.argv.slice(2);
const samples = require('fs').readFileSync(file, 'utf8').trim().split('\n').map((l) => Number(l.split(' ')[1]) / 1024).filter((x) => x > 0);
if (samples.length < 6) { console.log(`soak: only ${samples.length} memory samples`); process.exit(0); }
const third = Math.floor(samples.length / 3);
const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
const middle = mean(samples.slice(third, 2 * third));
const last = mean(samples.slice(2 * third));
const growth = ((last - middle) / middle) * 100;
console.log(`soak: server RSS MB ${samples.map((x) => x.toFixed(0)).join(' ')}`);
console.log(`soak: middle third ${middle.toFixed(1)} MB, last third ${last.toFixed(1)} MB, growth ${growth.toFixed(1)}% (limit ${maxGrowth}%)`);
process.exit(growth > Number(maxGrowth) ? 1 : 0);
NODE
exit "$status"
