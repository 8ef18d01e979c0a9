package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"partnersim/fixtures"
)

// newFixturesCmd is `partnersim fixtures check DIR` and `partnersim fixtures generate … DIR`.
func newFixturesCmd() *cobra.Command {
	return newGroupCmd("fixtures", "check a fixture set, or generate a large synthetic one",
		"  partnersim fixtures check ./myset\n  partnersim fixtures generate --users 100000 --orders 1000000 --seed 7 ./big",
		newFixturesCheckCmd(), newFixturesGenerateCmd())
}

func newFixturesCheckCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check DIR",
		Short: "check every file of the fixture set in DIR",
		Long: "Checks every file of the fixture set in DIR; prints a summary, or every problem as\n" +
			"file: JSON path: reason (exit status 1).",
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
	if err != nil {
		probs := fixtures.Problems(err)
		if probs == nil {
			return fmt.Errorf("fixtures check: %w", err)
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
		fmt.Fprintf(stderr, "fixtures check: %s: %s\n", dir, n)
		return fmt.Errorf("fixtures check: %s: %s: %w", dir, n, errReported)
	}
	fmt.Fprintf(stdout, "ok: %d institutions, %d keys, %d members, %d users, %d transactions, %d orders, %d scenarios\n",
		len(set.Institutions), len(set.Keys), len(set.Members), set.NumUsers, set.NumTransactions, set.NumOrders, len(set.Scenarios))
	return nil
}

func newFixturesGenerateCmd() *cobra.Command {
	opts := fixtures.GenerateOptions{Users: 10000, Orders: 100000, Seed: 1}
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

func runFixturesGenerate(ctx context.Context, dir string, opts fixtures.GenerateOptions, force bool, stdout io.Writer) error {
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
	go func() { done <- fixtures.Generate(dir, opts) }()
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
