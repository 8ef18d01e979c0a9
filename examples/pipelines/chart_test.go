package pipelines

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

const chart = "../../deploy/chart/partnersim"

// helmTemplate renders the chart with the Helm the Makefile pins and answers its documents, or
// Helm's error output.
func helmTemplate(t *testing.T, args ...string) ([]map[string]any, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds Helm")
	}
	makefile, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	pin := regexp.MustCompile(`(?m)^HELM \?= (\S+)$`).FindSubmatch(makefile)
	require.NotNil(t, pin, "the Makefile pins no HELM")
	cmd := exec.Command("go", append([]string{"run", string(pin[1]), "template", "lint", chart}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, stderr.String()
	}
	var docs []map[string]any
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
	return docs, ""
}

func byKind(docs []map[string]any, kind string) []map[string]any {
	var out []map[string]any
	for _, d := range docs {
		if d["kind"] == kind {
			out = append(out, d)
		}
	}
	return out
}

// dig follows keys and list indexes through a decoded document.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch p := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[p]
		case int:
			l, _ := v.([]any)
			if p >= len(l) {
				return nil
			}
			v = l[p]
		}
	}
	return v
}

func containerArgs(set map[string]any) []string {
	var args []string
	for _, a := range dig(set, "spec", "template", "spec", "containers", 0, "args").([]any) {
		args = append(args, a.(string))
	}
	return args
}

// Unsharded, the chart is one shard serving every institution: its probes are the sandbox's,
// its token comes from the Secret, its store from a claim of its own.
func TestChartOneShard(t *testing.T) {
	docs, errs := helmTemplate(t, "-f", chart+"/ci/default-values.yaml")
	require.Empty(t, errs)
	sets := byKind(docs, "StatefulSet")
	require.Len(t, sets, 1)
	set := sets[0]
	require.Equal(t, "lint", dig(set, "metadata", "name"))
	require.EqualValues(t, 1, dig(set, "spec", "replicas"))
	c := dig(set, "spec", "template", "spec", "containers", 0)
	require.Equal(t, "/livez", dig(c, "startupProbe", "httpGet", "path"))
	require.Equal(t, "/livez", dig(c, "livenessProbe", "httpGet", "path"))
	require.Equal(t, "/readyz", dig(c, "readinessProbe", "httpGet", "path"))
	require.Equal(t, "lint-token", dig(c, "env", 0, "valueFrom", "secretKeyRef", "name"))
	require.Equal(t, "data", dig(set, "spec", "volumeClaimTemplates", 0, "metadata", "name"))
	for _, a := range containerArgs(set) {
		require.NotContains(t, a, "--institutions", "one shard serves every institution")
	}
	require.Len(t, byKind(docs, "Secret"), 1)
	require.Len(t, byKind(docs, "NetworkPolicy"), 1)
}

// Sharded, each shard is a StatefulSet and a Service of its own, serving its institutions only,
// and no Service selects the pods of two shards but the StatefulSets' governing one.
func TestChartShards(t *testing.T) {
	docs, errs := helmTemplate(t, "-f", chart+"/ci/sharded-values.yaml")
	require.Empty(t, errs)
	sets := byKind(docs, "StatefulSet")
	require.Len(t, sets, 2)
	want := map[string][]string{"lint-a": {"--shard=a", "--institutions=ins_harbor"}, "lint-b": {"--shard=b", "--institutions=ins_prairie"}}
	for _, set := range sets {
		name := dig(set, "metadata", "name").(string)
		require.Subset(t, containerArgs(set), want[name], name)
		require.Equal(t, dig(set, "spec", "selector", "matchLabels"), dig(set, "spec", "template", "metadata", "labels"))
	}
	services := map[string]any{}
	for _, s := range byKind(docs, "Service") {
		services[dig(s, "metadata", "name").(string)] = dig(s, "spec", "selector", "partnersim.dev/shard")
	}
	require.Equal(t, map[string]any{"lint-a": "a", "lint-b": "b", "lint-shards": nil, "lint": nil}, services)
}

// Sharded, the release's own Service is the router's, and the router's configuration is what
// `partnersim shard-map --nginx` writes from the chart's shard map: the init container's own
// arguments, run by the real binary, route each institution to its shard's Service.
func TestChartRouter(t *testing.T) {
	docs, errs := helmTemplate(t, "-f", chart+"/ci/sharded-values.yaml")
	require.Empty(t, errs)
	var router map[string]any
	for _, d := range byKind(docs, "Deployment") {
		if dig(d, "metadata", "name") == "lint-router" {
			router = d
		}
	}
	require.NotNil(t, router)
	for _, s := range byKind(docs, "Service") {
		if dig(s, "metadata", "name") == "lint" {
			require.Equal(t, dig(router, "spec", "template", "metadata", "labels"), dig(s, "spec", "selector"))
		}
	}
	maps := byKind(docs, "ConfigMap")
	require.Len(t, maps, 1)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "shards.json"), []byte(dig(maps[0], "data", "shards.json").(string)), 0o644))
	init := dig(router, "spec", "template", "spec", "initContainers", 0)
	var args []string
	for _, a := range dig(init, "args").([]any) {
		a := strings.NewReplacer("/etc/partnersim", dir, "/etc/nginx/conf.d", dir).Replace(a.(string))
		args = append(args, a)
	}
	out, err := exec.Command(partnersim(t)+"/partnersim", args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	conf, err := os.ReadFile(filepath.Join(dir, "default.conf"))
	require.NoError(t, err)
	for _, want := range []string{"server lint-a:8080 ", "server lint-b:8080 ", "listen 0.0.0.0:8080", `"ins_harbor" a;`, `"ins_prairie" b;`} {
		require.Contains(t, string(conf), want)
	}
}

// Each shard the chart renders starts: the real binary, given the StatefulSet's own arguments
// (its addresses on loopback ports, its volume a temporary folder), answers /readyz.
func TestChartShardsStart(t *testing.T) {
	docs, errs := helmTemplate(t, "-f", chart+"/ci/sharded-values.yaml")
	require.Empty(t, errs)
	for _, set := range byKind(docs, "StatefulSet") {
		t.Run(dig(set, "metadata", "name").(string), func(t *testing.T) {
			addr := "127.0.0.1:" + freePort(t)
			var args []string
			for _, a := range containerArgs(set) {
				flag, _, _ := strings.Cut(a, "=")
				switch flag {
				case "--addr":
					a = "--addr=" + addr
				case "--metrics-addr":
					a = "--metrics-addr=127.0.0.1:" + freePort(t)
				case "--db":
					a = "--db=" + filepath.Join(t.TempDir(), "partnersim.db")
				}
				args = append(args, a)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, partnersim(t)+"/partnersim", args...)
			cmd.Env = append(os.Environ(), "PARTNERSIM_SANDBOX_TOKEN=chart-test-token-of-24-chars")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			require.NoError(t, cmd.Start())
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			defer func() { cancel(); <-exited }()
			for {
				select {
				case err := <-exited:
					t.Fatalf("serve %s exited (%v):\n%s", strings.Join(args, " "), err, out.String())
				case <-ctx.Done():
					t.Fatalf("serve %s never became ready:\n%s", strings.Join(args, " "), out.String())
				case <-time.After(50 * time.Millisecond):
				}
				if res, err := http.Get("http://" + addr + "/readyz"); err == nil {
					res.Body.Close()
					if res.StatusCode == http.StatusOK {
						return
					}
				}
			}
		})
	}
}

// Values the chart refuses, each with a sentence that says what to give instead.
func TestChartRefusesBadValues(t *testing.T) {
	cases := map[string]struct{ args []string }{
		"token.value must be at least 24 characters": {[]string{"--set", "token.value=short"}},
		`shards: name "a_1" must be`:                 {[]string{"-f", chart + "/ci/default-values.yaml", "--set-json", `shards=[{"name":"a_1","institutions":["ins_harbor"]}]`}},
		`shards: shard "a" names no institutions`:    {[]string{"-f", chart + "/ci/default-values.yaml", "--set-json", `shards=[{"name":"a"}]`}},
	}
	for want, c := range cases {
		t.Run(want, func(t *testing.T) {
			docs, errs := helmTemplate(t, c.args...)
			require.Nil(t, docs)
			require.Contains(t, errs, want)
		})
	}
}
