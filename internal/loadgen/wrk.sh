#!/usr/bin/env bash
# Load-test `ctxkit serve` with wrk (Debian's package, installed here if
# missing): POST /v1/compose with 20 offers of 1 KiB from 64 connections
# for DURATION (default 30s), on loopback. Prints wrk's latency
# distribution and the server's RSS and CPU time before and after. It stops
# by itself; the server is shut down with SIGTERM at the end and must exit 0.
#
#   bash internal/loadgen/wrk.sh [DURATION]
set -euo pipefail
cd "$(dirname "$0")/../.."
duration=${1:-30s}
if ! command -v wrk >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/ctxkit" ./cmd/ctxkit
go run ./internal/loadgen/cmd/ctxkit-load -print-body > "$work/body.json"
cat > "$work/post.lua" <<LUA
local f = assert(io.open("$work/body.json", "rb"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
LUA
"$work/ctxkit" serve --addr 127.0.0.1:0 2> "$work/serve.log" &
pid=$!
for _ in $(seq 100); do
  url=$(sed -n 's/^ctxkit serve: listening on //p' "$work/serve.log")
  [ -n "$url" ] && break
  sleep 0.1
done
[ -n "$url" ] || { echo "ctxkit serve did not start"; cat "$work/serve.log"; exit 1; }
stat() { awk '/VmRSS/ {print $2 " kB"}' /proc/$pid/status; }
cpu() { awk '{print ($14 + $15) / 100 " s"}' /proc/$pid/stat; }
wrk -t2 -c64 -d2s -s "$work/post.lua" "$url/v1/compose" >/dev/null   # warm-up
echo "server rss before: $(stat), cpu $(cpu)"
wrk -t2 -c64 -d"$duration" --latency -s "$work/post.lua" "$url/v1/compose"
echo "server rss after:  $(stat), cpu $(cpu)"
kill -TERM "$pid"
wait "$pid"
echo "ctxkit serve exited $?"
