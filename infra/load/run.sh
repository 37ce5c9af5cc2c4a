#!/usr/bin/env bash
# `npm run load`: artillery load scenarios (infra/load/*.yml) against the local server or a
# deployed webhook host. Artillery is installed on demand into .local/artillery, never into the
# project's node_modules, so `npm ci` stays small.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: npm run load [-- --help]

Runs every infra/load/*.yml scenario with artillery 2.0.34 (installed on first use into
.local/artillery) and prints p50/p95/p99 latency, request counts and errors per scenario. The
run fails (exit 1) when an `ensure` threshold is breached or any call fails.

Target:
  default        https://127.0.0.1:$PORT (8443), started with `npm start` when nothing answers
                 there (and stopped afterwards); client certificate and CA from .local/pki
  LOAD_TARGET    a deployed base URL instead (https://admission.example.com); the certificate
                 must be publicly trusted; mTLS deployments also need LOAD_CLIENT_CERT/KEY

Environment:
  LOAD_DURATION      seconds of the steady phase (default 20)
  LOAD_RATE          new user requests per second in it (default 10)
  CALLER_AUTH        url-secret: the target serves capability URLs; the calls carry each
                     webhook's capability, signed with the key in URL_SECRET_FILE
                     (default .local/url-secret), as emit writes them
  LOAD_CA            CA bundle for the local target (default .local/pki/ca.crt)
  LOAD_CLIENT_CERT   client certificate (default .local/pki/client.crt)
  LOAD_CLIENT_KEY    its key (default .local/pki/client.key)
  LOAD_SCENARIOS     scenario files to run (default infra/load/*.yml)
EOF
}

case "${1:-}" in
  -h|--help) usage; exit 0 ;;
  "") ;;
  *) echo "load: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
ARTILLERY_VERSION=2.0.34
TOOLS=.local/artillery
WORK=.local/load
ARTILLERY="$TOOLS/node_modules/.bin/artillery"
mkdir -p "$WORK"
export ARTILLERY_DISABLE_TELEMETRY=true

log() { printf '%s\n' "$*" >&2; }

# 1. artillery, on demand, in its own prefix (its own package.json stops npm from walking up).
installed_version() { node -p "require('./$TOOLS/node_modules/artillery/package.json').version" 2>/dev/null || true; }
if [ "$(installed_version)" != "$ARTILLERY_VERSION" ]; then
  log "installing artillery@$ARTILLERY_VERSION into $TOOLS (once; about 450 MB)"
  mkdir -p "$TOOLS"
  [ -f "$TOOLS/package.json" ] || printf '{ "name": "serverless-admission-load-tools", "private": true }\n' > "$TOOLS/package.json"
  (cd "$TOOLS" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --loglevel=error "artillery@$ARTILLERY_VERSION" >&2)
fi

# 2. The target.
SERVER_PID=""
stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    log "stopping the local server (process group $SERVER_PID)"
    kill -TERM -- "-$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$SERVER_PID" 2>/dev/null || true
  fi
}
trap stop_server EXIT

answers() { node -e "require('net').connect($1, '127.0.0.1').on('connect', () => process.exit(0)).on('error', () => process.exit(1))"; }

if [ -n "${LOAD_TARGET:-}" ]; then
  ENVIRONMENT=remote
  export LOAD_BASE_URL="${LOAD_TARGET%/}"
else
  ENVIRONMENT=local
  PORT="${PORT:-8443}"
  export LOAD_BASE_URL="https://127.0.0.1:$PORT"
  if answers "$PORT"; then
    log "using the server already answering on 127.0.0.1:$PORT"
  else
    log "starting the local server (npm start), log in $WORK/server.log"
    # Its own process group, so that stopping it stops npm, tsx, node and the store together.
    PORT="$PORT" setsid npm start > "$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 1 1800); do
      grep -q ready "$WORK/server.log" 2>/dev/null && break
      if ! kill -0 "$SERVER_PID" 2>/dev/null; then log "the local server exited:"; tail -20 "$WORK/server.log" >&2; exit 1; fi
      sleep 0.1
    done
    grep -q ready "$WORK/server.log" || { log "the local server did not print ready within 180 s:"; tail -20 "$WORK/server.log" >&2; exit 1; }
  fi
fi

pem() { [ -f "$1" ] && cat "$1" || true; }
CA_PEM="$(pem "${LOAD_CA:-.local/pki/ca.crt}")"
CLIENT_PEM="$(pem "${LOAD_CLIENT_CERT:-.local/pki/client.crt}")"
CLIENT_KEY="$(pem "${LOAD_CLIENT_KEY:-.local/pki/client.key}")"
export CA_PEM CLIENT_PEM CLIENT_KEY
export LOAD_DURATION="${LOAD_DURATION:-20}" LOAD_RATE="${LOAD_RATE:-10}"
if [ "$ENVIRONMENT" = local ] && [ -z "$CA_PEM" ]; then log "no local PKI in .local/pki (npm start creates it)"; exit 1; fi

# 3. The plan: which webhooks each user request calls, from the plugin registry, at the target
# (in url-secret mode each call's capability is bound to LOAD_BASE_URL).
export LOAD_PLAN="$ROOT/$WORK/plan.json"
node_modules/.bin/tsx infra/load/plan.ts "$LOAD_PLAN"

# 4. The scenarios, each with its report.
status=0
for scenario in ${LOAD_SCENARIOS:-infra/load/*.yml}; do
  name="$(basename "$scenario" .yml)"
  report="$WORK/report-$name.json"
  log "artillery: $scenario against $LOAD_BASE_URL ($ENVIRONMENT, ${LOAD_DURATION}s at ${LOAD_RATE}/s after warm-up)"
  rm -f "$report"
  if "$ARTILLERY" run --environment "$ENVIRONMENT" --output "$report" "$scenario" > "$WORK/artillery-$name.log" 2>&1; then result=passed; else result=FAILED; status=1; fi
  # The ensure verdicts (ok: / fail: lines), then our summary of the report.
  grep -E "^(ok|fail): " "$WORK/artillery-$name.log" >&2 || true
  if [ -f "$report" ]; then
    node infra/load/summary.mjs "$report" "$name" "$result"
  else
    log "$name: FAILED before writing a report; first errors from $WORK/artillery-$name.log:"
    grep -m 5 -E "^(Error|\s*\[cause\])|error:" "$WORK/artillery-$name.log" >&2 || tail -20 "$WORK/artillery-$name.log" >&2
    status=1
  fi
done
exit "$status"
