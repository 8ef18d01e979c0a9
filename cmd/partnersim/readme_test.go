package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/simulator"
)

// The README's command table lists exactly the commands `partnersim --help` lists, so a command
// added or removed cannot leave the README behind.
func TestReadmeCommandTableMatchesHelp(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `partnersim ([a-z-]+)").FindAllStringSubmatch(string(readme), -1) {
		if !slices.Contains(documented, m[1]) {
			documented = append(documented, m[1])
		}
	}
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"partnersim", "--help"}, noEnv, &out, &out))
	help := out.String()
	_, list, ok := strings.Cut(help, "Available Commands:\n")
	require.True(t, ok, "partnersim --help lists its commands:\n%s", help)
	list, _, _ = strings.Cut(list, "\n\n")
	var known []string
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			known = append(known, f[0])
		}
	}
	require.Contains(t, known, "serve", "the command list was read")
	slices.Sort(documented)
	slices.Sort(known)
	assert.Equal(t, known, documented, "the README's command table (## The binary) and `partnersim --help` differ")
}

// TestMain lets the test binary stand in for partnersim: the runnable blocks of the READMEs call
// `partnersim`, which a wrapper on their PATH runs as this binary with PARTNERSIM_TEST_AS_CLI=1.
func TestMain(m *testing.M) {
	if os.Getenv("PARTNERSIM_TEST_AS_CLI") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runnableMarker, on the line before a ```sh fence, marks a README block that must run as
// written (README.md, "Tests", says so).
const runnableMarker = "<!-- runnable -->"

// runnableBlocks returns the shell blocks of a Markdown file marked runnable, each with the line
// its fence opens on.
func runnableBlocks(t *testing.T, path string) (blocks []string, lines []int) {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	all := strings.Split(string(raw), "\n")
	for i := 0; i < len(all); i++ {
		if strings.TrimSpace(all[i]) != runnableMarker {
			continue
		}
		require.Less(t, i+1, len(all), "%s:%d: a marker at the end", path, i+1)
		require.Equal(t, "```sh", strings.TrimSpace(all[i+1]), "%s:%d: %s must stand right before a ```sh fence", path, i+1, runnableMarker)
		var b []string
		j := i + 2
		for ; j < len(all) && strings.TrimSpace(all[j]) != "```"; j++ {
			b = append(b, all[j])
		}
		require.Less(t, j, len(all), "%s:%d: the block never closes", path, i+2)
		blocks, lines = append(blocks, strings.Join(b, "\n")), append(lines, i+2)
		i = j
	}
	return blocks, lines
}

// shellCommands splits a block into its commands: a line, or lines joined while a quote is open
// or a line ends in a backslash; comment lines and blank lines are left out.
func shellCommands(block string) []string {
	var cmds []string
	var cur strings.Builder
	single, double := false, false
	for _, line := range strings.Split(block, "\n") {
		if cur.Len() == 0 && (strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#")) {
			continue
		}
		if cur.Len() > 0 {
			cur.WriteString("\n")
		}
		cur.WriteString(line)
		for i := 0; i < len(line); i++ {
			switch c := line[i]; {
			case c == '\\' && !single && i+1 < len(line):
				i++
			case c == '\'' && !double:
				single = !single
			case c == '"' && !single:
				double = !double
			case c == '#' && !single && !double && (i == 0 || line[i-1] == ' '):
				i = len(line) // a comment: its quotes do not count
			}
		}
		if single || double || strings.HasSuffix(line, "\\") {
			continue
		}
		cmds = append(cmds, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 {
		cmds = append(cmds, cur.String())
	}
	return cmds
}

// idPlaceholder is an id a README leaves for the reader to fill in (ins_…), and printedID one
// that a command printed.
var (
	idPlaceholder = regexp.MustCompile(`\b(ins|usr|key|sub|evt|txn|run|dlv|whsec)_…`)
	printedID     = regexp.MustCompile(`\b(ins|usr|key|sub|evt|txn|run|dlv|whsec)_[A-Za-z0-9_-]{8,}`)
	expectsError  = regexp.MustCompile(`#.*\b(4\d\d)\b`)
)

// shell is one bash a reader types a README's blocks into: its state (variables, functions,
// background jobs) lasts from block to block.
type shell struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   chan string
	n     int
}

func startShell(t *testing.T, dir string, env []string) *shell {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its background jobs are stopped with it
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	sh := &shell{t: t, cmd: cmd, stdin: stdin, out: make(chan string, 1024)}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			sh.out <- sc.Text()
		}
		close(sh.out)
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
	})
	_, err = io.WriteString(stdin, "exec 2>&1\n")
	require.NoError(t, err)
	return sh
}

// run types one command and returns what it printed and its exit status.
func (sh *shell) run(command string, timeout time.Duration) (string, int) {
	sh.t.Helper()
	sh.n++
	done := fmt.Sprintf("__partnersim_readme_done_%d__", sh.n)
	// The command's last line may not end in a newline: the marker starts a line of its own.
	_, err := io.WriteString(sh.stdin, command+"\n__s=$?; echo; echo \""+done+" $__s\"\n")
	require.NoError(sh.t, err)
	var out []string
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-sh.out:
			if !ok {
				sh.t.Fatalf("the shell ended during %q:\n%s", command, strings.Join(out, "\n"))
			}
			if rest, found := strings.CutPrefix(line, done+" "); found {
				code, _ := strconv.Atoi(rest)
				if len(out) > 0 && out[len(out)-1] == "" {
					out = out[:len(out)-1] // the marker's own newline
				}
				return strings.Join(out, "\n"), code
			}
			out = append(out, line)
		case <-deadline:
			sh.t.Fatalf("%q still running after %s:\n%s", command, timeout, strings.Join(out, "\n"))
		}
	}
}

// TestReadmeBlocksRun runs every shell block the READMEs mark runnable, in order, as a reader
// would in a second terminal beside a fresh `partnersim serve`: the sandbox's and the receiver's
// ports are the ones this run got, an id left as ins_… (usr_…, txn_…, whsec_…) is the one an
// earlier command printed, and `partnersim` is this binary. A command must exit 0, and a curl
// call must answer no error detail unless its comment names the 4xx it shows.
func TestReadmeBlocksRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the READMEs' blocks against a sandbox: not in -short")
	}
	for _, doc := range []string{"README.md", "receiver/README.md", "features/README.md"} {
		t.Run(doc, func(t *testing.T) {
			blocks, lines := runnableBlocks(t, filepath.Join("..", "..", doc))
			require.NotEmpty(t, blocks, "%s marks no block %s", doc, runnableMarker)

			base := startServe(t)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			receiverAddr := ln.Addr().String() // a free port for the receiver the blocks start
			ln.Close()
			ln, err = net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			proxyAddr := ln.Addr().String() // and one for the proxy
			ln.Close()
			bin := t.TempDir()
			self, err := os.Executable()
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(bin, "partnersim"),
				[]byte("#!/bin/sh\nPARTNERSIM_TEST_AS_CLI=1 exec "+shellQuote(self)+" \"$@\"\n"), 0o755))
			env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8",
				"PARTNERSIM_SANDBOX_URL=" + base} // the export serve prints for a second terminal
			sh := startShell(t, t.TempDir(), env)

			seen := map[string]string{}
			for i, block := range blocks {
				for _, command := range shellCommands(block) {
					typed := strings.NewReplacer("http://127.0.0.1:8080", base, "127.0.0.1:9090", receiverAddr, "127.0.0.1:8081", proxyAddr).Replace(command)
					typed = idPlaceholder.ReplaceAllStringFunc(typed, func(p string) string {
						kind := strings.TrimSuffix(p, "_…")
						id, ok := seen[kind]
						if !ok {
							t.Fatalf("%s:%d: %q needs a %s id that no earlier command printed", doc, lines[i], command, p)
						}
						return id
					})
					out, code := sh.run(typed, 3*time.Minute)
					where := fmt.Sprintf("%s:%d: %s", doc, lines[i], typed)
					t.Logf("%s\n%s", where, out)
					require.Zero(t, code, "%s\nexited %d:\n%s", where, code, out)
					// A curl call succeeds whatever the answer: an error shows as a detail.
					if isCurl(command) && expectsError.FindStringSubmatch(command) == nil {
						assert.NotContains(t, out, `{"detail":`, "%s\nanswered an error:\n%s", where, out)
					}
					// The first id of each kind in what the command printed is the one a reader copies.
					found := map[string]bool{}
					for _, id := range printedID.FindAllString(out, -1) {
						kind := id[:strings.Index(id, "_")]
						if !found[kind] {
							seen[kind], found[kind] = id, true
						}
					}
				}
			}
		})
	}
}

// isCurl reports whether a README command is a curl call (or the control-plane block's c,
// which wraps one).
func isCurl(command string) bool {
	return strings.HasPrefix(command, "curl ") || strings.HasPrefix(command, "c ")
}

// startServe runs `partnersim serve` on a free port with a fresh store, and returns its base URL.
func startServe(t *testing.T) string {
	t.Helper()
	r := startCLI(t, noGOMEMLIMIT, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "s.db"))
	return waitOutput(t, r.out, `API base URL\s+(http://\S+)/v1`)[1]
}

// `make run ARGS=…` passes its flags to serve, as the README's "another port" line says.
func TestMakeRunPassesArgs(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	out, err := exec.Command("make", "-n", "-C", "../..", "run", "ARGS=--addr 127.0.0.1:9090").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "serve --addr 127.0.0.1:9090") {
		t.Errorf("expected make run to pass ARGS to serve, got:\n%s", out)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "make run ARGS='--addr 127.0.0.1:9090'") {
		t.Error("expected the README to say, near the top, how to run on another port")
	}
}

// The README's count of the default set's users, in all and per institution, is the set's.
func TestReadmeCountsTheDefaultUsers(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`default set has (\d+) users — (\d+) in Harbor \(every product × KYC\s+status among them\) and (\d+) in Prairie`).FindStringSubmatch(string(readme))
	if m == nil {
		t.Fatal(`expected the README to say "The default set has N users — H in Harbor (…) and P in Prairie"`)
	}
	set, err := fixtures.Open(fixtures.Default())
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	if err := set.EachUser(func(u simulator.User) error { per[u.InstitutionID]++; return nil }); err != nil {
		t.Fatal(err)
	}
	got := []string{strconv.Itoa(set.NumUsers), strconv.Itoa(per["ins_harbor"]), strconv.Itoa(per["ins_prairie"])}
	if !slices.Equal(m[1:], got) {
		t.Errorf("README says %v users (all, Harbor, Prairie); the default set has %v", m[1:], got)
	}
}

// Every `partnersim serve` command of the README's sh blocks (the exposure recipes among them)
// takes only serve's flags.
func TestReadmeServeCommandsParse(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	found := 0
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(raw), -1) {
		for _, cmd := range shellCommands(block[1]) {
			i := strings.Index(cmd, "partnersim serve ")
			if i < 0 || strings.Contains(cmd[:i], "#") {
				continue
			}
			// A command substitution stands for a value ("$(openssl rand -hex 16)", "$(mktemp -d)/x.db").
			line := regexp.MustCompile(`"\$\([^)]*\)([^"]*)"`).ReplaceAllString(cmd[i+len("partnersim serve "):], "substituted$1")
			line = strings.NewReplacer("\\\n", " ", "\n", " ").Replace(line)
			line = regexp.MustCompile(`\s+(\d?>|\||&|;).*$`).ReplaceAllString(line, "") // redirections, pipes, background
			c := newServeCmd(func(string) string { return "" })
			assert.NoError(t, c.Flags().Parse(strings.Fields(line)), "README: partnersim serve %s", line)
			found++
		}
	}
	assert.GreaterOrEqual(t, found, 3, "the README's serve commands")
}
