package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/internal/nginx"
)

// shardKeys are a published key of each institution of the three-shard set.
var shardKeys = map[string]string{
	"a": "sbx_harborAllScopes0000000000000000000000001",
	"b": "sbx_prairieAllScopes000000000000000000000005",
	"c": "sbx_cedarAllScopes00000000000000000000000009",
}

// shardCluster is three real `partnersim serve --shard-map` processes behind Debian's nginx,
// configured by `partnersim shard-map --nginx`, all on loopback.
type shardCluster struct {
	dir, set, mapFile string
	addrs             map[string]string
	shards            map[string]*child
	proxy             string // nginx's base URL
}

// threeShards places each institution of the three-institution set on a shard of its own.
var threeShards = []shard{{Name: "a", Institutions: []string{"ins_harbor"}}, {Name: "b", Institutions: []string{"ins_prairie"}}, {Name: "c", Institutions: []string{"ins_cedar"}}}

// startShardCluster starts the shards of layout (their addrs are filled in) and nginx in front
// of them, or skips when nginx is not installed.
func startShardCluster(t testing.TB, layout []shard) *shardCluster {
	t.Helper()
	if _, err := nginx.Path(); err != nil {
		t.Skipf("%v: the shards are tested behind the real proxy only", err)
	}
	dir := t.TempDir()
	sc := &shardCluster{dir: dir, set: filepath.Join(dir, "set"), mapFile: filepath.Join(dir, "shards.json"),
		addrs: map[string]string{}, shards: map[string]*child{}}
	writeThreeInstitutionSet(t, sc.set)
	ports := freeAddrs(t, len(layout)+1)
	m := shardMap{}
	for i, s := range layout {
		sc.addrs[s.Name] = ports[i]
		s.Addr = ports[i]
		m.Shards = append(m.Shards, s)
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(sc.mapFile, b, 0o644))
	var wg sync.WaitGroup
	var mu sync.Mutex
	for name := range sc.addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := sc.startShard(t, name)
			mu.Lock()
			sc.shards[name] = c
			mu.Unlock()
		}()
	}
	wg.Wait()

	bin, err := buildOnce()
	require.NoError(t, err)
	conf, err := exec.Command(bin, "shard-map", "--nginx", "--map", sc.mapFile, "--fixtures", sc.set, "--listen", ports[len(layout)]).Output()
	require.NoError(t, err)
	sc.proxy = "http://" + ports[len(layout)]
	ngx, err := nginx.Start(dir, string(conf), ports[len(layout)], 1)
	require.NoError(t, err)
	t.Cleanup(func() {
		ngx.Stop()
		if t.Failed() {
			t.Logf("nginx's error log:\n%s", ngx.ErrorLog())
		}
	})
	return sc
}

func (sc *shardCluster) startShard(t testing.TB, name string) *child {
	return startChild(t, filepath.Join(sc.dir, name+".db"), "--shard-map", sc.mapFile, "--shard", name, "--addr", sc.addrs[name], "--fixtures", sc.set)
}

// writeThreeInstitutionSet writes the default set with a third institution, Cedar, a key of
// it and Harbor's users renamed as its own: one institution for each of three shards.
func writeThreeInstitutionSet(t testing.TB, dir string) {
	t.Helper()
	require.NoError(t, os.CopyFS(dir, fixtures.Default()))
	edit := func(file string, add ...map[string]any) {
		b, err := os.ReadFile(filepath.Join(dir, file))
		require.NoError(t, err)
		var recs []map[string]any
		require.NoError(t, json.Unmarshal(b, &recs))
		for _, r := range recs { // Cedar's users: Harbor's, renamed
			if file == fixtures.FileUsers && r["institution_id"] == "ins_harbor" {
				c := map[string]any{}
				for k, v := range r {
					c[k] = v
				}
				c["institution_id"] = "ins_cedar"
				c["platform_id"] = strings.Replace(r["platform_id"].(string), "usr_hfcu_", "usr_cedr_", 1)
				c["user_account_id"] = strings.Replace(r["user_account_id"].(string), "HFCU-", "CEDR-", 1)
				add = append(add, c)
			}
		}
		b, err = json.MarshalIndent(append(recs, add...), "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), b, 0o644))
	}
	edit(fixtures.FileInstitutions, map[string]any{"institution_id": "ins_cedar", "name": "Cedar Valley Bank",
		"vendors": map[string]any{"core": nil, "dbp": nil}, "created_at": "2025-03-01T00:00:00Z"})
	edit(fixtures.FileKeys, map[string]any{"key_id": "key_cedar_allscopes", "institution_id": "ins_cedar", "key": shardKeys["c"],
		"scopes": []string{"read:user", "read:orders", "manage:sessions", "manage:webhooks"}, "created_at": "2025-03-01T00:00:00Z"})
	edit(fixtures.FileUsers)
}

// freeAddrs returns n loopback addresses free a moment ago (the shard map names them before
// the shards listen).
func freeAddrs(t testing.TB, n int) []string {
	t.Helper()
	var (
		addrs []string
		lns   []net.Listener
	)
	for range n { // all open at once, so that no two are the same
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addrs, lns = append(addrs, ln.Addr().String()), append(lns, ln)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return addrs
}

// do sends a call to base+path with the key (partner calls) or the sandbox token.
func shardCall(t *testing.T, method, url, key string, body any) (int, http.Header, gjson.Result) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("x-api-key", key)
	} else {
		req.Header.Set("x-sandbox-token", "crash-token")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, gjson.ParseBytes(raw)
}

// TestShardsBehindNginx runs three shards behind nginx: the contract suite through nginx
// against each, routing by key and by id, a shard killed with SIGKILL (its institutions alone
// answer 503, in the sandbox's shape), restarted with nothing lost, and the mix through nginx.
func TestShardsBehindNginx(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three real shards and nginx")
	}
	start := time.Now()
	sc := startShardCluster(t, threeShards)
	bin, err := buildOnce()
	require.NoError(t, err)
	t.Logf("three shards and nginx up in %s", time.Since(start).Round(time.Millisecond))
	start = time.Now()

	// The contract suite through nginx against each shard: partner calls routed by the keys
	// the shard issued, control-plane calls through /_shards/NAME/.
	var wg sync.WaitGroup
	for name := range sc.shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := exec.Command(bin, "contract", "--base-url", sc.proxy+"/v1", "--sandbox-url", sc.proxy+"/_shards/"+name,
				"--sandbox-token", "crash-token").CombinedOutput()
			if err != nil {
				t.Errorf("contract suite through nginx against shard %s: %v\n%s", name, err, out)
			}
		}()
	}
	wg.Wait()
	t.Logf("the contract suite against three shards through nginx: %s", time.Since(start).Round(time.Millisecond))

	// Partner calls go to their key's shard; a shard reached directly for another's
	// institution answers 421 naming the owner.
	for name, key := range shardKeys {
		code, _, body := shardCall(t, "GET", sc.proxy+"/v1/users/?limit=1", key, nil)
		require.Equal(t, 200, code, "shard %s's key through nginx: %s", name, body.Raw)
	}
	code, _, body := shardCall(t, "GET", "http://"+sc.addrs["a"]+"/v1/users/", shardKeys["b"], nil)
	require.Equal(t, http.StatusMisdirectedRequest, code, body.Raw)
	require.Equal(t, "b", body.Get("shard").String(), body.Raw)
	code, _, body = shardCall(t, "GET", "http://"+sc.addrs["c"]+"/_sandbox/institutions/ins_prairie", "", nil)
	require.Equal(t, http.StatusMisdirectedRequest, code, body.Raw)
	// A process-wide call that names no shard is refused by the proxy, never sent to one.
	code, _, body = shardCall(t, "GET", sc.proxy+"/_sandbox/clock", "", nil)
	require.Equal(t, http.StatusMisdirectedRequest, code, body.Raw)
	require.Contains(t, body.Get("detail").String(), "send it to /_shards/NAME followed by its path", body.Raw)

	// What a shard creates carries its name: an institution made on c, its key and its user
	// are routed to c by nginx without a table.
	inst := mustShard(t, "POST", sc.proxy+"/_shards/c/_sandbox/institutions", map[string]any{"name": "Made on c", "vendors": map[string]any{"core": nil, "dbp": nil}}).Get("institution_id").String()
	require.True(t, strings.HasPrefix(inst, "ins_c"), inst)
	key := mustShard(t, "POST", sc.proxy+"/_sandbox/institutions/"+inst+"/keys", map[string]any{"scopes": []string{"read:user"}}).Get("key").String()
	require.True(t, strings.HasPrefix(key, "sbx_c"), "a key issued by shard c: %s", key)
	code, _, body = shardCall(t, "GET", sc.proxy+"/v1/users/", key, nil)
	require.Equal(t, 200, code, body.Raw)

	// Data written to shard b before it is killed.
	user := mustShard(t, "POST", sc.proxy+"/_sandbox/institutions/ins_prairie/users", map[string]any{"user_account_id": "SHARD-KILL-1",
		"accounts": []any{map[string]any{"product": "crypto", "kyc_status": "approved"}}}).Get("platform_id").String()
	require.True(t, strings.HasPrefix(user, "usr_b"), user)

	b := sc.shards["b"]
	require.NoError(t, b.cmd.Process.Kill()) // SIGKILL
	_ = b.cmd.Wait()
	code, hdr, body := shardCall(t, "GET", sc.proxy+"/v1/users/", shardKeys["b"], nil)
	require.Equal(t, http.StatusServiceUnavailable, code, body.Raw)
	require.Equal(t, "5", hdr.Get("Retry-After"))
	require.Equal(t, "application/json", hdr.Get("Content-Type"))
	require.Equal(t, "b", body.Get("shard").String(), body.Raw)
	require.NotEmpty(t, body.Get("detail").String(), body.Raw)
	code, _, _ = shardCall(t, "GET", sc.proxy+"/_sandbox/users/"+user, "", nil)
	require.Equal(t, http.StatusServiceUnavailable, code, "a control-plane call about shard b's user")
	for _, k := range []string{shardKeys["a"], shardKeys["c"], key} {
		code, _, body := shardCall(t, "GET", sc.proxy+"/v1/users/?limit=1", k, nil)
		require.Equal(t, 200, code, "the other shards keep serving: %s", body.Raw)
	}

	sc.shards["b"] = sc.startShard(t, "b")
	got := mustShard(t, "GET", sc.proxy+"/_sandbox/users/"+user, nil)
	require.Equal(t, "SHARD-KILL-1", got.Get("user_account_id").String(), got.Raw)
	code, _, body = shardCall(t, "GET", sc.proxy+"/v1/users/"+user+"/?user_account_id_type=platform", shardKeys["b"], nil)
	require.Equal(t, 200, code, "the user written before the kill, through nginx after the restart: %s", body.Raw)

	// The mix through nginx, on two shards at once.
	for _, name := range []string{"a", "b"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := exec.Command(bin, "load", "--scenario", "mix", "--target", sc.proxy, "--api-key", shardKeys[name],
				"--fixtures", sc.set, "--connections", "4", "--warmup", "0s", "--duration", "2s", "--no-ceiling").CombinedOutput()
			if err != nil {
				t.Errorf("the mix through nginx on shard %s: %v\n%s", name, err, out)
			}
		}()
	}
	wg.Wait()
}

func mustShard(t *testing.T, method, url string, body any) gjson.Result {
	t.Helper()
	code, _, res := shardCall(t, method, url, "", body)
	require.Less(t, code, 300, "%s %s: %d %s", method, url, code, res.Raw)
	return res
}

func TestShardMapRefusals(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"bad name", `{"shards":[{"name":"a-b","addr":"x:1","institutions":[]}]}`, "1 to 8 letters or digits"},
		{"empty", `{"shards":[{"name":"a","addr":"x:1","institutions":[]}]}`, "lists no institution"},
		{"prefix", `{"shards":[{"name":"a","addr":"x:1","institutions":["i"]},{"name":"ab","addr":"x:2","institutions":["j"]}]}`, "neither may begin the other"},
		{"twice", `{"shards":[{"name":"a","addr":"x:1","institutions":["ins_harbor"]},{"name":"b","addr":"x:2","institutions":["ins_harbor"]}]}`, "one shard serves each"},
		{"no addr", `{"shards":[{"name":"a"}]}`, "has no addr"},
		{"unknown field", `{"shards":[],"default":"a"}`, "unknown field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "m.json")
			require.NoError(t, os.WriteFile(f, []byte(c.body), 0o644))
			_, err := readShardMap(f)
			require.Error(t, err)
			require.Contains(t, err.Error(), c.want)
		})
	}
	// Every institution of the set in exactly one shard, and none the set lacks.
	f := filepath.Join(t.TempDir(), "m.json")
	require.NoError(t, os.WriteFile(f, []byte(`{"shards":[{"name":"a","addr":"x:1","institutions":["ins_harbor","ins_nowhere"]}]}`), 0o644))
	m, err := readShardMap(f)
	require.NoError(t, err)
	_, err = shardOwners(fixtures.Default(), m)
	require.Error(t, err)
	require.Contains(t, err.Error(), "ins_prairie are in no shard")
	m.Shards = append(m.Shards, shard{Name: "b", Addr: "x:2", Institutions: []string{"ins_prairie"}})
	_, err = shardOwners(fixtures.Default(), m)
	require.Error(t, err)
	require.Contains(t, err.Error(), "ins_nowhere, which is not in the fixture set")
}

// TestServeInstitutionsWithoutAMap serves one institution of the default set: its store holds
// that one alone, and the other's key and id are answered 421, never 401 or 404.
func TestServeInstitutionsWithoutAMap(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real process")
	}
	c := startChild(t, filepath.Join(t.TempDir(), "one.db"), "--institutions", "ins_harbor", "--shard", "h1")
	code, _, body := shardCall(t, "GET", c.base+"/v1/users/?limit=1", shardKeys["a"], nil)
	require.Equal(t, 200, code, body.Raw)
	code, _, body = shardCall(t, "GET", c.base+"/v1/users/", shardKeys["b"], nil)
	require.Equal(t, http.StatusMisdirectedRequest, code, body.Raw)
	require.Contains(t, body.Get("detail").String(), "ins_prairie is not served by this shard", body.Raw)
	code, _, body = shardCall(t, "GET", c.base+"/_sandbox/institutions/ins_prairie/users", "", nil)
	require.Equal(t, http.StatusMisdirectedRequest, code, body.Raw)
	list := c.mustCall(t, "GET", "/_sandbox/institutions", nil)
	require.Equal(t, []any{"ins_harbor"}, list.Get("institutions.#.institution_id").Value(), list.Raw)
	inst := c.mustCall(t, "POST", "/_sandbox/institutions", map[string]any{"name": "Made here", "vendors": map[string]any{"core": nil, "dbp": nil}}).Get("institution_id").String()
	require.True(t, strings.HasPrefix(inst, "ins_h1"), "an institution made on shard h1: %s", inst)
}

// TestBenchShards is `make bench-shards` (docs/SCALING.md): the mix on each of three
// institutions at once, against one process serving all three, against that process behind
// nginx, and against three shards behind nginx. It runs only when PARTNERSIM_BENCH_SHARDS is
// set; PARTNERSIM_BENCH_SHARDS_DURATION (default 10s) and _CONNECTIONS (per institution,
// default 8) size it.
func TestBenchShards(t *testing.T) {
	if os.Getenv("PARTNERSIM_BENCH_SHARDS") == "" {
		t.Skip("a measurement, not a test: make bench-shards")
	}
	duration, conns := "10s", "8"
	if d := os.Getenv("PARTNERSIM_BENCH_SHARDS_DURATION"); d != "" {
		duration = d
	}
	if c := os.Getenv("PARTNERSIM_BENCH_SHARDS_CONNECTIONS"); c != "" {
		conns = c
	}
	bin, err := buildOnce()
	require.NoError(t, err)
	load, _ := os.ReadFile("/proc/loadavg")
	var rows []string
	measure := func(layout, target, set string) {
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			rps      float64
			p99, p50 float64
			errs     int64
		)
		for _, name := range []string{"a", "b", "c"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out := filepath.Join(t.TempDir(), "load.json")
				b, err := exec.Command(bin, "load", "--scenario", "mix", "--target", target, "--api-key", shardKeys[name], "--fixtures", set,
					"--connections", conns, "--warmup", "2s", "--duration", duration, "--no-ceiling", "--json", out).CombinedOutput()
				if err != nil {
					t.Errorf("%s, institution of shard %s: %v\n%s", layout, name, err, b)
					return
				}
				rep, err := os.ReadFile(out)
				if err != nil {
					t.Error(err)
					return
				}
				r := gjson.GetBytes(rep, "runs.0.target")
				mu.Lock()
				defer mu.Unlock()
				rps += r.Get("req_per_s").Float()
				p50, p99 = max(p50, r.Get("latency.p50_ms").Float()), max(p99, r.Get("latency.p99_ms").Float())
				errs += r.Get("errors").Int()
			}()
		}
		wg.Wait()
		rows = append(rows, fmt.Sprintf("| %s | %.0f | %.1f | %.1f | %d |", layout, rps, p50, p99, errs))
	}

	// One process serving the three institutions, reached directly and through nginx.
	one := startShardCluster(t, []shard{{Name: "a", Institutions: []string{"ins_harbor", "ins_prairie", "ins_cedar"}}})
	measure("1 process, direct", "http://"+one.addrs["a"], one.set)
	measure("1 process behind nginx", one.proxy, one.set)
	for _, c := range one.shards {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
	}
	three := startShardCluster(t, threeShards)
	measure("3 shards behind nginx", three.proxy, three.set)

	n, _ := strconv.Atoi(conns)
	fmt.Printf("\nthe mix on three institutions at once (%d connections each, %s measured after 2s warm-up; load average at start %s)\n\n",
		n, duration, strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Println("| layout | req/s (sum) | p50 ms (worst) | p99 ms (worst) | errors |\n| --- | --- | --- | --- | --- |")
	fmt.Println(strings.Join(rows, "\n"))
	fmt.Printf("\nmeasured %s\n", time.Now().UTC().Format(time.RFC3339))
}
