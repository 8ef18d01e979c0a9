package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/features/proxy"
	"github.com/partnersim/partnersim/simulator/openapi/check"
)

// proxyConfig is everything `partnersim proxy` takes.
type proxyConfig struct {
	Upstream     string
	Addr         string
	Receiver     string
	ReceiverAddr string
	Secrets      secretList
	OpenAPI      string
	AllowedHosts []string
	Slow         time.Duration
	PollInterval time.Duration
	Reports      []string
	FailOn       string
	Record       string
	SandboxToken string
	WhenBehind   string
}

func defaultProxyConfig() proxyConfig {
	return proxyConfig{Addr: "127.0.0.1:8081", ReceiverAddr: "127.0.0.1:8082", Slow: 10 * time.Second, PollInterval: time.Second, WhenBehind: string(proxy.Wait)}
}

// newProxyCmd is `partnersim proxy`: package features/proxy between a partner's app and a
// deployment until interrupted; the reports are written when it stops.
func newProxyCmd() *cobra.Command {
	cfg := defaultProxyConfig()
	cmd := &cobra.Command{
		Use:   "proxy --upstream URL [--addr 127.0.0.1:8081] [--report junit=FILE] …",
		Short: "forwards a partner app's traffic to a deployment and checks it against the contract",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runProxy(cmd.Context(), cfg, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Upstream, "upstream", "", "the deployment's origin (https://staging.example); the app keeps its paths (required)")
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "where the app calls the proxy (loopback unless told otherwise)")
	fs.StringVar(&cfg.Receiver, "receiver", "", "the partner's webhook receiver URL: deliveries sent to --receiver-addr are checked and forwarded there")
	fs.StringVar(&cfg.ReceiverAddr, "receiver-addr", cfg.ReceiverAddr, "where deployments deliver webhooks to the proxy (with --receiver)")
	fs.Var(&cfg.Secrets, "signing-secret", "the institution's signing secret whsec_… (repeat it during a rotation's overlap)")
	fs.StringVar(&cfg.OpenAPI, "openapi", "", `the document to check against: a file or URL, or "off" (default: the upstream's /openapi.json, and /_sandbox/openapi.json when served)`)
	fs.StringArrayVar(&cfg.AllowedHosts, "allowed-host", nil, "a Host name answered besides loopback ones (repeatable or comma-separated; .example.test matches every name under it)")
	fs.DurationVar(&cfg.Slow, "slow", cfg.Slow, "an upstream answer later than this is a violation")
	fs.DurationVar(&cfg.PollInterval, "poll-interval", cfg.PollInterval, "the same GET repeated sooner is lint (0: not checked)")
	fs.StringArrayVar(&cfg.Reports, "report", nil, "FORMAT=FILE written when the proxy stops: junit, json or sarif (repeatable)")
	fs.StringVar(&cfg.Record, "record", "", "write the users and orders the app was answered as a fixture set into DIR when stopped (ids kept; keys and secrets never: the set gets fresh keys)")
	fs.StringVar(&cfg.SandboxToken, "sandbox-token", "", "the upstream sandbox's control-plane token: the proxy reports its rules and recent exchanges to the sandbox's QA console "+
		"(Contract proxy page); default: the default fixtures' token for a sandbox on loopback")
	fs.StringVar(&cfg.FailOn, "fail-on", "", `"violations" (the deployment's) or "lint" (violations and the app's lint): exit 1 when any was seen, or when an exchange went unchecked (--when-behind shed)`)
	fs.StringVar(&cfg.WhenBehind, "when-behind", cfg.WhenBehind, `when the checks fall behind the traffic: "wait" (the app's answer waits for them: every exchange checked) or "shed" (the app never waits: what the checks cannot keep up with is counted unchecked)`)
	return cmd
}

func runProxy(ctx context.Context, cfg proxyConfig, stdout io.Writer) error {
	up, err := url.Parse(cfg.Upstream)
	if cfg.Upstream == "" || err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
		return fmt.Errorf("proxy needs --upstream, the deployment's origin (https://staging.example), got %q", cfg.Upstream)
	}
	reports := map[string]string{}
	for _, r := range cfg.Reports {
		format, path, ok := strings.Cut(r, "=")
		if !ok || path == "" || (format != "junit" && format != "json" && format != "sarif") {
			return fmt.Errorf("--report %q: want junit=FILE, json=FILE or sarif=FILE", r)
		}
		reports[path] = format
	}
	if cfg.FailOn != "" && cfg.FailOn != "violations" && cfg.FailOn != "lint" {
		return fmt.Errorf("--fail-on %q: want violations or lint", cfg.FailOn)
	}
	if cfg.WhenBehind != string(proxy.Wait) && cfg.WhenBehind != string(proxy.Shed) {
		return fmt.Errorf("--when-behind %q: want wait or shed", cfg.WhenBehind)
	}
	hosts, err := allowedHosts(cfg.AllowedHosts)
	if err != nil {
		return err
	}
	pc := proxy.Config{Upstream: up, SigningSecrets: cfg.Secrets, AllowedHosts: hosts, Slow: cfg.Slow,
		PollInterval: cfg.PollInterval, Live: stdout, Record: cfg.Record != "", SandboxToken: cfg.SandboxToken, WhenBehind: proxy.Behind(cfg.WhenBehind)}
	if pc.SandboxToken == "" {
		pc.SandboxToken = fallbackToken(cfg.Upstream)
	}
	if pc.SandboxToken != "" && !servesControlPlane(ctx, up) {
		pc.SandboxToken = "" // not a sandbox: its token never goes there
	}
	if cfg.Receiver != "" {
		if pc.Receiver, err = url.Parse(cfg.Receiver); err != nil || pc.Receiver.Host == "" {
			return fmt.Errorf("--receiver %q: want the receiver's URL (http://127.0.0.1:9090/webhooks)", cfg.Receiver)
		}
	}
	checked := "off"
	if pc.Checker, checked, err = proxyDocuments(ctx, up, cfg.OpenAPI); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (pass --addr 127.0.0.1:0 or another port)", cfg.Addr, err)
	}
	pc.Loopback = loopbackListener(ln)
	pc.Address = "http://" + ln.Addr().String()
	p, err := proxy.New(pc)
	if err != nil {
		ln.Close()
		return err
	}
	servers := []*http.Server{{Handler: p.API(), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 1 << 20}}
	listeners := []net.Listener{ln}
	if pc.Receiver != nil {
		rl, err := net.Listen("tcp", cfg.ReceiverAddr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("listen on %s: %w (pass --receiver-addr 127.0.0.1:0 or another port)", cfg.ReceiverAddr, err)
		}
		servers = append(servers, &http.Server{Handler: p.Receiver(), ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 1 << 20})
		listeners = append(listeners, rl)
	}
	errc := make(chan error, len(servers))
	for i, s := range servers {
		go func() { errc <- s.Serve(listeners[i]) }()
	}
	fmt.Fprintf(stdout, "partnersim proxy listening on %s\n\n  app base URL   http://%s   (in place of %s)\n", ln.Addr(), ln.Addr(), up)
	if len(listeners) > 1 {
		fmt.Fprintf(stdout, "  callback URL   http://%s   (subscribe this in place of %s)\n", listeners[1].Addr(), pc.Receiver)
	}
	fmt.Fprintf(stdout, "  page           http://%s/_proxy/   (rules and recent exchanges)\n", ln.Addr())
	if pc.SandboxToken != "" {
		fmt.Fprintf(stdout, "  QA console     %s/_sandbox/ui/proxy   (the sandbox's Contract proxy page, when the upstream is a sandbox)\n", strings.TrimRight(up.String(), "/"))
	}
	behind := "every exchange: when the checks fall behind, the app's answers wait for them (--when-behind wait)"
	if pc.WhenBehind == proxy.Shed {
		behind = "the app never waits: what the checks cannot keep up with is counted unchecked (--when-behind shed)"
	}
	fmt.Fprintf(stdout, "  checked        %s; %s\n  findings       one line each below; reports when stopped (SIGINT/SIGTERM)\n\n", checked, behind)

	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range servers {
		if s.Shutdown(shutdown) != nil {
			s.Close()
		}
	}
	p.Close()
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	book := p.Book()
	now := time.Now()
	for path, format := range reports {
		if err := writeProxyReport(book, format, path, now); err != nil {
			return err
		}
	}
	if cfg.Record != "" {
		if err := p.WriteRecord(cfg.Record); err != nil {
			return fmt.Errorf("--record %s: %w", cfg.Record, err)
		}
		fmt.Fprintf(stdout, "recorded the users and orders seen into %s: partnersim serve --db NEW.db --fixtures %s\n", cfg.Record, cfg.Record)
	}
	v, l := book.Failed(proxy.Violation), book.Failed(proxy.Lint)
	fmt.Fprintf(stdout, "partnersim proxy stopped: %d violations, %d lint findings\n", v, l)
	if none, document := book.Unchecked(); none+document > 0 {
		fmt.Fprintf(stdout, "  the checks fell behind the traffic (--when-behind shed): %d exchanges forwarded unchecked, %d more not checked against the document\n", none, document)
	}
	if err := book.Verdict(cfg.FailOn); err != nil {
		fmt.Fprintf(stdout, "failed: %v\n", err)
		return errReported
	}
	return nil
}

func writeProxyReport(book *proxy.Book, format, path string, now time.Time) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	switch format {
	case "junit":
		err = book.WriteJUnit(f, now)
	case "json":
		err = book.WriteJSON(f, now)
	default:
		err = book.WriteSARIF(f, now)
	}
	return errors.Join(err, f.Close())
}

// proxyDocuments loads the documents to check against: "off" none; "" the upstream's
// /openapi.json and /_sandbox/openapi.json, those served (none: unchecked); else a file or URL.
func proxyDocuments(ctx context.Context, up *url.URL, spec string) (*check.Checker, string, error) {
	if spec == "off" {
		return nil, "off", nil
	}
	origin := strings.TrimSuffix(up.String(), "/")
	c, names, err := loadChecker(ctx, &http.Client{Timeout: 30 * time.Second}, spec, []string{origin + "/openapi.json", origin + "/_sandbox/openapi.json"})
	switch {
	case err != nil:
		return nil, "", fmt.Errorf("proxy: %w", err)
	case c == nil:
		return nil, "no document (the upstream serves no /openapi.json; pass --openapi FILE)", nil
	}
	return c, "against " + names, nil
}

// servesControlPlane says whether the upstream is a sandbox: it serves the control plane's
// document (/_sandbox/openapi.json, which needs no token). Only a sandbox is sent the sandbox
// token with the proxy's reports, so a token exported for a local sandbox never reaches a
// staging deployment.
func servesControlPlane(ctx context.Context, up *url.URL) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(up.String(), "/")+"/_sandbox/openapi.json", nil)
	if err != nil {
		return false
	}
	res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return false
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	return res.StatusCode == http.StatusOK && gjson.GetBytes(b, "openapi").Exists()
}

// loopbackListener says whether a listener is on a loopback address only.
func loopbackListener(ln net.Listener) bool {
	a, ok := ln.Addr().(*net.TCPAddr)
	return ok && a.IP.IsLoopback()
}
