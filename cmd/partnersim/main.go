package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	// CA roots compiled into the binary, used when the system has none: the container image is
	// the binary alone on scratch, and https webhook callbacks must still verify.
	_ "golang.org/x/crypto/x509roots/fallback"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintln(os.Stderr, "partnersim:", err)
		}
		os.Exit(1)
	}
}

// errReported marks a failure already explained on stdout/stderr (a failed check, a failing
// contract run), so main only sets the exit status.
var errReported = errors.New("failure reported")

// run is the testable entry point: args[0] is the program name, the rest the command line.
// Help (-h, --help, `help`) prints to stdout and is no failure.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	root := newRootCmd(getenv)
	root.SetArgs(args[1:])
	root.SetOut(stdout)
	root.SetErr(stderr)
	return root.ExecuteContext(ctx)
}
