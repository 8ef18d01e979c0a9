package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/partnersim/partnersim/receiver/certify"
	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

// newCertifyCmd is `partnersim certify`: it fires decisions D13's battery at a receiver (package
// certify), prints the table, optionally writes JUnit XML, and fails (errReported) when any case
// failed.
func newCertifyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "certify",
		Short: "fire the certification battery at a webhook receiver (table, JUnit, exit status)",
		Args:  noArgs,
	}
	fs := cmd.Flags()
	cfg := certify.Config{Tolerance: signature.DefaultTolerance}
	fs.StringVar(&cfg.URL, "url", "", "the receiver's webhook URL (required)")
	fs.StringVar(&cfg.Secret, "secret", "", "the signing secret the receiver verifies with, whsec_… (required)")
	fs.DurationVar(&cfg.Tolerance, "tolerance", cfg.Tolerance, "the receiver's signature tolerance: the stale and future cases go 1m beyond it")
	junit := fs.String("junit", "", "also write the report as JUnit XML to this file")
	timeout := fs.Duration("timeout", 10*time.Second, "how long to wait for each answer")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runCertify(cmd.Context(), cfg, *junit, *timeout, cmd.OutOrStdout())
	}
	return cmd
}

func runCertify(ctx context.Context, cfg certify.Config, junit string, timeout time.Duration, stdout io.Writer) error {
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w (usage: partnersim certify --url http://127.0.0.1:9090/webhooks --secret whsec_…)", err)
	}
	if timeout <= 0 {
		return fmt.Errorf("--timeout %s: must be positive", timeout)
	}
	cfg.Client = &http.Client{Timeout: timeout}

	rep := certify.Run(ctx, cfg)
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	if junit != "" {
		if err := writeJUnit(junit, rep); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "JUnit report: %s\n", junit)
	}
	if !rep.Passed() {
		return errReported
	}
	return nil
}

func writeJUnit(path string, rep certify.Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := rep.WriteJUnit(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	return nil
}
