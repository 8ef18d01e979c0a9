package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/partnersim/partnersim/receiver/certify"
	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

// sendConfig is everything `partnersim send` takes.
type sendConfig struct {
	target, file, sample, eventID string
	secrets                       secretList
	unix                          int64
	timeout                       time.Duration
}

// newSendCmd is `partnersim send`: it signs one event body and POSTs it once, the way the
// sandbox delivers: printing the request's headers and body, then the answer's status, headers
// and first 4 KiB. A non-2xx answer exits non-zero (errReported), like `curl --fail`.
func newSendCmd() *cobra.Command {
	var cfg sendConfig
	cmd := &cobra.Command{
		Use:   "send --url U --secret S [--sample kyc|transaction|test | --file body.json]",
		Short: "sign one event body and POST it to a URL",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSend(cmd.Context(), cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.target, "url", "", "the receiver's URL (required)")
	fs.Var(&cfg.secrets, "secret", "signing secret whsec_… (required; several, repeated or comma-separated, send one v1 each, as during a rotation)")
	fs.StringVar(&cfg.file, "file", "", "send this file's bytes as the body, exactly")
	fs.StringVar(&cfg.sample, "sample", "", "send a built-in sample body: kyc, transaction or test (the default when --file is not given)")
	fs.StringVar(&cfg.eventID, "event-id", "", "the sample's event_id (default: a fresh evt_…); with --file, only the X-Partner-Webhook-Id header (default: the body's event_id)")
	fs.Int64Var(&cfg.unix, "t", 0, "the signature's t in unix seconds (default: now); an old one rehearses a replay")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "how long to wait for the answer")
	return cmd
}

func runSend(ctx context.Context, cfg sendConfig, stdout, stderr io.Writer) error {
	if u, err := url.Parse(cfg.target); cfg.target == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("send needs --url, an absolute http(s) URL such as http://127.0.0.1:9090/webhooks (got %q)", cfg.target)
	}
	if len(cfg.secrets) == 0 {
		return errors.New("send needs --secret whsec_…")
	}
	if cfg.file != "" && cfg.sample != "" {
		return errors.New("send takes --file or --sample, not both")
	}
	now := time.Now()
	t := now
	if cfg.unix != 0 {
		t = time.Unix(cfg.unix, 0)
	}
	body, what, headerID, err := sendBody(cfg, now)
	if err != nil {
		return err
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if headerID != "" {
		req.Header.Set(signature.HeaderID, headerID)
	}
	req.Header.Set(signature.HeaderSignature, signature.Sign(t, body, cfg.secrets...))
	fmt.Fprintf(stdout, "POST %s (%s, %d bytes)\n", cfg.target, what, len(body))
	for _, h := range []string{"Content-Type", signature.HeaderID, signature.HeaderSignature} {
		if v := req.Header.Get(h); v != "" {
			fmt.Fprintf(stdout, "  %s: %s\n", h, v)
		}
	}
	if headerID == "" {
		fmt.Fprintf(stdout, "  (no %s: the body has no event_id)\n", signature.HeaderID)
	}
	fmt.Fprintf(stdout, "\n%s\n\n", clip(body, 4096))

	client := &http.Client{Timeout: cfg.timeout, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse // the sandbox never follows a redirect either
	}}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", cfg.target, err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return fmt.Errorf("reading the answer: %w", err)
	}
	printAnswer(stdout, resp, answer, time.Since(start))
	if resp.StatusCode/100 != 2 {
		fmt.Fprintf(stderr, "the receiver answered %d: the sandbox would retry this delivery\n", resp.StatusCode)
		return errReported
	}
	return nil
}

// sendBody returns what send posts: the --file's bytes exactly, or a built-in sample made at
// now; what names it for the output, and headerID is the X-Partner-Webhook-Id to send ("" when
// a file's body has no event_id and --event-id is not given).
func sendBody(cfg sendConfig, now time.Time) (body []byte, what, headerID string, err error) {
	if cfg.file != "" {
		b, err := os.ReadFile(cfg.file)
		if err != nil {
			return nil, "", "", err
		}
		var env struct {
			EventID string `json:"event_id"`
		}
		_ = json.Unmarshal(b, &env) // a body that is not an event is still sent: the receiver must refuse it
		headerID = env.EventID
		if cfg.eventID != "" {
			headerID = cfg.eventID
		}
		return b, cfg.file, headerID, nil
	}
	kind := certify.Kind(cfg.sample)
	if kind == "" {
		kind = certify.KindKYC
	}
	if !slices.Contains(certify.Kinds(), kind) {
		return nil, "", "", fmt.Errorf("--sample %q: use kyc, transaction or test", cfg.sample)
	}
	headerID = cfg.eventID
	if headerID == "" {
		headerID = certify.NewID("evt")
	}
	b, err := certify.Sample(kind, headerID, now)
	if err != nil {
		return nil, "", "", err
	}
	return b, "sample " + string(kind), headerID, nil
}

// printAnswer prints the receiver's status line, its headers sorted by name and the first
// bytes of its answer.
func printAnswer(stdout io.Writer, resp *http.Response, answer []byte, took time.Duration) {
	fmt.Fprintf(stdout, "%s %s in %s\n", resp.Proto, resp.Status, took.Round(time.Millisecond))
	names := make([]string, 0, len(resp.Header))
	for name := range resp.Header {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		fmt.Fprintf(stdout, "  %s: %s\n", name, strings.Join(resp.Header[name], ", "))
	}
	if len(answer) > 0 {
		fmt.Fprintf(stdout, "\n%s\n", clip(answer, 4096))
	}
}

// clip renders up to n bytes of b as text, saying when there was more.
func clip(b []byte, n int) string {
	s := strings.TrimRight(strings.ToValidUTF8(string(b[:min(len(b), n)]), "\uFFFD"), "\n")
	if len(b) > n {
		s += fmt.Sprintf("\n… (%d more bytes)", len(b)-n)
	}
	return s
}
