package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/partnersim/partnersim/fixtures"
)

// shardMap is a shard map file (decisions D20): which shard serves which of the fixture set's
// institutions, and where it listens. Both `serve --shard-map` and `shard-map --nginx` read it,
// so the shards and the proxy in front of them cannot disagree.
type shardMap struct {
	Shards []shard `json:"shards"`
}

// shard is one process: Name is also the tag that begins every id and key it issues.
type shard struct {
	Name         string   `json:"name"`
	Addr         string   `json:"addr"`
	Institutions []string `json:"institutions"`
}

var shardName = regexp.MustCompile(`^[0-9A-Za-z]{1,8}$`)

// readShardMap reads and checks a shard map file.
func readShardMap(file string) (*shardMap, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--shard-map: %w", err)
	}
	var m shardMap
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("--shard-map %s: %w (want {\"shards\":[{\"name\":\"a\",\"addr\":\"127.0.0.1:8081\",\"institutions\":[\"ins_harbor\"]}]})", file, err)
	}
	if len(m.Shards) == 0 {
		return nil, fmt.Errorf("--shard-map %s: no shards", file)
	}
	owner := map[string]string{}
	for i, s := range m.Shards {
		if !shardName.MatchString(s.Name) {
			return nil, fmt.Errorf("--shard-map %s: shard name %q: 1 to 8 letters or digits (it begins every id and key the shard issues)", file, s.Name)
		}
		for _, o := range m.Shards[:i] {
			if strings.HasPrefix(s.Name, o.Name) || strings.HasPrefix(o.Name, s.Name) {
				return nil, fmt.Errorf("--shard-map %s: shard names %q and %q: neither may begin the other (a proxy routes issued ids by their first characters)", file, o.Name, s.Name)
			}
		}
		if s.Addr == "" {
			return nil, fmt.Errorf("--shard-map %s: shard %q has no addr (host:port)", file, s.Name)
		}
		if len(s.Institutions) == 0 {
			return nil, fmt.Errorf("--shard-map %s: shard %q lists no institution: each serves at least one of the set's (institutions created at run time join the shard that creates them)", file, s.Name)
		}
		for _, id := range s.Institutions {
			if o, dup := owner[id]; dup {
				return nil, fmt.Errorf("--shard-map %s: institution %s is in shards %q and %q: one shard serves each", file, id, o, s.Name)
			}
			owner[id] = s.Name
		}
	}
	return &m, nil
}

// shardOf returns the shard with this name.
func (m *shardMap) shardOf(name string) (shard, bool) {
	i := slices.IndexFunc(m.Shards, func(s shard) bool { return s.Name == name })
	if i < 0 {
		return shard{}, false
	}
	return m.Shards[i], true
}

// owners is, for a fixture set under a shard map, the shard of every fixture id a request can
// carry: institution ids, keys and key ids, users' platform ids and transaction ids.
type owners struct {
	keys map[string]string // fixture key → shard name
	ids  map[string]string // fixture institution, key, user or transaction id → shard name
	// institution of each fixture key and id, for answers that name it.
	institution map[string]string
	m           *shardMap
}

// shardedFiles are the fixture files split by institution (each record's institution_id), with
// the fields of their records that requests carry.
var shardedFiles = map[string][]string{
	fixtures.FileInstitutions: {"institution_id"},
	fixtures.FileKeys:         {"key", "key_id"},
	fixtures.FileMembers:      nil,
	fixtures.FileUsers:        {"platform_id"},
	fixtures.FileTransactions: {"transaction_id"},
}

// shardOwners reads the set's files once and checks that the map places each of its
// institutions exactly once.
func shardOwners(fsys fs.FS, m *shardMap) (*owners, error) {
	instShard := map[string]string{}
	for _, s := range m.Shards {
		for _, id := range s.Institutions {
			instShard[id] = s.Name
		}
	}
	o := &owners{keys: map[string]string{}, ids: map[string]string{}, institution: map[string]string{}, m: m}
	var unplaced []string
	seen := map[string]bool{}
	for _, file := range []string{fixtures.FileInstitutions, fixtures.FileKeys, fixtures.FileUsers, fixtures.FileTransactions} {
		err := eachRecord(fsys, file, func(_ json.RawMessage, fields map[string]string) {
			inst := fields["institution_id"]
			s, ok := instShard[inst]
			if file == fixtures.FileInstitutions {
				seen[inst] = true
				if !ok {
					unplaced = append(unplaced, inst)
				}
			}
			for _, f := range shardedFiles[file] {
				if v := fields[f]; v != "" && f == "key" {
					o.keys[v], o.institution[v] = s, inst
				} else if v != "" {
					o.ids[v], o.institution[v] = s, inst
				}
			}
		})
		if err != nil {
			return nil, err
		}
	}
	if len(unplaced) > 0 {
		return nil, fmt.Errorf("shard map: the fixture set's institutions %s are in no shard: list each in one shard's \"institutions\"", strings.Join(unplaced, ", "))
	}
	for id, s := range instShard {
		if !seen[id] {
			return nil, fmt.Errorf("shard map: shard %q lists %s, which is not in the fixture set (institutions created at run time are placed by the shard that creates them)", s, id)
		}
	}
	return o, nil
}

// elsewhere is, without a shard map, the shard that serves the set's other institutions.
const elsewhere = "-"

// shardOf returns the shard that serves an id or key (known: the fixtures' own, by id or by
// key): a fixture one's from the set, any other by the shard
// name it begins with (after its "prefix_"); false when none is known to.
func (o *owners) shardOf(known map[string]string, id string) (string, bool) {
	if s, ok := known[id]; ok {
		return s, true
	}
	_, rest, ok := strings.Cut(id, "_")
	if !ok {
		return "", false
	}
	for _, s := range o.m.Shards {
		if s.Name != "" && s.Name != elsewhere && strings.HasPrefix(rest, s.Name) {
			return s.Name, true
		}
	}
	return "", false
}

// eachRecord calls fn with every record of a fixture file that holds a JSON array (a missing
// optional file has none) and the record's top-level string fields.
func eachRecord(fsys fs.FS, file string, fn func(raw json.RawMessage, fields map[string]string)) error {
	f, err := fsys.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return fmt.Errorf("fixtures %s: want a JSON array", file)
	}
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("fixtures %s: %w", file, err)
		}
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(raw, &rec); err != nil {
			return fmt.Errorf("fixtures %s: %w", file, err)
		}
		fields := map[string]string{}
		for _, k := range []string{"institution_id", "key", "key_id", "platform_id", "transaction_id"} {
			var s string
			if v, ok := rec[k]; ok && json.Unmarshal(v, &s) == nil {
				fields[k] = s
			}
		}
		fn(raw, fields)
	}
	return nil
}

// writeShardFixtures copies the set in fsys into dir, keeping of each file split by
// institution only the records of the shard's institutions: the shard's store holds its own
// institutions and nothing of the others'.
func writeShardFixtures(fsys fs.FS, dir string, own []string) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		if _, split := shardedFiles[p]; !split || path.Dir(p) != "." {
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, b, 0o644)
		}
		var buf bytes.Buffer
		buf.WriteString("[")
		n := 0
		err = eachRecord(fsys, p, func(raw json.RawMessage, fields map[string]string) {
			if !slices.Contains(own, fields["institution_id"]) {
				return
			}
			if n > 0 {
				buf.WriteString(",")
			}
			buf.WriteString("\n")
			buf.Write(raw)
			n++
		})
		if err != nil {
			return err
		}
		buf.WriteString("\n]\n")
		return os.WriteFile(dst, buf.Bytes(), 0o644)
	})
}

// shardGuard answers, for the shard named self, 421 Misdirected Request to a request about an
// institution another shard serves — by its API key or by the id in a control-plane path —
// naming that shard, instead of a 401 or 404 that would be wrong: the request reached the
// wrong process (a stale proxy map, or an address used directly).
type shardGuard struct {
	self   string
	owners *owners
	next   http.Handler
}

// controlID matches the control-plane paths that name an institution, key, user, transaction,
// event or delivery by id.
var controlID = regexp.MustCompile(`^/_sandbox/(?:institutions|users|transactions|keys|events|deliveries)/([^/]+)`)

func (g *shardGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if k := r.Header.Get("x-api-key"); k != "" {
		if s, ok := g.owners.shardOf(g.owners.keys, k); ok && s != g.self {
			g.misdirected(w, s, "this API key's institution"+g.named(k))
			return
		}
	}
	if m := controlID.FindStringSubmatch(r.URL.Path); m != nil {
		if s, ok := g.owners.shardOf(g.owners.ids, m[1]); ok && s != g.self {
			g.misdirected(w, s, m[1])
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

func (g *shardGuard) named(id string) string {
	if inst := g.owners.institution[id]; inst != "" {
		return " " + inst
	}
	return ""
}

func (g *shardGuard) misdirected(w http.ResponseWriter, owner, what string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusMisdirectedRequest)
	body := map[string]string{"detail": fmt.Sprintf("%s is not served by this shard: send it through the proxy that routes to its shard", what)}
	if owner != elsewhere {
		body["detail"] = fmt.Sprintf("%s is served by shard %s, not by this shard (%s): send it through the proxy the shard map configures", what, owner, g.self)
		body["shard"] = owner
	}
	b, _ := json.Marshal(body)
	_, _ = w.Write(b)
}

// shardServe prepares `serve --shard-map FILE --shard NAME`, or `serve --institutions LIST
// [--shard NAME]` without a map: the shard's own copy of the set (in a temporary directory,
// removed by the returned cleanup), its id tag, and the guard.
func shardServe(mapFile, name string, institutions []string, fsys fs.FS) (own fs.FS, wrap func(http.Handler) http.Handler, self shard, cleanup func(), err error) {
	var m *shardMap
	switch {
	case mapFile != "" && len(institutions) > 0:
		return nil, nil, shard{}, nil, errors.New("--institutions goes without --shard-map: the map lists each shard's institutions")
	case mapFile != "" && name == "":
		return nil, nil, shard{}, nil, errors.New("--shard-map needs --shard NAME: which of its shards this process is")
	case mapFile != "":
		if m, err = readShardMap(mapFile); err != nil {
			return nil, nil, shard{}, nil, err
		}
	case len(institutions) == 0:
		return nil, nil, shard{}, nil, errors.New("--shard needs --shard-map FILE or --institutions LIST: which institutions this shard serves")
	default:
		// Without a map the other institutions of the set are served by an unnamed elsewhere.
		if name != "" && !shardName.MatchString(name) {
			return nil, nil, shard{}, nil, fmt.Errorf("--shard %q: 1 to 8 letters or digits (it begins every id and key the shard issues)", name)
		}
		var rest []string
		err := eachRecord(fsys, fixtures.FileInstitutions, func(_ json.RawMessage, f map[string]string) {
			if !slices.Contains(institutions, f["institution_id"]) {
				rest = append(rest, f["institution_id"])
			}
		})
		if err != nil {
			return nil, nil, shard{}, nil, err
		}
		m = &shardMap{Shards: []shard{{Name: name, Institutions: institutions}, {Name: elsewhere, Institutions: rest}}}
	}
	self, ok := m.shardOf(name)
	if !ok {
		names := make([]string, len(m.Shards))
		for i, s := range m.Shards {
			names[i] = s.Name
		}
		return nil, nil, shard{}, nil, fmt.Errorf("--shard %q is not in %s (its shards: %s)", name, mapFile, strings.Join(names, ", "))
	}
	o, err := shardOwners(fsys, m)
	if err != nil {
		return nil, nil, shard{}, nil, err
	}
	dir, err := os.MkdirTemp("", "partnersim-shard-")
	if err != nil {
		return nil, nil, shard{}, nil, err
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	if err := writeShardFixtures(fsys, dir, self.Institutions); err != nil {
		cleanup()
		return nil, nil, shard{}, nil, fmt.Errorf("the shard's fixtures: %w", err)
	}
	wrap = func(h http.Handler) http.Handler { return &shardGuard{self: name, owners: o, next: h} }
	return os.DirFS(dir), wrap, self, cleanup, nil
}

// writeNginx writes the nginx configuration (http context: a conf.d file) that routes to the
// map's shards: partner calls by their x-api-key, control-plane calls by the id in their path,
// /_shards/NAME/… to the named shard, and a down shard's calls to the sandbox's JSON 503.
func writeNginx(w io.Writer, m *shardMap, o *owners, listen, source string) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Written by `partnersim shard-map --nginx` from %s (decisions D20). Include it in nginx's\n", source)
	p("# http block. The fixture keys below are the set's published sandbox keys: public, printed by\n")
	p("# `serve` and committed with the set, never secrets. Keys and ids issued at run time are not\n")
	p("# listed: each begins with the name of the shard that issued it, matched by prefix.\n\n")
	for _, s := range m.Shards {
		// max_fails=0: a restarted shard is used again at once, never skipped for fail_timeout.
		p("upstream partnersim_%s {\n    server %s max_fails=0;\n    keepalive 16;\n}\n\n", s.Name, s.Addr)
	}
	size := 2048
	for size < 2*(len(o.keys)+len(o.ids)) {
		size *= 2
	}
	p("# Room for the fixture tables (ids run past nginx's default bucket of 64 bytes).\nmap_hash_max_size %d;\nmap_hash_bucket_size 128;\n\n", size)
	p("# The shard of a partner call: its key's (exact fixture keys first, then issued keys by prefix);\n")
	p("# an unknown key goes to the first shard, which answers 401 as every shard would.\n")
	p("map $http_x_api_key $partnersim_key_shard {\n    default %s;\n", m.Shards[0].Name)
	for _, k := range slices.Sorted(maps.Keys(o.keys)) {
		p("    %q %s;\n", k, o.keys[k])
	}
	for _, s := range m.Shards {
		p("    \"~^[a-z]+_%s\" %s;\n", s.Name, s.Name)
	}
	p("}\n\n")
	p("# The id a control-plane path names, and its shard.\n")
	p("map $uri $partnersim_path_id {\n    default \"\";\n    \"~^/_sandbox/(?:institutions|users|transactions|keys|events|deliveries)/([^/]+)\" $1;\n}\n\n")
	p("map $partnersim_path_id $partnersim_id_shard {\n    default \"\";\n")
	for _, id := range slices.Sorted(maps.Keys(o.ids)) {
		p("    %q %s;\n", id, o.ids[id])
	}
	for _, s := range m.Shards {
		p("    \"~^[a-z]+_%s\" %s;\n", s.Name, s.Name)
	}
	p("}\n\n")
	names := make([]string, len(m.Shards))
	for i, s := range m.Shards {
		names[i] = s.Name
	}
	p("server {\n    listen %s;\n", listen)
	p("    default_type application/json;\n")
	p("    client_max_body_size 0;          # the shard sets its own limits and answers them in its own shape\n")
	p("    large_client_header_buffers 8 64k;\n")
	p("    proxy_http_version 1.1;\n    proxy_set_header Connection \"\";\n")
	p("    proxy_set_header Host $http_host;\n    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n")
	p("    proxy_request_buffering off;\n    proxy_next_upstream off;\n")
	p("    error_page 502 504 = @partnersim_down;\n\n")
	p("    # A shard by name: every control-plane call, and the calls that name no institution (the\n")
	p("    # clock, DNS, snapshots, reset, faults, the delivery log, the institutions list).\n")
	for _, s := range m.Shards {
		p("    location /_shards/%s/ {\n        set $partnersim_shard %s;\n        proxy_pass http://partnersim_%s/;\n", s.Name, s.Name, s.Name)
		p("        proxy_redirect ~^(https?://[^/]+)?/(.*)$ $1/_shards/%s/$2;\n    }\n", s.Name)
	}
	p("\n    # The documents every shard serves alike.\n")
	p("    location = /_sandbox/openapi.json { set $partnersim_shard %s; proxy_pass http://partnersim_%s; }\n", m.Shards[0].Name, m.Shards[0].Name)
	p("    location = /_sandbox/state-adapter.json { set $partnersim_shard %s; proxy_pass http://partnersim_%s; }\n\n", m.Shards[0].Name, m.Shards[0].Name)
	p("    # The control plane by the id in the path; a call that names none must name its shard.\n")
	p("    location /_sandbox/ {\n        set $partnersim_shard $partnersim_id_shard;\n")
	p("        if ($partnersim_shard = \"\") {\n")
	p("            return 421 '{\"detail\":\"this control-plane call names no institution, key, user, transaction, event or delivery this proxy can place: send it to /_shards/NAME followed by its path, e.g. /_shards/NAME/_sandbox/clock (shards: %s)\"}';\n", strings.Join(names, ", "))
	p("        }\n        proxy_pass http://partnersim_$partnersim_shard;\n    }\n\n")
	p("    # The partner API (and /health, /openapi.json, /docs) by the key.\n")
	p("    location / {\n        set $partnersim_shard $partnersim_key_shard;\n        proxy_pass http://partnersim_$partnersim_shard;\n    }\n\n")
	p("    # A shard that does not answer: the sandbox's own 503 shape, for its calls only.\n")
	p("    location @partnersim_down {\n        add_header Retry-After 5 always;\n")
	p("        return 503 '{\"detail\":\"shard $partnersim_shard is unavailable; retry later\",\"shard\":\"$partnersim_shard\"}';\n    }\n}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// newShardMapCmd is `partnersim shard-map`: the proxy configuration for a shard map file.
func newShardMapCmd() *cobra.Command {
	var (
		mapFile, fixturesDir, listen, output string
		nginx                                bool
	)
	cmd := &cobra.Command{
		Use:   "shard-map --nginx --map shards.json [--fixtures DIR] [--listen ADDR] [--output FILE]",
		Short: "write the nginx configuration that routes to the shards of a shard map file",
		Long: "Writes, for a shard map file (the one `serve --shard-map FILE --shard NAME` reads), nginx's\n" +
			"configuration (http context, e.g. /etc/nginx/conf.d/partnersim.conf): partner calls routed by\n" +
			"their x-api-key, control-plane calls by the institution, key, user, transaction, event or\n" +
			"delivery id in their path, /_shards/NAME/… to the shard named, and a down shard's calls\n" +
			"answered with the sandbox's 503 JSON and Retry-After (decisions D20).",
		Example: `  partnersim shard-map --nginx --map shards.json --listen 0.0.0.0:8080 > /etc/nginx/conf.d/partnersim.conf`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !nginx {
				return errors.New("shard-map: say which proxy's configuration to write: --nginx")
			}
			if mapFile == "" {
				return errors.New("shard-map: --map FILE is required (the shard map file the shards serve)")
			}
			m, err := readShardMap(mapFile)
			if err != nil {
				return err
			}
			fsys, source := fixtures.Default(), "the embedded fixture set"
			if fixturesDir != "" {
				fsys, source = os.DirFS(fixturesDir), "the fixture set "+fixturesDir
			}
			o, err := shardOwners(fsys, m)
			if err != nil {
				return err
			}
			from := filepath.Base(mapFile) + " and " + source
			if output == "" {
				return writeNginx(cmd.OutOrStdout(), m, o, listen, from)
			}
			var conf bytes.Buffer
			if err := writeNginx(&conf, m, o, listen, from); err != nil {
				return err
			}
			return os.WriteFile(output, conf.Bytes(), 0o644)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&nginx, "nginx", false, "write nginx's configuration")
	fs.StringVar(&mapFile, "map", "", "the shard map file (required)")
	fs.StringVar(&fixturesDir, "fixtures", "", "the fixture set the shards serve (default: the embedded set)")
	fs.StringVar(&listen, "listen", "127.0.0.1:8080", "nginx's listen address for the sandbox")
	fs.StringVar(&output, "output", "", "write the configuration to this file (default stdout; an image without a shell, as the chart's router runs it)")
	return cmd
}
