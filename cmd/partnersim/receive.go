package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/receiver"
	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

// secretList is a repeatable, comma-separated flag of signing secrets (several during a
// rotation).
type secretList []string

func (s *secretList) String() string { return strings.Join(*s, ",") }

// Type names the value in help.
func (s *secretList) Type() string { return "whsec_…" }

func (s *secretList) Set(v string) error {
	for part := range strings.SplitSeq(v, ",") {
		part = strings.TrimSpace(part)
		if !strings.HasPrefix(part, signature.SecretPrefix) || len(part) == len(signature.SecretPrefix) {
			return fmt.Errorf("a signing secret starts with %q (the subscribe call that issued it returned it as signing_secret)", signature.SecretPrefix)
		}
		*s = append(*s, part)
	}
	return nil
}

// receiveConfig is everything `partnersim receive` takes.
type receiveConfig struct {
	Addr       string
	DBPath     string
	Secrets    secretList
	Tolerance  time.Duration
	APIBaseURL string
	APIKey     string
	FailFirst  int
	FailStatus int
	Delay      time.Duration
}

func defaultReceiveConfig() receiveConfig {
	return receiveConfig{Addr: "127.0.0.1:9090", DBPath: "partnersim-receiver.db", Tolerance: signature.DefaultTolerance,
		APIBaseURL: "http://127.0.0.1:8080", FailStatus: http.StatusInternalServerError}
}

// newReceiveCmd is `partnersim receive`: the reference receiver (package receiver) until
// interrupted, printing a line for every event as it is processed, skipped, refused or
// recognised as a duplicate.
func newReceiveCmd(getenv func(string) string) *cobra.Command {
	cfg := defaultReceiveConfig()
	cmd := &cobra.Command{
		Use:   "receive --secret whsec_… [--api-key K]",
		Short: "run the reference webhook receiver and print each event it processes",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// The sandbox the other commands reach (serve prints the export) serves the API too.
			if u := getenv("PARTNERSIM_SANDBOX_URL"); u != "" && !cmd.Flags().Changed("api-base-url") {
				cfg.APIBaseURL = u
			}
			return runReceive(cmd.Context(), cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen address (host:port; port 0 picks a free one)")
	fs.Var(&cfg.Secrets, "secret", "signing secret whsec_… (required; repeat it or separate with commas during a rotation)")
	fs.StringVar(&cfg.DBPath, "db", cfg.DBPath, "the receiver's own bbolt file: dedupe keys, event bodies, processing queue")
	fs.DurationVar(&cfg.Tolerance, "tolerance", cfg.Tolerance, "how far the signature's t may be from now, either way")
	fs.StringVar(&cfg.APIBaseURL, "api-base-url", cfg.APIBaseURL, "origin of the API that links.self is refetched from (default: PARTNERSIM_SANDBOX_URL when set)")
	fs.StringVar(&cfg.APIKey, "api-key", "", "API key for the refetch of links.self (without one, events are processed without refetching)")
	fs.IntVar(&cfg.FailFirst, "fail-first", 0, "answer the first N deliveries with --fail-status (to watch the sender retry)")
	fs.IntVar(&cfg.FailStatus, "fail-status", cfg.FailStatus, "status for --fail-first")
	fs.DurationVar(&cfg.Delay, "delay", 0, "delay every answer by this long (at most 10m; the sandbox gives up after 10s)")
	return cmd
}

func runReceive(ctx context.Context, cfg receiveConfig, stdout, stderr io.Writer) error {
	if len(cfg.Secrets) == 0 {
		return errors.New("receive needs --secret whsec_… (the signing_secret the institution's first subscribe returned)")
	}
	if cfg.Delay < 0 || cfg.Delay > 10*time.Minute {
		return fmt.Errorf("--delay %s: 0 to 10m", cfg.Delay)
	}
	rcvCfg := receiver.Config{
		Secrets:   cfg.Secrets,
		Tolerance: cfg.Tolerance,
		Faults:    receiver.Faults{FailFirst: cfg.FailFirst, FailStatus: cfg.FailStatus, DelayMS: cfg.Delay.Milliseconds()},
		Logger:    slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	}
	if cfg.APIKey != "" {
		u, err := url.Parse(cfg.APIBaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--api-base-url %q: want an origin such as http://127.0.0.1:8080", cfg.APIBaseURL)
		}
		if isVersionPath(u.Path) { // links.self already starts with /v1/…
			u.Path = ""
		}
		rcvCfg.APIBaseURL, rcvCfg.APIKey = strings.TrimSuffix(u.String(), "/"), cfg.APIKey
	}
	p := &eventPrinter{w: stdout, refetch: rcvCfg.APIBaseURL != ""}
	rcvCfg.OnEvent, rcvCfg.OnDone = p.arrival, p.done

	rcv, err := receiver.Open(cfg.DBPath, rcvCfg)
	if err != nil {
		return err
	}
	defer rcv.Close()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another receiver running? pass --addr 127.0.0.1:0 or another port)", cfg.Addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/{$}", rcv)
	mux.Handle("/webhooks", rcv)
	mux.Handle("/webhooks/{$}", rcv)
	mux.Handle("/_receiver/", rcv.Inspector())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	p.banner(ln.Addr().String(), cfg, rcvCfg)

	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close() // an injected delay outlasting the grace period: cut it off
	}
	err = rcv.Close()
	p.printf("receiver stopped\n")
	return err
}

// eventPrinter writes the banner and one line per event outcome. Deliveries arrive on many
// goroutines and outcomes on the worker, so every write holds mu.
type eventPrinter struct {
	mu      sync.Mutex
	w       io.Writer
	refetch bool
}

func (p *eventPrinter) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, args...)
}

func (p *eventPrinter) banner(addr string, cfg receiveConfig, rc receiver.Config) {
	base := "http://" + addr
	var b strings.Builder
	fmt.Fprintf(&b, "partnersim receiver listening on %s\n\n", addr)
	fmt.Fprintf(&b, "  callback URL   %s/webhooks   (subscribe this URL; POST %s/ is the same endpoint)\n", base, base)
	fmt.Fprintf(&b, "  inspection     %s/_receiver/events   /_receiver/processed   /_receiver/faults\n", base)
	fmt.Fprintf(&b, "  store          %s\n", cfg.DBPath)
	shown := make([]string, len(cfg.Secrets))
	for i, s := range cfg.Secrets {
		shown[i] = abbreviate(s, len(signature.SecretPrefix)+4)
	}
	fmt.Fprintf(&b, "  secrets        %s\n", strings.Join(shown, ", "))
	fmt.Fprintf(&b, "  tolerance      %s either way\n", cfg.Tolerance)
	if p.refetch {
		fmt.Fprintf(&b, "  refetch        links.self from %s with key %s\n", rc.APIBaseURL, abbreviate(rc.APIKey, 8))
	} else {
		fmt.Fprintln(&b, "  refetch        off: no --api-key, so events are processed without refetching links.self")
	}
	var faults []string
	if cfg.FailFirst > 0 {
		faults = append(faults, fmt.Sprintf("the first %d deliveries answered %d", cfg.FailFirst, cfg.FailStatus))
	}
	if cfg.Delay > 0 {
		faults = append(faults, fmt.Sprintf("every answer delayed %s", cfg.Delay))
	}
	if len(faults) == 0 {
		faults = []string{"none"}
	}
	fmt.Fprintf(&b, "  faults         %s\n\n", strings.Join(faults, "; "))
	p.printf("%s", b.String())
}

// isVersionPath reports whether an API base URL's path is just a version ("/v1", "/v2/"),
// which links.self already carries.
func isVersionPath(p string) bool {
	return validVersion(strings.TrimSuffix(strings.TrimPrefix(p, "/"), "/"))
}

func abbreviate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// line prints one outcome: time, what happened, the event, and the detail.
func (p *eventPrinter) line(what, event, detail string) {
	p.printf("%s %-9s %s — %s\n", time.Now().Format("15:04:05"), what, event, detail)
}

// arrival is Config.OnEvent. A new event that is queued prints nothing yet: its line comes
// when it is processed (done), so every event prints once with its outcome.
func (p *eventPrinter) arrival(a receiver.Arrival) {
	switch a.Verdict {
	case receiver.VerdictAccepted:
		if strings.HasPrefix(a.Reason, "not processed") { // skipped at acceptance: is_test, a status filter
			p.line("skipped", describe(a.EventID, []byte(a.Body)), fmt.Sprintf("%d, %s", a.StatusCode, a.Reason))
		}
	case receiver.VerdictDuplicate:
		p.line("duplicate", describe(a.EventID, []byte(a.Body)), fmt.Sprintf("%d, %s", a.StatusCode, a.Reason))
	default: // refused, fault, error: the body may not even be an event
		id := a.EventID
		switch {
		case id != "":
		case a.HeaderID != "": // refused before the body was trusted: all we have is the header
			id = a.HeaderID + " (id header)"
		default:
			id = "(no id)"
		}
		p.line(string(a.Verdict), id, fmt.Sprintf("%d, %s", a.StatusCode, a.Reason))
	}
}

// done is Config.OnDone: an accepted event's processing ended.
func (p *eventPrinter) done(rec receiver.Record) {
	event := describe(rec.EventID, rec.Body)
	if rec.State != receiver.StateProcessed {
		p.line(string(rec.State), event, fmt.Sprintf("after %d attempt(s): %s", rec.Attempts, rec.Reason))
		return
	}
	if !p.refetch {
		p.line("processed", event, "not refetched (no --api-key)")
		return
	}
	p.line("processed", event, refetchSummary(rec))
}

// describe names an event by its id, type and key data, read from its body.
func describe(id string, body []byte) string {
	ev := gjson.ParseBytes(body)
	data := ev.Get("data")
	var parts []string
	parts = append(parts, id, ev.Get("event_type").String())
	if ev.Get("is_test").Bool() {
		parts = append(parts, "is_test")
	}
	switch ev.Get("event_type").String() {
	case "kyc":
		parts = append(parts, fmt.Sprintf("%s → %s", data.Get("product"), data.Get("kyc_status")))
	case "transaction":
		parts = append(parts, data.Get("transaction_id").String(), data.Get("status").String())
		if p := data.Get("product").String(); p != "" {
			parts = append(parts, "("+p+")")
		}
	}
	if u := data.Get("user_account_id").String(); u != "" {
		parts = append(parts, "user "+u)
	}
	return strings.Join(parts, " ")
}

// refetchSummary says what the refetched record shows now: the account's kyc_status for a
// kyc event, the transaction's status for a transaction event.
func refetchSummary(rec receiver.Record) string {
	ev := gjson.ParseBytes(rec.Body)
	self := ev.Get("links.self").String()
	res := gjson.ParseBytes(rec.Resource)
	switch ev.Get("event_type").String() {
	case "kyc":
		product := ev.Get("data.product").String()
		for _, acct := range res.Get("accounts").Array() {
			if acct.Get("product").String() == product {
				return fmt.Sprintf("refetched %s: %s kyc_status now %s, market value %s", self, product,
					acct.Get("kyc_status"), acct.Get("current_market_value"))
			}
		}
		return fmt.Sprintf("refetched %s: the user has no %s account", self, product)
	case "transaction":
		if st := res.Get("status"); st.Exists() {
			return fmt.Sprintf("refetched %s: transaction status %s, %d order(s)", self, st, len(res.Get("orders").Array()))
		}
	}
	return fmt.Sprintf("refetched %s (%d bytes)", self, len(rec.Resource))
}
