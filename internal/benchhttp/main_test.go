package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestPollHealthKeepsOneConnection holds the readiness poll to one kept-alive connection: a
// new connection a poll (every 2 ms, ~8,000 in a first serve of the 100k set) is work the
// measured server does only because it is measured.
func TestPollHealthKeepsOneConnection(t *testing.T) {
	var asked, conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if asked.Add(1) <= 20 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"detail":"sandbox is loading","progress":{"phase":"read","done":16384,"total":0}}`))
			return
		}
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	ready := pollHealth(&http.Client{Timeout: time.Second}, srv.URL, time.Now().Add(time.Minute), func() bool { return false })
	assert.True(t, ready, "pollHealth: got not ready, want ready after 21 polls")
	assert.EqualValues(t, 21, asked.Load(), "polls: got %d, want 21", asked.Load())
	assert.EqualValues(t, 1, conns.Load(), "connections opened: got %d, want 1 (kept alive)", conns.Load())
}

// TestPollHealthStopsWhenGone ends the poll when the process has ended.
func TestPollHealthStopsWhenGone(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	assert.False(t, pollHealth(&http.Client{Timeout: time.Second}, srv.URL, time.Now().Add(time.Minute), func() bool { return true }),
		"pollHealth: got ready from a server that never answers 200")
}

// TestServeReportsAProcessThatExits stops waiting for a serve that has ended: a bench given a
// binary that cannot serve says so at once, with its output, not after the five minutes a first
// build is given.
func TestServeReportsAProcessThatExits(t *testing.T) {
	b := &bench{cfg: config{bin: "/bin/false", dir: t.TempDir()}}
	start := time.Now()
	s, err := b.serve(context.Background(), filepath.Join(t.TempDir(), "x.db"), "", "gone")
	if !assert.Error(t, err, "serve of /bin/false: got ready") {
		s.stop()
	}
	assert.Less(t, time.Since(start), 30*time.Second, "serve of /bin/false: noticed after %s", time.Since(start))
}

// TestSetName names a set one way everywhere: round millions and thousands short, other
// counts in full.
func TestSetName(t *testing.T) {
	for _, c := range []struct {
		users, orders int
		want          string
	}{
		{100_000, 1_000_000, "100k users + 1M orders"},
		{10_000, 100_000, "10k users + 100k orders"},
		{1_000_000, 10_000_000, "1M users + 10M orders"},
		{1_500_000, 2_500, "1500k users + 2,500 orders"},
		{200, 2_000, "200 users + 2k orders"},
	} {
		assert.Equal(t, c.want, setName(c.users, c.orders), "setName(%d, %d)", c.users, c.orders)
	}
	d := decade{users: 100_000, orders: 1_000_000}
	assert.Equal(t, setName(100_000, 1_000_000), d.name(), "a decade's name: got %q", d.name())
}
