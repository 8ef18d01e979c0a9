package main

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// The build's yardstick (decisions D14): the CPU of `partnersim fixtures build` of the large set
// by the current binary against the baseline commit's, built from git, the two run alternately
// in the same minutes on the same box.
const (
	// defaultBaseline is the commit the build's CPU is judged against.
	defaultBaseline = "9b441d2"
	// buildMaxRatio is the most the current build's mean CPU may be of the baseline's: down by
	// a third, to the thousandth the row prints (the printed ratio is the one judged).
	buildMaxRatio = 0.667
)

// buildRun is what one `partnersim fixtures build` process took.
type buildRun struct {
	wall time.Duration
	cpu  time.Duration // user + system (getrusage of the child)
	sys  time.Duration // of which system
	peak int64         // bytes, the process's high-water mark (ru_maxrss)
}

// buildOnce runs `bin fixtures build --force set db` as its own process.
func buildOnce(ctx context.Context, bin, set, db string) (buildRun, error) {
	cmd := exec.CommandContext(ctx, bin, "fixtures", "build", "--force", set, db)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return buildRun{}, fmt.Errorf("fixtures build: %w: %s", err, strings.TrimSpace(out.String()))
	}
	r := buildRun{wall: time.Since(t0), sys: cmd.ProcessState.SystemTime()}
	r.cpu = cmd.ProcessState.UserTime() + r.sys
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.peak = ru.Maxrss * 1024 // kB on Linux
	}
	return r, nil
}

// perMillion is seconds of d per million of records.
func perMillion(d time.Duration, records int) float64 {
	return d.Seconds() / (float64(records) / 1e6)
}

// buildAB is one set built by the baseline commit's binary and by the current one, alternately.
type buildAB struct {
	baseline, current string // the commits, as the rows name them
	records           int    // users + orders of the set
	base, cur         []buildRun
	reason            string // why it was not measured ("" when it was)
}

func meanCPU(rs []buildRun) time.Duration {
	if len(rs) == 0 {
		return 0
	}
	var sum time.Duration
	for _, r := range rs {
		sum += r.cpu
	}
	return sum / time.Duration(len(rs))
}

// ratio is the current build's mean CPU over the baseline's.
func (a *buildAB) ratio() float64 {
	return meanCPU(a.cur).Seconds() / meanCPU(a.base).Seconds()
}

// measured reports whether both sides have runs to compare.
func (a *buildAB) measured() bool {
	return a.reason == "" && len(a.base) > 0 && len(a.cur) > 0
}

// rows are the table's rows for the set called set: each side's builds, then the ratio of
// their means with its verdict — or one row saying why it was not measured.
func (a *buildAB) rows(set, load string) []row {
	name := fmt.Sprintf("%s: build CPU against the issue's baseline %s, same run", set, a.baseline)
	want := fmt.Sprintf("≤ %.3f × the baseline's CPU", buildMaxRatio)
	if !a.measured() {
		reason := a.reason
		if reason == "" {
			reason = "no builds"
		}
		return []row{{name: name, conns: "–", detail: "not measured: " + reason, want: want, verdict: "not measured", load: load}}
	}
	side := func(label string, rs []buildRun) row {
		return row{name: name, conns: "–", detail: label + ", " + runsText(rs, a.records), load: load}
	}
	r := math.Round(a.ratio()*1000) / 1000 // as printed
	return []row{
		side("baseline "+a.baseline, a.base),
		side("current "+a.current, a.cur),
		{name: name, conns: "–", detail: fmt.Sprintf("the current's mean CPU ÷ the baseline's: %.1f s ÷ %.1f s = %.3f ×",
			meanCPU(a.cur).Seconds(), meanCPU(a.base).Seconds(), r), want: want, verdict: verdict(r <= buildMaxRatio), load: load},
	}
}

// runsText shows a side's builds in the order they ran: CPU (its system part in brackets), the
// mean per million records, wall times.
func runsText(rs []buildRun, records int) string {
	cpus, walls := make([]string, len(rs)), make([]string, len(rs))
	var wall time.Duration
	for i, r := range rs {
		cpus[i] = fmt.Sprintf("%.1f (%.1f)", r.cpu.Seconds(), r.sys.Seconds())
		walls[i] = fmt.Sprintf("%.1f", r.wall.Seconds())
		wall += r.wall
	}
	wall /= time.Duration(len(rs))
	m := meanCPU(rs)
	builds := "builds"
	if len(rs) == 1 {
		builds = "build"
	}
	return fmt.Sprintf("%d %s: CPU %s s, mean %.1f s = %.1f s per million records; wall %s s, mean %.1f s = %.1f s per million records",
		len(rs), builds, strings.Join(cpus, " / "), m.Seconds(), perMillion(m, records), strings.Join(walls, " / "), wall.Seconds(), perMillion(wall, records))
}

// buildAgainstBaseline builds the set in dir (records users + orders) b.cfg.buildPairs times with
// the baseline's binary and the current one, alternated — baseline first in odd pairs, current
// first in even ones, so a steady drift in the machine's speed falls on both alike — each into a
// store in the work folder deleted after it. A baseline that cannot be had (no history, a failed
// go build, a build of the set that fails) leaves the reason in the result; only the current
// binary's failure is an error.
func (b *bench) buildAgainstBaseline(ctx context.Context, dir string, records int) (*buildAB, error) {
	a := &buildAB{baseline: b.cfg.baseline, current: commitText(), records: records}
	if a.baseline == "" {
		a.reason = "no baseline commit given (-baseline)"
		return a, nil
	}
	goVersion := ""
	if info, err := buildinfo.ReadFile(b.cfg.bin); err == nil && goRelease.MatchString(info.GoVersion) {
		goVersion = info.GoVersion
	}
	b.logf("the baseline %s's partnersim: from %s (built once, kept)…", a.baseline, filepath.Join(b.cfg.dir, "baseline"))
	baseBin, built, err := baselineBinary(ctx, b.cfg.repo, filepath.Join(b.cfg.dir, "baseline"), a.baseline, goVersion)
	if err != nil {
		a.reason = err.Error()
		b.logf("build against the baseline %s: not measured: %s", a.baseline, a.reason)
		return a, nil
	}
	if built {
		b.logf("built %s", baseBin)
	}
	sides := []struct {
		label, bin, db string
		runs           *[]buildRun
	}{
		{"baseline " + a.baseline, baseBin, filepath.Join(b.cfg.dir, "ab-baseline.db"), &a.base},
		{"current", b.cfg.bin, filepath.Join(b.cfg.dir, "ab-current.db"), &a.cur},
	}
	for _, s := range sides {
		defer os.Remove(s.db)
	}
	for pair := range max(b.cfg.buildPairs, 1) {
		order := []int{0, 1}
		if pair%2 == 1 {
			order = []int{1, 0}
		}
		for _, i := range order {
			s := sides[i]
			os.Remove(s.db)
			r, err := buildOnce(ctx, s.bin, dir, s.db)
			os.Remove(s.db)
			if err != nil && i == 0 {
				a.reason = fmt.Sprintf("the baseline's build of the set failed: %v", err)
				b.logf("build against the baseline %s: not measured: %s", a.baseline, a.reason)
				return a, nil
			}
			if err != nil {
				return nil, err
			}
			*s.runs = append(*s.runs, r)
			b.logf("pair %d, %s: built in %.1f s, CPU %.1f s (system %.1f s; %.1f s per million records), peak RSS %s",
				pair+1, s.label, r.wall.Seconds(), r.cpu.Seconds(), r.sys.Seconds(), perMillion(r.cpu, records), mib(r.peak))
		}
	}
	b.logf("build CPU, current ÷ baseline %s: %.3f ×", a.baseline, a.ratio())
	return a, nil
}

// goRelease is a Go release a toolchain can be asked for by name (GOTOOLCHAIN).
var goRelease = regexp.MustCompile(`^go1\.\d+(\.\d+)?$`)

// baselineBinary returns the partnersim binary of commit in repo's history, built once into
// cache — from a detached worktree made for the build and removed after it — and kept there
// under the commit's full hash and the Go release, so a later run reuses it (built says
// whether this call built it). goVersion, when set, is the release to build with (the current
// binary's, so the two binaries differ by their code alone); "" builds with the go on the PATH.
func baselineBinary(ctx context.Context, repo, cache, commit, goVersion string) (bin string, built bool, err error) {
	full, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", commit+"^{commit}")
	if err != nil {
		return "", false, fmt.Errorf("commit %s is not in the history of %s: %w", commit, repo, err)
	}
	bin = baselinePath(cache, full, goVersion)
	if _, err := os.Stat(bin); err == nil {
		return bin, false, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", false, err
	}
	tmp, err := os.MkdirTemp(cache, "src-")
	if err != nil {
		return "", false, err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "src")
	if _, err := git(ctx, repo, "worktree", "add", "--detach", src, full); err != nil {
		return "", false, fmt.Errorf("a worktree of %s: %w", commit, err)
	}
	defer func() {
		if _, rmErr := git(context.WithoutCancel(ctx), repo, "worktree", "remove", "--force", src); rmErr != nil {
			os.RemoveAll(src)
			_, _ = git(context.WithoutCancel(ctx), repo, "worktree", "prune")
		}
	}()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin+".tmp", "./cmd/partnersim")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if goVersion != "" {
		cmd.Env = append(cmd.Env, "GOTOOLCHAIN="+goVersion)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(bin + ".tmp")
		return "", false, fmt.Errorf("go build of %s failed: %w: %s", commit, err, strings.TrimSpace(string(out)))
	}
	if err := os.Rename(bin+".tmp", bin); err != nil {
		return "", false, err
	}
	return bin, true, nil
}

// baselinePath is where baselineBinary keeps the binary of the commit of full hash built with
// goVersion.
func baselinePath(cache, full, goVersion string) string {
	key := full
	if goVersion != "" {
		key += "-" + goVersion
	}
	return filepath.Join(cache, key, "partnersim")
}

// git runs git in repo and returns its output, trimmed; an error carries what git said.
func git(ctx context.Context, repo string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, "git", append([]string{"-C", repo}, args...)...).CombinedOutput()
	msg := strings.TrimSpace(string(out))
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, msg)
	}
	return msg, nil
}
