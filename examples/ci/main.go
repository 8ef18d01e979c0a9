// Command ci shows the contract suite used as a library, as a platform team's own CI program
// would use it: it imports github.com/partnersim/partnersim/features, runs features.Run against
// an implementation of the Partner API — the one -base-url names, or a partnersim sandbox it
// starts in this process — and writes the JUnit report a CI server reads.
//
//	go run . -junit contract.xml                                    # against a sandbox it starts
//	go run . -base-url https://staging.example.com/v1 -api-key "$KEY" -junit contract.xml
//
// It is a module of its own (go.mod), so it depends on partnersim as any other module does;
// its replace directive points at this checkout for local development — drop it and
// `go get github.com/partnersim/partnersim@latest` to use a released version.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/partnersim/partnersim/features"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "ci:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ci", flag.ContinueOnError)
	fs.SetOutput(stderr)
	opts := features.Options{Format: "progress", Output: stdout}
	fs.StringVar(&opts.BaseURL, "base-url", "", "API base URL with its version segment; empty starts a sandbox in this process")
	fs.StringVar(&opts.APIKey, "api-key", os.Getenv("PARTNERSIM_API_KEY"), "a key with every scope (a deployment without a control plane)")
	fs.StringVar(&opts.Tags, "tags", "", `godog tag expression, e.g. "@spec && ~@webhook"`)
	junit := fs.String("junit", "contract.xml", "where to write the JUnit report")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if opts.BaseURL == "" {
		stopSandbox, err := startSandbox(ctx, &opts)
		if err != nil {
			return err
		}
		defer stopSandbox()
	}
	rep, err := features.Run(ctx, opts)
	if err != nil {
		return err
	}
	f, err := os.Create(*junit)
	if err != nil {
		return err
	}
	if err := errors.Join(rep.WriteJUnit(f), f.Close()); err != nil {
		return fmt.Errorf("writing %s: %w", *junit, err)
	}
	fmt.Fprintln(stderr, rep.Summary())
	if !rep.OK() {
		return fmt.Errorf("%d scenarios failed (see %s)", len(rep.Failed()), *junit)
	}
	return nil
}

// startSandbox serves a partnersim sandbox on a free loopback port, with its default fixtures
// on a temporary store, and points opts at it (its control plane included).
func startSandbox(ctx context.Context, opts *features.Options) (stop func(), err error) {
	dir, err := os.MkdirTemp("", "partnersim-ci-")
	if err != nil {
		return nil, err
	}
	sb, err := sandbox.Open(ctx, sandbox.Config{DBPath: filepath.Join(dir, "sandbox.db")})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		sb.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	srv := &http.Server{Handler: sb.Server, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	opts.BaseURL, opts.SandboxURL, opts.SandboxToken = base+"/v1", base, sb.Token
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		sb.Close()
		os.RemoveAll(dir)
	}, nil
}
