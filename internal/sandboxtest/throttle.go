package sandboxtest

import (
	"context"
	"net"
	"net/http"
	"time"
)

// ClientFrom returns a client whose connections come from the loopback address local (any of
// 127.0.0.0/8 on Linux), so that a test can be several client addresses at once. It follows no
// redirect.
func ClientFrom(local string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// InOneTokenWindow runs attempt — a run of failed sandbox-token checks and what the test then
// observes — until it reports that what it saw held, or until a run began and ended in one
// clock minute, three runs at most. The sandbox counts failed checks per clock minute (decisions
// D18): a run that straddles a minute's end is counted in two windows and is rightly not
// throttled where one window would be, so it is made again, from a fresh address or sandbox
// (attempt is given the run's number, from 0), and a run far shorter than a minute cannot
// straddle the next minute's end too. The test asserts on the last run's observations.
func InOneTokenWindow(attempt func(run int) (held bool)) {
	for run := 0; ; run++ {
		start := time.Now().Truncate(time.Minute)
		if attempt(run) || run == 2 || time.Now().Truncate(time.Minute).Equal(start) {
			return
		}
	}
}
