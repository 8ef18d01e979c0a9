package pipelines

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	junit "github.com/joshdk/go-junit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// The commands below run as written, with three substitutions a test machine needs, each said
// where it is made: the `go install …@latest` line is replaced by building this checkout (the
// binary the pipeline would install), the sandbox's port 8080 by a free one, and
// PARTNERSIM_NAME (the --name flag's environment twin) narrows the suite to a few scenarios
// (the whole suite runs in features' TestContract).

const (
	installLine = "go install github.com/partnersim/partnersim/cmd/partnersim@latest"
	harborKey   = "sbx_harborAllScopes0000000000000000000000001"
	// someScenarios are the scenarios the recipes run here: one plain, one that needs the
	// control plane (so the run creates and deletes an institution), one @spec.
	someScenarios = `^(Health answers without an API key|A revoked key is 401 from then on|An unknown API key is 401 Invalid API key)$`
)

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// partnersim builds the binary once for every test of the package and returns its folder.
func partnersim(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "partnersim-ci-bin-")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-buildvcs=auto", "-o", filepath.Join(binDir, "partnersim"), "../../cmd/partnersim").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, buildErr)
	return binDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// freePort returns a port no one listens on (at the moment of asking).
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// bash runs a script in dir with partnersim on PATH and env added; background jobs the script
// starts are ended when it ends. It returns the combined output.
func bash(t *testing.T, dir, script string, env ...string) string {
	t.Helper()
	out, err := bashCmd(t, dir, script, env...).CombinedOutput()
	require.NoError(t, err, "the script failed:\n%s\n--- output:\n%s", script, out)
	return string(out)
}

// bashCmd is the command bash runs.
func bashCmd(t *testing.T, dir, script string, env ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	full := "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + script
	cmd := exec.CommandContext(ctx, "bash", "-c", full)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+partnersim(t)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

// readJUnit reads a JUnit file back with a JUnit library and returns its totals.
func readJUnit(t *testing.T, path string) junit.Totals {
	t.Helper()
	suites, err := junit.IngestFile(path)
	require.NoError(t, err, path)
	var tot junit.Totals
	for _, s := range suites {
		tot.Tests += s.Totals.Tests
		tot.Passed += s.Totals.Passed
		tot.Failed += s.Totals.Failed
		tot.Skipped += s.Totals.Skipped
		tot.Error += s.Totals.Error
	}
	return tot
}

// section returns the README's text from the heading to the next heading of the same level.
func section(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	s := string(b)
	i := strings.Index(s, "\n"+heading+"\n")
	require.GreaterOrEqual(t, i, 0, "README has %q", heading)
	rest := s[i+len(heading)+2:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// blocks returns the fenced code blocks of a language in text.
func blocks(text, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// The README's "Use it in CI" commands, run as written against a real sandbox.
func TestReadmeUseItInCI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox and runs the suite; skipped with -short")
	}
	t.Parallel()
	text := section(t, "## Use it in CI")
	sh := blocks(text, "sh")
	require.Len(t, sh, 4, "install, sandbox, contract against the sandbox, contract against a deployment")
	script := strings.Join(sh, "\n")
	require.Contains(t, script, installLine)
	script = strings.ReplaceAll(script, installLine, "# "+installLine+" (this checkout, built by the test)")
	port := freePort(t)
	script = strings.ReplaceAll(script, "127.0.0.1:8080", "127.0.0.1:"+port)
	dir := t.TempDir()
	out := bash(t, dir, script,
		"PARTNERSIM_NAME="+someScenarios,
		"STAGING_URL=http://127.0.0.1:"+port+"/v1", "STAGING_KEY="+harborKey)
	assert.Regexp(t, `(?m)^partnersim \S+ commit `, out, "partnersim version: the module version and the commit (or why it is unknown)")

	sandbox := readJUnit(t, filepath.Join(dir, "contract.xml"))
	assert.Equal(t, junit.Totals{Tests: 3, Passed: 3}, junit.Totals{Tests: sandbox.Tests, Passed: sandbox.Passed}, "against the sandbox every scenario runs")
	staging := readJUnit(t, filepath.Join(dir, "staging.xml"))
	assert.Equal(t, 1, staging.Tests, "--tags @spec: the one @spec scenario of the three")
	assert.Zero(t, staging.Failed)

	// The yaml snippets: the action's inputs and the template's job exist.
	yamls := blocks(text, "yaml")
	require.Len(t, yamls, 2)
	inputs := actionInputs(t)
	var gh struct {
		Steps []struct {
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(strings.TrimSpace(dedent(yamls[0]))), &gh))
	require.Len(t, gh.Steps, 1)
	assert.Equal(t, "partnersim/partnersim@main", gh.Steps[0].Uses)
	for k := range gh.Steps[0].With {
		assert.Contains(t, inputs, k, "the README's action input %q is one of action.yml's", k)
	}
	var gl map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(yamls[1]), &gl))
	assert.Equal(t, ".partnersim-contract", gl["contract-staging"].(map[string]any)["extends"])
	assert.Contains(t, yamls[1], "/examples/pipelines/gitlab/partnersim.gitlab-ci.yml")
}

// dedent removes the indentation of a snippet's first line from every line.
func dedent(s string) string {
	lines := strings.Split(s, "\n")
	n := len(lines[0]) - len(strings.TrimLeft(lines[0], " "))
	for i, l := range lines {
		if len(l) >= n {
			lines[i] = l[n:]
		}
	}
	return strings.Join(lines, "\n")
}

// action is action.yml as the test reads it.
type action struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			Name  string            `yaml:"name"`
			ID    string            `yaml:"id"`
			If    string            `yaml:"if"`
			Uses  string            `yaml:"uses"`
			Shell string            `yaml:"shell"`
			Run   string            `yaml:"run"`
			Env   map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

func readAction(t *testing.T) action {
	t.Helper()
	b, err := os.ReadFile("../../action.yml")
	require.NoError(t, err)
	var a action
	require.NoError(t, yaml.Unmarshal(b, &a))
	return a
}

func actionInputs(t *testing.T) []string {
	var out []string
	for k := range readAction(t).Inputs {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

var expr = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// The composite action's shell steps, run in order as the runner would run them for a job that
// gives no base-url: it starts a sandbox, runs the contract suites against it and passes.
// ${{ … }} expressions are evaluated the simple way their forms here need (an input, a step
// output, "a || b").
func TestGitHubActionSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox and runs the suite; skipped with -short")
	}
	t.Parallel()
	a := readAction(t)
	assert.Equal(t, "composite", a.Runs.Using)
	inputs := map[string]string{}
	for k, v := range a.Inputs {
		inputs[k] = v.Default
	}
	dir := t.TempDir()
	outputs := map[string]map[string]string{}
	var eval func(string) string
	eval = func(e string) string {
		if l, r, ok := strings.Cut(e, "||"); ok {
			if v := eval(strings.TrimSpace(l)); v != "" {
				return v
			}
			return eval(strings.TrimSpace(r))
		}
		switch f := strings.Split(e, "."); {
		case f[0] == "inputs":
			return inputs[f[1]]
		case f[0] == "steps" && len(f) == 4 && f[2] == "outputs":
			return outputs[f[1]][f[3]]
		}
		t.Fatalf("the test does not evaluate ${{ %s }}", e)
		return ""
	}
	subst := func(s string) string {
		return expr.ReplaceAllStringFunc(s, func(m string) string { return eval(expr.FindStringSubmatch(m)[1]) })
	}
	port := freePort(t)
	ran := 0
	for _, st := range a.Runs.Steps {
		if st.Run == "" {
			continue // actions/setup-go and actions/upload-artifact: the runner's own
		}
		switch st.Name {
		case "Install partnersim":
			require.Contains(t, st.Run, `go install "github.com/partnersim/partnersim/cmd/partnersim@${PARTNERSIM_VERSION}"`)
			continue // this checkout's binary is on PATH
		case "Stop the sandbox", "Fail when a scenario failed":
			continue // the test's trap ends the sandbox; the result is checked below
		}
		ghOut := filepath.Join(dir, st.ID+".out")
		env := []string{"GITHUB_OUTPUT=" + ghOut, "RUNNER_TEMP=" + dir, "PARTNERSIM_NAME=" + someScenarios}
		for k, v := range st.Env {
			env = append(env, k+"="+subst(v))
		}
		script := strings.ReplaceAll(subst(st.Run), "127.0.0.1:8080", "127.0.0.1:"+port)
		if st.ID == "sandbox" {
			// The sandbox must outlive this step, as it does on a runner: the script waits for
			// the next step's signal file instead of ending (and killing its background job).
			script += "\nwhile [ ! -e " + filepath.Join(dir, "done") + " ]; do sleep 0.1; done\n"
			cmd := bashCmd(t, dir, script, env...)
			var log strings.Builder
			cmd.Stdout, cmd.Stderr = &log, &log
			require.NoError(t, cmd.Start())
			defer func() {
				_ = os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
				assert.NoError(t, cmd.Wait(), "the sandbox step: %s", log.String())
			}()
			waitFor(t, ghOut, "sandbox-token=")
		} else {
			bash(t, dir, script, env...)
		}
		outputs[st.ID] = readOutputs(t, ghOut)
		ran++
	}
	assert.Equal(t, 2, ran, "the sandbox and contract steps ran")
	assert.Equal(t, "passed", outputs["contract"]["result"])
	tot := readJUnit(t, filepath.Join(dir, inputs["junit"]))
	assert.Equal(t, 3, tot.Passed)
}

// waitFor polls until file holds substr.
func waitFor(t *testing.T, file, substr string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(file); err == nil && strings.Contains(string(b), substr) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never held %q", file, substr)
}

// readOutputs reads a GITHUB_OUTPUT file (name=value lines).
func readOutputs(t *testing.T, file string) map[string]string {
	t.Helper()
	out := map[string]string{}
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return out
	}
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			out[k] = v
		}
	}
	return out
}

// The GitLab template's job script, run line by line as a GitLab runner runs it, for a job that
// gives no PARTNERSIM_BASE_URL: it starts a sandbox, runs the suite and writes the JUnit report
// its artifacts name; the example pipeline's jobs extend it.
func TestGitLabTemplate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox and runs the suite; skipped with -short")
	}
	t.Parallel()
	b, err := os.ReadFile("gitlab/partnersim.gitlab-ci.yml")
	require.NoError(t, err)
	var tmpl map[string]struct {
		Image     string            `yaml:"image"`
		Variables map[string]string `yaml:"variables"`
		Script    []string          `yaml:"script"`
		Artifacts struct {
			When    string            `yaml:"when"`
			Reports map[string]string `yaml:"reports"`
		} `yaml:"artifacts"`
	}
	require.NoError(t, yaml.Unmarshal(b, &tmpl))
	job, ok := tmpl[".partnersim-contract"]
	require.True(t, ok, "the template defines .partnersim-contract")
	assert.Equal(t, "always", job.Artifacts.When, "the report is kept when the job fails")
	assert.Equal(t, "$PARTNERSIM_JUNIT", job.Artifacts.Reports["junit"])

	ex, err := os.ReadFile("gitlab/example.gitlab-ci.yml")
	require.NoError(t, err)
	var example map[string]any
	require.NoError(t, yaml.Unmarshal(ex, &example))
	jobs := 0
	for name, v := range example {
		if m, ok := v.(map[string]any); ok && m["extends"] != nil {
			assert.Equal(t, ".partnersim-contract", m["extends"], name)
			jobs++
		}
	}
	assert.Equal(t, 2, jobs)

	dir := t.TempDir()
	env := []string{"CI_PROJECT_DIR=" + dir, "PARTNERSIM_NAME=" + someScenarios}
	for k, v := range job.Variables {
		env = append(env, k+"="+v)
	}
	var script []string
	port := freePort(t)
	for _, line := range job.Script {
		if strings.HasPrefix(line, "go install ") {
			require.Contains(t, line, "github.com/partnersim/partnersim/cmd/partnersim@${PARTNERSIM_VERSION}")
			continue // this checkout's binary is on PATH
		}
		if strings.Contains(line, "go env GOPATH") {
			continue
		}
		script = append(script, strings.ReplaceAll(line, "127.0.0.1:8080", "127.0.0.1:"+port))
	}
	bash(t, dir, strings.Join(script, "\n"), env...)
	tot := readJUnit(t, filepath.Join(dir, job.Variables["PARTNERSIM_JUNIT"]))
	assert.Equal(t, 3, tot.Passed)
}

// Every shell block of the recipes parses (bash -n), the ones the tests above do not run too.
func TestRecipesParse(t *testing.T) {
	for _, st := range readAction(t).Runs.Steps {
		if st.Run == "" {
			continue
		}
		script := expr.ReplaceAllString(st.Run, "x")
		out, err := exec.Command("bash", "-n", "-c", script).CombinedOutput()
		assert.NoError(t, err, "action step %q: %s", st.Name, out)
	}
}

// The container image, built offline as `make image` builds it: the static binary alone on
// scratch (plus its /data folder), a non-root user, port 8080, the /data volume, serve as the
// command; the binary carries its CA roots and refuses the published token as the image
// configures it. Containers cannot run on every machine, so the image's contents are checked,
// not a running container.
func TestContainerImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image; skipped with -short")
	}
	if _, err := exec.LookPath("podman"); err != nil {
		t.Skip("podman is not installed (.ci/run installs it from Debian): the image build is not checked here")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed: the image recipe is `make image`")
	}
	image := fmt.Sprintf("localhost/partnersim:test-%d", os.Getpid())
	out, err := exec.Command("make", "-C", "../..", "image", "IMAGE="+image).CombinedOutput()
	require.NoError(t, err, "make image:\n%s", out)
	t.Cleanup(func() { _ = exec.Command("podman", "rmi", "-f", image).Run() })

	raw, err := exec.Command("podman", "image", "inspect", image).Output()
	require.NoError(t, err)
	var inspected []struct {
		Config struct {
			User         string              `json:"User"`
			ExposedPorts map[string]struct{} `json:"ExposedPorts"`
			Volumes      map[string]struct{} `json:"Volumes"`
			Entrypoint   []string            `json:"Entrypoint"`
			Cmd          []string            `json:"Cmd"`
			Env          []string            `json:"Env"`
		} `json:"Config"`
	}
	require.NoError(t, json.Unmarshal(raw, &inspected))
	require.Len(t, inspected, 1)
	cfg := inspected[0].Config
	assert.Equal(t, "65532:65532", cfg.User, "a non-root user")
	assert.Equal(t, []string{"8080/tcp"}, slices.Collect(maps.Keys(cfg.ExposedPorts)))
	assert.Equal(t, []string{"/data"}, slices.Collect(maps.Keys(cfg.Volumes)))
	assert.Equal(t, []string{"/partnersim"}, cfg.Entrypoint)
	assert.Equal(t, []string{"serve"}, cfg.Cmd)
	assert.Contains(t, cfg.Env, "PARTNERSIM_ADDR=0.0.0.0:8080")
	assert.Contains(t, cfg.Env, "PARTNERSIM_DB=/data/partnersim.db")

	// Every file of every layer: the binary and the /data folder, nothing else.
	dir := t.TempDir()
	archive := filepath.Join(dir, "image.tar")
	out, err = exec.Command("podman", "save", "--format", "oci-archive", "-o", archive, image).CombinedOutput()
	require.NoError(t, err, "podman save:\n%s", out)
	files := imageFiles(t, archive)
	assert.Equal(t, []string{"data/", "partnersim"}, keys(files))
	assert.Equal(t, 65532, files["data/"].Uid, "/data belongs to the image's user, so the store can be written")
	bin := filepath.Join(dir, "partnersim")
	require.NoError(t, os.WriteFile(bin, files["partnersim"].data, 0o755))
	info, err := buildinfo.ReadFile(bin)
	require.NoError(t, err)
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	assert.Equal(t, "0", settings["CGO_ENABLED"], "a static binary: scratch has no libc")
	assert.True(t, slices.ContainsFunc(info.Deps, func(m *debug.Module) bool { return m.Path == "golang.org/x/crypto/x509roots/fallback" }),
		"the binary carries its CA roots (golang.org/x/crypto/x509roots/fallback): scratch has none")

	// As the image runs it — listening beyond loopback, the published token by default — serve
	// refuses to start and says what to give it.
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "PARTNERSIM_ADDR=0.0.0.0:"+freePort(t), "PARTNERSIM_DB="+filepath.Join(dir, "partnersim.db"))
	out, err = cmd.CombinedOutput()
	require.Error(t, err, "serve must refuse the published token beyond loopback:\n%s", out)
	assert.Contains(t, string(out), "--sandbox-token", "the refusal names the fix")
}

// imageFile is one file of an image's layers.
type imageFile struct {
	Uid  int
	data []byte
}

// imageFiles reads an OCI archive's layers, in order, and returns the files they leave.
func imageFiles(t *testing.T, archive string) map[string]imageFile {
	t.Helper()
	blobs := map[string][]byte{}
	f, err := os.Open(archive)
	require.NoError(t, err)
	defer f.Close()
	readTar(t, f, func(h *tar.Header, b []byte) {
		if h.Typeflag == tar.TypeReg {
			blobs[strings.TrimPrefix(h.Name, "./")] = b
		}
	})
	blob := func(digest string) []byte {
		algo, hex, _ := strings.Cut(digest, ":")
		b, ok := blobs["blobs/"+algo+"/"+hex]
		require.True(t, ok, "blob %s", digest)
		return b
	}
	var index struct {
		Manifests []struct{ Digest string } `json:"manifests"`
	}
	require.NoError(t, json.Unmarshal(blobs["index.json"], &index))
	require.Len(t, index.Manifests, 1)
	var manifest struct {
		Layers []struct {
			MediaType string `json:"mediaType"`
			Digest    string `json:"digest"`
		} `json:"layers"`
	}
	require.NoError(t, json.Unmarshal(blob(index.Manifests[0].Digest), &manifest))
	files := map[string]imageFile{}
	for _, l := range manifest.Layers {
		var rd io.Reader = bytes.NewReader(blob(l.Digest))
		if strings.Contains(l.MediaType, "gzip") {
			gz, err := gzip.NewReader(rd)
			require.NoError(t, err)
			rd = gz
		}
		readTar(t, rd, func(h *tar.Header, b []byte) {
			name := strings.TrimPrefix(h.Name, "./")
			if h.Typeflag == tar.TypeDir && !strings.HasSuffix(name, "/") {
				name += "/"
			}
			files[name] = imageFile{Uid: h.Uid, data: b}
		})
	}
	return files
}

// readTar calls fn with each entry of a tar stream, in order, and the entry's bytes.
func readTar(t *testing.T, r io.Reader, fn func(h *tar.Header, data []byte)) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		require.NoError(t, err)
		b, err := io.ReadAll(tr)
		require.NoError(t, err)
		fn(h, b)
	}
}

func keys[V any](m map[string]V) []string {
	out := slices.Collect(maps.Keys(m))
	slices.Sort(out)
	return out
}
