package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/scanner"
	"go/token"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// gremlins is the pinned mutant lister, run with go run so nothing needs installing.
const gremlins = "github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0"

// scope is the simulator code that decides observable behaviour, by package directory, with
// the files left out and why: what the contract suite cannot observe (the control plane's own
// endpoints, store opening and snapshots, fixture loading, the request journal and rate limiter)
// is out of scope.
var scope = []struct {
	Dir     string
	Exclude string // regexp on the file name
	Quota   int    // mutants sampled from the covered ones (-all: every one)
}{
	{"simulator", ``, 25}, // the domain: users, money, KYC, trading, deliveries, history
	{"simulator/bolt", `^(db|snapshot|seed|cache|clock|build.*)\.go$`, 15},    // store queries and records; not opening, snapshots, the clock kept for a restart, fixture loading and building, caches
	{"simulator/httpapi", `^(control.*|middleware|server|onewrite)\.go$`, 15}, // rendering, auth, errors, routes; not the control plane, nor how an answer's bytes are grouped into writes
	{"simulator/httpapi/surface", `^(ops|bounds|traffic)\.go$`, 5},            // the list queries and the token throttle; not the interfaces and bounds
	{"simulator/validate", ``, 15},                                            // FastAPI/pydantic bodies
	{"simulator/webhook", `^fairqueue\.go$`, 10},                              // delivery scheduling
	{"simulator/webhook/signature", ``, 8},                                    // signing
	{"simulator/netguard", ``, 10},                                            // callback address rules
}

// tokenMutations is gremlins' mapping (internal/engine/mappings.go at v0.6.0) of the default
// mutators: mutator type → operator → its replacement.
var tokenMutations = map[string]map[token.Token]token.Token{
	"ARITHMETIC_BASE":       {token.ADD: token.SUB, token.MUL: token.QUO, token.QUO: token.MUL, token.REM: token.MUL, token.SUB: token.ADD},
	"CONDITIONALS_BOUNDARY": {token.GEQ: token.GTR, token.GTR: token.GEQ, token.LEQ: token.LSS, token.LSS: token.LEQ},
	"CONDITIONALS_NEGATION": {token.EQL: token.NEQ, token.GEQ: token.LSS, token.GTR: token.LEQ, token.LEQ: token.GTR, token.LSS: token.GEQ, token.NEQ: token.EQL},
	"INCREMENT_DECREMENT":   {token.DEC: token.INC, token.INC: token.DEC},
	"INVERT_NEGATIVES":      {token.SUB: token.ADD},
	"INVERT_LOGICAL":        {token.LAND: token.LOR, token.LOR: token.LAND},
}

// Status is a mutant's outcome.
type Status string

const (
	Killed     Status = "KILLED"
	TimedOut   Status = "TIMED OUT" // counts as killed, as in gremlins
	Lived      Status = "LIVED"
	NotViable  Status = "NOT VIABLE" // the mutated code does not compile
	NotCovered Status = "NOT COVERED"
	Equivalent Status = "EQUIVALENT"
	NotSampled Status = "NOT SAMPLED"
)

// Mutant is one operator swap.
type Mutant struct {
	File   string // relative to the module root
	Line   int
	Col    int
	Type   string
	Source string // the trimmed source line
	Indent int    // the bytes trimmed from the line's start
	Status Status
	Reason string // the scenario that killed it, or why it is equivalent
	Took   time.Duration
}

func (m Mutant) pos() string { return fmt.Sprintf("%s:%d:%d", m.File, m.Line, m.Col) }

// rank orders mutants for sampling by what they are: the seed, file, mutator, trimmed source
// line and the operator's column within it.
func (m *Mutant) rank(seed uint64) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%s\x00%s\x00%d", seed, m.File, m.Type, m.Source, m.Col-m.Indent)
	return h.Sum64()
}

// config is what a run is asked to do, from the command line.
type config struct {
	workers   int           // mutants tested at once
	all       bool          // every covered mutant in scope, not each package's sample
	listOnly  bool          // print the mutants a run would test and stop
	seed      uint64        // seed of the per-package samples
	only      string        // test only mutants whose file matches this regexp
	at        string        // test only these mutants (file:line:col, comma-separated), unsampled
	report    string        // where the report goes
	timeout   time.Duration // a suite run longer than this times out (the mutant is killed)
	threshold float64       // the lowest acceptable percentage of killed mutants
}

func main() {
	var c config
	flag.IntVar(&c.workers, "workers", 2, "mutants tested at once")
	flag.BoolVar(&c.all, "all", false, "test every covered mutant in scope instead of each package's sample (hours on 2 cores)")
	flag.Uint64Var(&c.seed, "seed", 10, "seed of the per-package samples (a sample depends on the mutants' source text, not on their line numbers)")
	flag.StringVar(&c.only, "only", "", "test only mutants whose file matches this regexp (e.g. netguard)")
	flag.StringVar(&c.at, "at", "", "test only these mutants, unsampled: comma-separated file:line:col as the report prints them")
	flag.StringVar(&c.report, "report", "mutants-report.txt", "where the report goes")
	flag.DurationVar(&c.timeout, "timeout", 90*time.Second, "a suite run longer than this times out (the mutant counts as killed)")
	flag.Float64Var(&c.threshold, "threshold", 95, "fail when fewer than this percentage of the tested non-equivalent mutants are killed")
	flag.BoolVar(&c.listOnly, "list", false, "print the mutants a run would test (position, mutator, source line) and stop")
	flag.Parse()
	c.all = c.all || c.at != ""
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "mutants:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	start := time.Now()
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	if err := os.Chdir(root); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "partnersim-mutants-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var onlyRe *regexp.Regexp
	if c.only != "" {
		if onlyRe, err = regexp.Compile(c.only); err != nil {
			return err
		}
	}

	logf("listing mutants with gremlins (%s)…", gremlins)
	muts, err := list(tmp, onlyRe)
	if err != nil {
		return err
	}
	logf("%d mutants in scope; measuring what the contract suite executes…", len(muts))
	covered, err := suiteCoverage(tmp)
	if err != nil {
		return err
	}
	equiv, err := readEquivalents("features/mutants-equivalent.tsv")
	if err != nil {
		return err
	}
	stale, err := staleExplanations(equiv)
	if err != nil {
		return err
	}
	todo := sample(muts, covered, equiv, c)
	if c.listOnly {
		for _, m := range todo {
			fmt.Printf("%s\t%s\t%s\n", m.pos(), m.Type, m.Source)
		}
		return nil
	}
	testAll(todo, tmp, root, c)

	sum := summarize(muts, time.Since(start))
	if err := writeReport(c.report, muts, sum); err != nil {
		return err
	}
	fmt.Println(sum.String())
	fmt.Println("report:", c.report)
	if len(stale) > 0 {
		return fmt.Errorf("features/mutants-equivalent.tsv explains lines the source no longer has (judge their new form again):\n  %s", strings.Join(stale, "\n  "))
	}
	if sum.Efficacy() < c.threshold {
		return fmt.Errorf("%.1f%% of the tested non-equivalent mutants were killed, below %.0f%%: see the survivors in %s", sum.Efficacy(), c.threshold, c.report)
	}
	return nil
}

// sample marks the mutants a run does not test (not picked by --at, not covered by the suite,
// outside their package's sample, judged equivalent) and returns the ones it tests.
func sample(muts []Mutant, covered coverage, equiv map[string]explanation, c config) []*Mutant {
	byDir := map[string][]*Mutant{}
	var pick []string
	if c.at != "" {
		pick = strings.Split(c.at, ",")
	}
	for i := range muts {
		m := &muts[i]
		if pick != nil && !slices.Contains(pick, m.pos()) {
			m.Status = NotSampled
			continue
		}
		if !covered.has(m.File, m.Line, m.Col) {
			m.Status = NotCovered
			continue
		}
		byDir[filepath.Dir(m.File)] = append(byDir[filepath.Dir(m.File)], m)
	}
	var todo []*Mutant
	for _, s := range scope {
		ms := byDir[s.Dir]
		if !c.all && len(ms) > s.Quota {
			// The sample is the Quota covered mutants with the smallest hash of what they are
			// (file, mutator, source line, column within the line), not of where they are, drawn
			// before any is judged equivalent: an edit elsewhere in a file, or an explanation
			// written after a run, leaves the sample, and so the score's set, alone.
			slices.SortFunc(ms, func(a, b *Mutant) int { return cmp.Compare(a.rank(c.seed), b.rank(c.seed)) })
			for _, m := range ms[s.Quota:] {
				m.Status = NotSampled
			}
			ms = ms[:s.Quota]
		}
		for _, m := range ms {
			switch e := explain(equiv, m); e.Kind {
			case "equivalent":
				m.Status, m.Reason = Equivalent, e.Reason
			default:
				m.Reason = e.Reason // a known survivor's explanation, shown if it lives
				todo = append(todo, m)
			}
		}
	}
	return todo
}

// testAll runs the contract suite against each mutant of todo, c.workers at a time, each
// worker in its own directory under tmp.
func testAll(todo []*Mutant, tmp, root string, c config) {
	logf("testing %d mutants, %d at a time (each: go test -overlay … -run TestContract ./features)…", len(todo), c.workers)
	jobs := make(chan *Mutant)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for w := range c.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range jobs {
				test(m, filepath.Join(tmp, "w"+strconv.Itoa(w)), root, c.timeout)
				mu.Lock()
				done++
				logf("[%d/%d] %-11s %s %s %s", done, len(todo), m.Status, m.Type, m.pos(), m.Took.Round(100*time.Millisecond))
				mu.Unlock()
			}
		}()
	}
	for _, m := range todo {
		jobs <- m
	}
	close(jobs)
	wg.Wait()
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run inside the partnersim module")
	}
	return filepath.Dir(mod), nil
}

// gremlinsOutput is the part of gremlins' -o JSON this driver reads.
type gremlinsOutput struct {
	Files []struct {
		FileName  string `json:"file_name"`
		Mutations []struct {
			Type   string `json:"type"`
			Line   int    `json:"line"`
			Column int    `json:"column"`
		} `json:"mutations"`
	} `json:"files"`
}

// list runs gremlins' dry run over the simulator once and keeps the mutants of the files in
// scope.
func list(tmp string, only *regexp.Regexp) ([]Mutant, error) {
	file := filepath.Join(tmp, "gremlins.json")
	cmd := exec.Command("go", "run", gremlins, "unleash", "--dry-run", "--silent", "--invert-logical", "-o", file, "./simulator")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("gremlins dry run: %w", err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var g gremlinsOutput
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("gremlins output: %w", err)
	}
	var out []Mutant
	for _, f := range g.Files {
		path := "simulator/" + f.FileName
		if !inScope(path) || only != nil && !only.MatchString(path) {
			continue
		}
		lines, err := sourceLines(path)
		if err != nil {
			return nil, err
		}
		for _, m := range f.Mutations {
			if _, ok := tokenMutations[m.Type]; !ok {
				continue
			}
			src, indent := "", 0
			if m.Line-1 < len(lines) {
				line := lines[m.Line-1]
				src, indent = strings.TrimSpace(line), len(line)-len(strings.TrimLeft(line, " \t"))
			}
			out = append(out, Mutant{File: path, Line: m.Line, Col: m.Column, Type: m.Type, Source: src, Indent: indent})
		}
	}
	slices.SortFunc(out, func(a, b Mutant) int {
		return cmp.Or(strings.Compare(a.File, b.File), a.Line-b.Line, a.Col-b.Col, strings.Compare(a.Type, b.Type))
	})
	return out, nil
}

// inScope reports whether a file (relative to the module root) is in the scope.
func inScope(path string) bool {
	if strings.HasSuffix(path, "_test.go") {
		return false
	}
	dir, name := filepath.Dir(path), filepath.Base(path)
	for _, s := range scope {
		if s.Dir == dir {
			return s.Exclude == "" || !regexp.MustCompile(s.Exclude).MatchString(name)
		}
	}
	return false
}

func sourceLines(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return strings.Split(string(b), "\n"), nil
}

// coverage is the set of source blocks the suite executed, per file.
type coverage map[string][][4]int // file → [startLine, startCol, endLine, endCol]

func (c coverage) has(file string, line, col int) bool {
	for _, b := range c[file] {
		after := line > b[0] || line == b[0] && col >= b[1]
		before := line < b[2] || line == b[2] && col <= b[3]
		if after && before {
			return true
		}
	}
	return false
}

// suiteCoverage runs the contract suite once with coverage of the scoped packages.
func suiteCoverage(tmp string) (coverage, error) {
	var pkgs []string
	for _, s := range scope {
		pkgs = append(pkgs, "github.com/partnersim/partnersim/"+s.Dir)
	}
	prof := filepath.Join(tmp, "suite.cover")
	cmd := exec.Command("go", "test", "-count=1", "-run", "TestContract", "-coverpkg", strings.Join(pkgs, ","), "-coverprofile", prof, "./features")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("the contract suite must pass before mutating: %w\n%s", err, out)
	}
	f, err := os.Open(prof)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cov := coverage{}
	sc := bufio.NewScanner(f)
	re := regexp.MustCompile(`^github\.com/partnersim/partnersim/(.+):(\d+)\.(\d+),(\d+)\.(\d+) \d+ (\d+)$`)
	for sc.Scan() {
		m := re.FindStringSubmatch(sc.Text())
		if m == nil || m[6] == "0" {
			continue
		}
		var b [4]int
		for i := range b {
			b[i], _ = strconv.Atoi(m[i+2])
		}
		cov[m[1]] = append(cov[m[1]], b)
	}
	return cov, sc.Err()
}

func equivKey(file, typ, src string) string { return file + "\x00" + typ + "\x00" + src }

// explain finds a mutant's line in the explanations: by its column, else by any column ("*").
func explain(ex map[string]explanation, m *Mutant) explanation {
	if e, ok := ex[equivKey(m.File, m.Type, strconv.Itoa(m.Col)+"\x00"+m.Source)]; ok {
		return e
	}
	return ex[equivKey(m.File, m.Type, "*\x00"+m.Source)]
}

// explanation is a line of features/mutants-equivalent.tsv.
type explanation struct {
	Kind   string // equivalent: no implementation can tell; survivor: observable, but not by this suite (why)
	Reason string
}

// readEquivalents reads features/mutants-equivalent.tsv: file, mutator, column ("*": any on the
// line), the trimmed source line of the mutant, kind (equivalent or survivor) and the reason.
// Lines are matched by their text, so the file survives edits elsewhere in the source.
func readEquivalents(path string) (map[string]explanation, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]explanation{}, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]explanation{}
	for i, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if i == 0 || strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 6 || f[5] == "" || (f[4] != "equivalent" && f[4] != "survivor") {
			return nil, fmt.Errorf("%s line %d: expected file, mutator, column, source line, kind (equivalent or survivor) and reason separated by tabs", path, i+1)
		}
		out[equivKey(f[0], f[1], f[2]+"\x00"+f[3])] = explanation{Kind: f[4], Reason: f[5]}
	}
	return out, nil
}

// staleExplanations lists the explanations whose line the source no longer has.
func staleExplanations(ex map[string]explanation) ([]string, error) {
	var out []string
	files := map[string][]string{}
	for k := range ex {
		f := strings.Split(k, "\x00")
		file, src := f[0], f[3]
		if files[file] == nil {
			lines, err := sourceLines(file)
			if err != nil {
				return nil, err
			}
			for i := range lines {
				lines[i] = strings.TrimSpace(lines[i])
			}
			files[file] = lines
		}
		if !slices.Contains(files[file], src) {
			out = append(out, file+": "+src)
		}
	}
	slices.Sort(out)
	return out, nil
}

// mutate returns the file's bytes with the operator at line:col swapped by the mutator.
func mutate(src []byte, line, col int, typ string) ([]byte, error) {
	fs := token.NewFileSet()
	file := fs.AddFile("x.go", -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	for {
		pos, tok, _ := s.Scan()
		if tok == token.EOF {
			return nil, fmt.Errorf("no operator at %d:%d", line, col)
		}
		p := fs.Position(pos)
		if p.Line != line || p.Column != col {
			continue
		}
		to, ok := tokenMutations[typ][tok]
		if !ok {
			return nil, fmt.Errorf("%s does not mutate %s at %d:%d", typ, tok, line, col)
		}
		off := p.Offset
		out := append([]byte{}, src[:off]...)
		out = append(out, to.String()...)
		return append(out, src[off+len(tok.String()):]...), nil
	}
}

var failedRe = regexp.MustCompile(`FAILED ([a-z_]+\.feature): "([^"]*)"`)

// test applies the mutant through an overlay and runs the contract suite against it.
func test(m *Mutant, dir, root string, timeout time.Duration) {
	start := time.Now()
	defer func() { m.Took = time.Since(start) }()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		m.Status, m.Reason = NotViable, err.Error()
		return
	}
	abs := filepath.Join(root, m.File)
	src, err := os.ReadFile(abs)
	if err != nil {
		m.Status, m.Reason = NotViable, err.Error()
		return
	}
	mut, err := mutate(src, m.Line, m.Col, m.Type)
	if err != nil {
		m.Status, m.Reason = NotViable, err.Error()
		return
	}
	mutFile := filepath.Join(dir, filepath.Base(m.File))
	overlay := filepath.Join(dir, "overlay.json")
	ov, _ := json.Marshal(map[string]any{"Replace": map[string]string{abs: mutFile}})
	if err := os.WriteFile(mutFile, mut, 0o644); err != nil {
		m.Status, m.Reason = NotViable, err.Error()
		return
	}
	if err := os.WriteFile(overlay, ov, 0o644); err != nil {
		m.Status, m.Reason = NotViable, err.Error()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// -timeout makes the test binary itself give up; the process group is killed on the
	// deadline (killing go test alone leaves its test binary running and holding the output).
	cmd := exec.CommandContext(ctx, "go", "test", "-overlay", overlay, "-count=1", "-timeout", timeout.String(), "-run", "TestContract", "./features")
	cmd.Env = append(os.Environ(), "PARTNERSIM_STOP_ON_FAILURE=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		m.Status = TimedOut
	case err == nil:
		m.Status = Lived // m.Reason keeps a known survivor's explanation
	case strings.Contains(out.String(), "[build failed]") || strings.Contains(out.String(), "[setup failed]"):
		m.Status, m.Reason = NotViable, firstLine(out.String())
	default:
		m.Status, m.Reason = Killed, ""
		if f := failedRe.FindStringSubmatch(out.String()); f != nil {
			m.Reason = f[1] + ": " + f[2]
		} else {
			m.Reason = firstLine(out.String())
		}
	}
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return truncate(l, 160)
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// summary counts the outcomes.
type summary struct {
	Total                                                                  int
	Killed, TimedOut, Lived, NotViable, NotCovered, Equivalent, NotSampled int
	Took                                                                   time.Duration
}

func summarize(muts []Mutant, took time.Duration) summary {
	s := summary{Total: len(muts), Took: took}
	for _, m := range muts {
		switch m.Status {
		case Killed:
			s.Killed++
		case TimedOut:
			s.TimedOut++
		case Lived:
			s.Lived++
		case NotViable:
			s.NotViable++
		case NotCovered:
			s.NotCovered++
		case Equivalent:
			s.Equivalent++
		case NotSampled:
			s.NotSampled++
		}
	}
	return s
}

// Efficacy is the percentage of tested non-equivalent mutants the suite killed.
func (s summary) Efficacy() float64 {
	tested := s.Killed + s.TimedOut + s.Lived
	if tested == 0 {
		return 100
	}
	return 100 * float64(s.Killed+s.TimedOut) / float64(tested)
}

func (s summary) String() string {
	return fmt.Sprintf("%d mutants in scope: %d tested — %d killed (%d by timeout), %d lived; %d equivalent; %d not viable; %d not covered by the suite; %d not sampled. Killed %.1f%% of the tested non-equivalent mutants. %s.",
		s.Total, s.Killed+s.TimedOut+s.Lived, s.Killed+s.TimedOut, s.TimedOut, s.Lived, s.Equivalent, s.NotViable, s.NotCovered, s.NotSampled, s.Efficacy(), s.Took.Round(time.Second))
}

func writeReport(path string, muts []Mutant, sum summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "mutation testing of the simulator with the contract suite as the killing test (make mutants)\n%s\n", sum)
	section := func(title string, st ...Status) {
		fmt.Fprintf(&b, "\n== %s\n", title)
		for _, m := range muts {
			if slices.Contains(st, m.Status) {
				fmt.Fprintf(&b, "%-11s %-22s %s\t%s", m.Status, m.Type, m.pos(), m.Source)
				switch {
				case m.Reason != "":
					fmt.Fprintf(&b, "\n            %s", m.Reason)
				case m.Status == Lived:
					fmt.Fprintf(&b, "\n            UNEXPLAINED: kill it with a sharper scenario, or explain it in features/mutants-equivalent.tsv")
				}
				b.WriteString("\n")
			}
		}
	}
	section("survivors (each needs a sharper scenario, or a line in features/mutants-equivalent.tsv)", Lived)
	section("equivalent", Equivalent)
	section("killed", Killed, TimedOut)
	section("not viable", NotViable)
	section("not covered by the suite", NotCovered)
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
