package pipelines

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"testing"

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
	want := map[string]string{"lint-a": "--institutions=ins_harbor", "lint-b": "--institutions=ins_prairie,ins_more"}
	for _, set := range sets {
		name := dig(set, "metadata", "name").(string)
		require.Contains(t, containerArgs(set), want[name], name)
		require.Equal(t, dig(set, "spec", "selector", "matchLabels"), dig(set, "spec", "template", "metadata", "labels"))
	}
	services := map[string]any{}
	for _, s := range byKind(docs, "Service") {
		services[dig(s, "metadata", "name").(string)] = dig(s, "spec", "selector", "partnersim.dev/shard")
	}
	require.Equal(t, map[string]any{"lint-a": "a", "lint-b": "b", "lint-shards": nil}, services)
}

// Values the chart refuses, each with a sentence that says what to give instead.
func TestChartRefusesBadValues(t *testing.T) {
	cases := map[string]struct{ args []string }{
		"token.value must be at least 24 characters": {[]string{"--set", "token.value=short"}},
		`shards: name "A_1" must be`:                 {[]string{"-f", chart + "/ci/default-values.yaml", "--set-json", `shards=[{"name":"A_1","institutions":["ins_harbor"]}]`}},
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
