package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/fixtures/generate"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// newFixturesCmd is `partnersim fixtures check|generate|build …`.
func newFixturesCmd() *cobra.Command {
	return newGroupCmd("fixtures", "check a fixture set, generate a large synthetic one, or build a store file from one",
		"  partnersim fixtures check ./myset\n  partnersim fixtures generate --users 100000 --orders 1000000 --seed 7 ./big\n"+
			"  partnersim fixtures build ./big big.db && partnersim serve --db big.db --fixtures ./big",
		newFixturesCheckCmd(), newFixturesGenerateCmd(), newFixturesBuildCmd())
}

func newFixturesCheckCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check DIR",
		Short: "check every file of the fixture set in DIR",
		Long: "Checks every file of the fixture set in DIR, then that every account's holdings agree with\n" +
			"its completed orders; prints a summary, or every problem as file: JSON path: reason (exit status 1).",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("fixtures check: want one set folder, got %d arguments", len(args))
			}
			return runFixturesCheck(args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func runFixturesCheck(dir string, stdout, stderr io.Writer) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("fixtures check: %q is not a folder", dir)
	}
	set, err := fixtures.Open(os.DirFS(dir))
	if err == nil {
		err = set.CheckHoldings()
	}
	if err != nil {
		return reportProblems("fixtures check", dir, err, stdout, stderr)
	}
	fmt.Fprintf(stdout, "ok: %d institutions, %d keys, %d members, %d users, %d transactions, %d orders, %d scenarios\n",
		len(set.Institutions), len(set.Keys), len(set.Members), set.NumUsers, set.NumTransactions, set.NumOrders, len(set.Scenarios))
	return nil
}

// reportProblems prints a set's problems (one per line on stdout, the count on stderr) and
// returns the command's error; an error that is not a list of problems is returned as is.
func reportProblems(cmd, dir string, err error, stdout, stderr io.Writer) error {
	{
		probs := fixtures.Problems(err)
		if probs == nil {
			return fmt.Errorf("%s: %w", cmd, err)
		}
		for _, p := range probs {
			fmt.Fprintln(stdout, p.Error())
		}
		n := fmt.Sprintf("%d problems", len(probs))
		switch {
		case len(probs) == 1:
			n = "1 problem"
		case len(probs) > fixtures.MaxErrors:
			n = fmt.Sprintf("more than %d problems (the first %d are listed)", fixtures.MaxErrors, fixtures.MaxErrors)
		}
		fmt.Fprintf(stderr, "%s: %s: %s\n", cmd, dir, n)
		return fmt.Errorf("%s: %s: %s: %w", cmd, dir, n, errReported)
	}
}

func newFixturesBuildCmd() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "build [--force] SET DB",
		Short: "check the set in SET and write it into a new store file DB, for serve --db DB",
		Long: "Checks the fixture set in SET and writes it into a new store file DB the fast way: one pass\n" +
			"over the set, keys sorted across the whole set and appended sequentially. `partnersim serve\n" +
			"--db DB --fixtures SET` then opens it in milliseconds (CI can cache DB). A set with problems\n" +
			"is reported as `fixtures check` reports it, and DB is not written.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("fixtures build: want a set folder and a store file, got %d arguments", len(args))
			}
			return runFixturesBuild(cmd.Context(), args[0], args[1], force, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace DB when it exists")
	return cmd
}

func runFixturesBuild(ctx context.Context, dir, dbPath string, force bool, stdout, stderr io.Writer) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("fixtures build: %q is not a folder", dir)
	}
	if _, err := os.Stat(dbPath); err == nil && !force {
		return fmt.Errorf("fixtures build: %s exists: pass --force to replace it", dbPath)
	}
	start := time.Now()
	set, size, err := sandbox.BuildFile(ctx, os.DirFS(dir), dbPath, newBuildProgress(stderr, isTerminal(stderr), start))
	if err != nil {
		return reportProblems("fixtures build", dir, err, stdout, stderr)
	}
	fmt.Fprintf(stdout, "built %s from %s: %d users, %d transactions, %d orders in %s (%.1f MB)\nserve it with: partnersim serve --db %s --fixtures %s\n",
		dbPath, dir, set.NumUsers, set.NumTransactions, set.NumOrders, time.Since(start).Round(100*time.Millisecond),
		float64(size)/1e6, dbPath, dir)
	return nil
}

// afterTwoSeconds passes progress on only once a load has run for two seconds: serve says
// nothing about a small set's load (its stderr carries the JSON logs), and shows a large one's.
func afterTwoSeconds(p sandbox.Progress) sandbox.Progress {
	start := time.Now()
	return func(phase string, done, total int) {
		if time.Since(start) >= 2*time.Second {
			p(phase, done, total)
		}
	}
}

// newBuildProgress reports a build (sandbox.Progress): on a terminal one line redrawn in
// place with the rate and, while writing, a bar and the time left; otherwise a plain line at
// most every two seconds and at the end of each phase (logs, CI).
func newBuildProgress(w io.Writer, terminal bool, start time.Time) sandbox.Progress {
	var (
		mu         sync.Mutex
		phase      string
		phaseStart time.Time
		lastLine   time.Time
	)
	return func(p string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if p != phase {
			if phase != "" && terminal {
				fmt.Fprintln(w)
			}
			phase, phaseStart = p, now
		}
		el := now.Sub(phaseStart).Seconds()
		rate := 0.0
		if el > 0 {
			rate = float64(done) / el
		}
		var line string
		if total <= 0 {
			line = fmt.Sprintf("%-5s  %d records checked  %.0f/s  %s", p, done, rate, now.Sub(start).Round(100*time.Millisecond))
		} else {
			pct := done * 100 / total
			eta := "?"
			if rate > 0 {
				eta = (time.Duration(float64(total-done) / rate * float64(time.Second))).Round(100 * time.Millisecond).String()
			}
			bar := ""
			if terminal {
				const width = 30
				bar = "[" + strings.Repeat("#", pct*width/100) + strings.Repeat("-", width-pct*width/100) + "] "
			}
			line = fmt.Sprintf("%-5s  %s%3d%%  %d/%d entries  %.0f/s  ETA %s  %s", p, bar, pct, done, total, rate, eta, now.Sub(start).Round(100*time.Millisecond))
		}
		switch {
		case terminal:
			fmt.Fprintf(w, "\r%s\033[K", line)
			if total > 0 && done == total {
				fmt.Fprintln(w)
			}
		case now.Sub(lastLine) >= 2*time.Second || total > 0 && done == total:
			lastLine = now
			fmt.Fprintln(w, "build: "+line)
		}
	}
}

func newFixturesGenerateCmd() *cobra.Command {
	opts := generate.Options{Users: 10000, Orders: 100000, Seed: 1}
	var force bool
	cmd := &cobra.Command{
		Use:   "generate [--users N] [--orders M] [--seed S] [--force] DIR",
		Short: "write a large synthetic set into DIR for load tests (same seed, same bytes)",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("fixtures generate: want one folder to write, got %d arguments", len(args))
			}
			return runFixturesGenerate(cmd.Context(), args[0], opts, force, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&opts.Users, "users", opts.Users, "users to generate (over two institutions)")
	fs.IntVar(&opts.Orders, "orders", opts.Orders, "orders to generate (grouped into transactions)")
	fs.Int64Var(&opts.Seed, "seed", opts.Seed, "seed: the same seed writes the same bytes")
	fs.BoolVar(&force, "force", false, "write into a folder that is not empty (its set files are replaced)")
	return cmd
}

func runFixturesGenerate(ctx context.Context, dir string, opts generate.Options, force bool, stdout io.Writer) error {
	if opts.Users < 0 || opts.Orders < 0 {
		return errors.New("fixtures generate: --users and --orders must not be negative")
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 && !force {
		return fmt.Errorf("fixtures generate: %s is not empty: pass --force to replace the set in it", dir)
	}

	start := time.Now()
	opts.Progress = newProgress(stdout, isTerminal(stdout), start)
	// Generate has no context: run it aside so an interrupt ends the command at once.
	done := make(chan error, 1)
	go func() { done <- generate.Write(dir, opts) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		fmt.Fprintln(stdout)
		return fmt.Errorf("fixtures generate: interrupted; %s holds an incomplete set", dir)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d users, %d orders (seed %d) in %s\ncheck it with: partnersim fixtures check %s\n",
		dir, opts.Users, opts.Orders, opts.Seed, time.Since(start).Round(100*time.Millisecond), dir)
	return nil
}

// isTerminal reports whether w is a character device (a terminal), as a progress bar needs.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// newProgress returns a progress callback: a bar redrawn in place on a terminal, a plain line
// every tenth otherwise (logs, CI).
func newProgress(w io.Writer, terminal bool, start time.Time) func(done, total int) {
	last := -1
	return func(done, total int) {
		pct := 100
		if total > 0 {
			pct = done * 100 / total
		}
		if terminal {
			const width = 30
			fill := pct * width / 100
			fmt.Fprintf(w, "\r[%s%s] %3d%%  %d/%d records  %s", strings.Repeat("#", fill), strings.Repeat("-", width-fill),
				pct, done, total, time.Since(start).Round(100*time.Millisecond))
			if done == total {
				fmt.Fprintln(w)
			}
			return
		}
		if step := pct / 10; step != last {
			last = step
			fmt.Fprintf(w, "generate: %3d%% (%d/%d records)\n", pct, done, total)
		}
	}
}
