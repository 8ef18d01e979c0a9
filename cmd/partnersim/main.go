// Command partnersim is the Partner Investing sandbox kit in one binary: the simulator (serve),
// the reference receiver (receive), event triggers and scenarios, the contract suites, receiver
// certification, signed sends and fixture tools. Run `partnersim help` for the list.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) && !errors.Is(err, errReported) {
			fmt.Fprintln(os.Stderr, "partnersim:", err)
		}
		os.Exit(1)
	}
}

// errReported marks a failure already explained on stdout/stderr (a failed check, a failing
// contract run), so main only sets the exit status.
var errReported = errors.New("failure reported")

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	return map[string]command{
		"serve":    {"start the sandbox (API, control plane, webhook delivery) on a bbolt file", runServe},
		"trigger":  {"make something happen in a running sandbox: kyc, order, robo, fill, cancel, fail, clock", runTrigger},
		"scenario": {"list or run a fixture scenario in a running sandbox", runScenario},
		"snapshot": {"save or restore the running sandbox's whole state by name", runSnapshot},
		"receive":  {"run the reference webhook receiver and print each event it processes", runReceive},
		"send":     {"sign one event body and POST it to a URL", runSend},
		"certify":  {"fire the certification battery at a webhook receiver (table, JUnit, exit status)", runCertify},
		"contract": {"run the Gherkin contract suites against any implementation of the API", runContract},
		"load":     {"drive a sandbox over loopback and report req/s and latency against a bare-echo ceiling", runLoad},
		"fixtures": {"check a fixture set, or generate a large synthetic one", func(ctx context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
			return runFixtures(ctx, args, stdout, stderr)
		}},
	}
}

// run is the testable entry point: args[0] is the program name, args[1] the subcommand.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmds := commands()
	if len(args) < 2 || args[1] == "help" || args[1] == "-h" || args[1] == "--help" {
		usage(stdout, cmds)
		return nil
	}
	c, ok := cmds[args[1]]
	if !ok {
		usage(stderr, cmds)
		return fmt.Errorf("unknown command %q (see the list above)", args[1])
	}
	if err := c.run(ctx, args[2:], getenv, stdout, stderr); !errors.Is(err, flag.ErrHelp) {
		return err
	}
	return nil // -h or --help: the flag set printed the help; asking for it is no failure
}

// subcommand reads the verb of a command that has several (scenario list|run, snapshot
// save|restore): a request for help prints usage and is done; a missing or unknown verb is the
// usage error.
func subcommand(args []string, usage string, stdout io.Writer, verbs ...string) (verb string, done bool, err error) {
	switch {
	case len(args) > 0 && isHelp(args[0]):
		fmt.Fprintln(stdout, usage)
		return "", true, nil
	case len(args) == 0 || !slices.Contains(verbs, args[0]):
		return "", false, errors.New(usage)
	}
	return args[0], false, nil
}

// isHelp reports whether a subcommand's verb is a request for help.
func isHelp(arg string) bool {
	return arg == "help" || arg == "-h" || arg == "-help" || arg == "--help"
}

func usage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "usage: partnersim <command> [flags]")
	fmt.Fprintln(w)
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run `partnersim <command> -h` for a command's flags. Every flag has a PARTNERSIM_<FLAG> environment equivalent.")
}

// parseFlags parses args, then fills every flag not given on the command line from its
// PARTNERSIM_* environment variable (--api-versions ← PARTNERSIM_API_VERSIONS).
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	// Hand the positionals back through fs.Args (a parse after "--" reads no flag).
	if err := fs.Parse(append([]string{"--"}, pos...)); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		env := "PARTNERSIM_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(env); v != "" {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %w", env, v, e)
			}
		}
	})
	return err
}
