#!/usr/bin/env bash
# rss.sh BINARY DB SET — RSS of a sandbox serving a built store, after 900 reads that touch the
# file the way large pages do: 300 order pages and 300 user pages (per_page=100 at offsets
# spread over the whole list, both sort orders) and 300 user lists filtered by a 30-day
# created_at window. Prints VmRSS, VmHWM, RssAnon and RssFile of the serving process.
#
#   psim fixtures build set100k b100k.db && loadtest/rss.sh psim b100k.db set100k
set -euo pipefail
bin=$1 db=$2 set=$3
port=${PORT:-18998}
key=$(sed -n 's/.*"key": *"\(sbx_[^"]*\)".*/\1/p' "$set/keys.json" | head -1)
"$bin" serve --db "$db" --fixtures "$set" --addr "127.0.0.1:$port" >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
get() { curl -sf -o /dev/null -H "x-api-key: $key" "http://127.0.0.1:$port$1"; }
total() { curl -sf -H "x-api-key: $key" "http://127.0.0.1:$port$1?per_page=1" | sed -n 's/.*"total_records": *\([0-9]*\).*/\1/p'; }
orders=$(total /v1/orders/) users=$(total /v1/users/)
for i in $(seq 0 299); do
  order=$([ $((i % 2)) = 0 ] && echo asc || echo desc)
  get "/v1/orders/?per_page=100&sort_order=$order&last_record_number=$(( (i * 7919) % (orders - 100) ))"
  get "/v1/users/?per_page=100&sort_order=$order&last_record_number=$(( (i * 7919) % (users - 100) ))"
  day=$(( (i * 37) % 700 ))
  get "/v1/users/?per_page=100&created_at_start=$(date -u -d "2024-11-22 + $day days" +%F)&created_at_end=$(date -u -d "2024-11-22 + $((day + 30)) days" +%F)"
done
grep -E '^(VmRSS|VmHWM|RssAnon|RssFile)' "/proc/$pid/status"
