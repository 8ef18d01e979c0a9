package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator"
)

// One institution's hanging callbacks must not stall another's deliveries.
// Institution A's receiver never answers (each attempt waits for the 10 s timeout) and A has 40
// events due, more than the dispatcher's 8 workers; institution B's one event must still be
// delivered at once. Before per-institution shares, B waited for A's attempts to time out.
func TestHangingInstitutionDoesNotStallOthers(t *testing.T) {
	e := newEnv(t, nil, 10*time.Second)
	e.seed(t)
	release := make(chan struct{})
	var hung atomic.Int32
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hung.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hanging.Close)
	t.Cleanup(func() { close(release) }) // runs first: frees the hanging handlers
	e.subscribe(t, hanging.URL)
	for i := 0; i < 40; i++ {
		e.kyc(t, simulator.KYCDocumentRequested)
		e.kyc(t, simulator.KYCPending)
	}
	sandboxtest.Eventually(t, func() bool { return hung.Load() >= 2 }, "A's attempts are hanging")

	// Institution B: a user, a subscription to a receiver that answers at once, one event.
	ctx := context.Background()
	inB, err := e.db.CreateInstitution(ctx, "Other CU", simulator.Vendors{})
	require.NoError(t, err)
	u := &simulator.User{InstitutionID: inB.ID, UserAccountID: "bob", CreatedAt: time.Now(),
		Accounts: []simulator.Account{{Product: simulator.ProductCrypto, KYCStatus: simulator.KYCPending, Cash: decimal.Zero}}}
	require.NoError(t, e.db.CreateUser(ctx, u))
	fast := sandboxtest.NewCallback(t, sandboxtest.Answering(200))
	_, _, err = e.db.CreateSubscription(ctx, inB.ID, simulator.EventKYC, fast.URL, "v1")
	require.NoError(t, err)
	start := time.Now()
	_, err = e.db.TransitionKYC(ctx, u.PlatformID, simulator.ProductCrypto, simulator.KYCApproved)
	require.NoError(t, err)
	sandboxtest.Eventually(t, func() bool { return len(fast.Received()) == 1 }, "B's event is delivered while A's callbacks hang")
	took := time.Since(start)
	t.Logf("B's delivery took %v with %d of A's attempts hanging", took, hung.Load())
	require.Less(t, took, 2*time.Second)
	require.Less(t, hung.Load(), int32(8), "A holds only its share of the 8 workers")
}

// A retry is due its delay after the attempt started, on the virtual clock: the clock may move
// while the attempt waits for its answer (a test advancing it the moment the callback sees the
// request). Measured from the attempt's end, the retry slipped by that advance and never came
// (a flaky contract scenario found it).
func TestRetryDelayCountsFromTheAttemptsStart(t *testing.T) {
	e := newEnv(t, []time.Duration{300 * time.Second}, 10*time.Second)
	e.seed(t)
	held := make(chan struct{})
	release := make(chan struct{})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			close(held)
			<-release
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	e.subscribe(t, srv.URL)
	e.kyc(t, simulator.KYCApproved)
	<-held
	e.clock.Advance(301 * time.Second) // while the first attempt waits for its answer
	close(release)
	sandboxtest.Eventually(t, func() bool { return n.Load() == 2 }, "the retry, due 300 s after the first attempt started, is made")
}
