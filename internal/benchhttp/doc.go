// Command benchhttp is `make bench-http`: the reviewer's measurement of the sandbox as a
// project command. It starts `partnersim serve` as the README starts it (a separate process;
// on an empty store — the first start, which builds the set — and again on the built store —
// a restart), drives one URL at a time with wrk (-t1, 32 connections and 1), and alternates
// each run in the same minute with a bare echo v4 server answering the very same bytes (the
// ceiling: `partnersim ceiling`, loadtest.StartCeilingProcess, a process of its own as the
// server it is set beside is). Rows: Get User Detail of each default user with a
// fixture-given history, of one with a generated history and of an unfunded one; the large
// set's detail on its first serve (three builds) and after a restart; the large set's `partnersim
// fixtures build` CPU against the baseline commit's binary, built once from git, alternated (three
// pairs; decisions D14); rows over many URLs — a
// random user's detail, random filtered user and order list pages, and the mix, three runs —
// through loadtest.Measure (as `partnersim load --target URL --scenario …`), whose ceiling
// answers each URL of the run with partnersim's own bytes for it; the cost of `partnersim proxy` (one detail URL through the
// proxy and directly, alternated, at 1 connection — p50 added ≤ 0.2 ms — and at 32 — ≥ 0.7 ×;
// the proxy as by default, every exchange checked, and beside it with --when-behind shed);
// deliveries against the signed-POST ceiling (the
// simulator/bolt benchmarks, three alternated runs). It prints one markdown table with the
// load average beside every row.
//
// With -scale it is `make bench-scale` instead: for each size it generates a set (users with ten
// orders each, kept between runs) and builds it with `partnersim fixtures build` as its own
// process, twice (-build-runs; wall, CPU, peak RSS, store size of the run of least CPU); then it
// restarts `partnersim serve` on every size's store (ready) and measures the rows over many URLs,
// each scenario on every size back to back; it prints one table with the targets and writes the
// chart (-svg).
//
// The serving process runs with GODEBUG=gctrace=1 (observation only): the collector's share of
// the server's CPU in each row comes from its trace and /proc/PID/stat.
//
// Like loadtest, it measures from the outside: it must never import the store, the HTTP layer
// or the delivery code (simulator/bolt, simulator/httpapi, simulator/webhook), nor the sandbox —
// the server it measures is the `partnersim serve` process. (It links them through loadtest,
// which can start a sandbox in process for `partnersim load` without a target; it never calls
// them.)
package main
