package main

import (
	"net"
	"net/http"
	"net/http/httptest"
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
