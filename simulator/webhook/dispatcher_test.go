package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/bolt"
	"github.com/partnersim/partnersim/simulator/netguard"
	"github.com/partnersim/partnersim/simulator/webhook"
	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

// env is a store with one institution, one approved user, and a running dispatcher.
type env struct {
	db     *bolt.DB
	clock  *simulator.Clock
	disp   *webhook.Dispatcher
	inst   string
	user   string
	secret string
	stop   func()
}

// newEnv starts an env on a new store in the test's temp folder.
func newEnv(tb testing.TB, schedule []time.Duration, timeout time.Duration) *env {
	tb.Helper()
	return newEnvAt(tb, filepath.Join(tb.TempDir(), "s.db"), schedule, timeout)
}

// newEnvAt starts an env on the store at path (a restart opens the same file again).
func newEnvAt(tb testing.TB, path string, schedule []time.Duration, timeout time.Duration) *env {
	tb.Helper()
	return newEnvThrough(tb, path, func(db *bolt.DB) webhook.Store { return db }, schedule, timeout)
}

// newEnvThrough starts an env on the store at path whose dispatcher reaches the store through
// what through makes of it.
func newEnvThrough(tb testing.TB, path string, through func(*bolt.DB) webhook.Store, schedule []time.Duration, timeout time.Duration) *env {
	tb.Helper()
	clock := simulator.NewClock(nil)
	wake := webhook.NewWaker()
	db, err := bolt.Open(path, clock, nil, bolt.Options{Notify: wake.Wake})
	require.NoError(tb, err)
	guard := netguard.New(netguard.Options{AllowLoopback: true})
	e := &env{db: db, clock: clock}
	e.disp = webhook.New(through(db), webhook.Config{Schedule: schedule, Timeout: timeout, Dial: guard.DialContext, Clock: clock, Workers: 8, Wake: wake})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = e.disp.Run(ctx) }()
	e.stop = func() { cancel(); <-done; db.Close() }
	tb.Cleanup(func() {
		select {
		case <-done:
		default:
			e.stop()
		}
	})
	return e
}

func (e *env) seed(tb testing.TB) {
	ctx := context.Background()
	in, err := e.db.CreateInstitution(ctx, "Test CU", simulator.Vendors{})
	require.NoError(tb, err)
	e.inst = in.ID
	u := &simulator.User{InstitutionID: in.ID, UserAccountID: "alice", CreatedAt: time.Now(),
		Accounts: []simulator.Account{{Product: simulator.ProductCrypto, KYCStatus: simulator.KYCPending, Cash: decimal.Zero}}}
	require.NoError(tb, e.db.CreateUser(ctx, u))
	e.user = u.PlatformID
}

func (e *env) subscribe(tb testing.TB, url string) *simulator.Subscription {
	sub, secret, err := e.db.CreateSubscription(context.Background(), e.inst, simulator.EventKYC, url, "v1")
	require.NoError(tb, err)
	if secret != "" {
		e.secret = secret
	}
	return sub
}

func (e *env) kyc(tb testing.TB, to simulator.KYCStatus) *simulator.Event {
	move, err := e.db.TransitionKYC(context.Background(), e.user, simulator.ProductCrypto, to)
	require.NoError(tb, err)
	return move.Event
}

func (e *env) delivery(tb testing.TB, eventID string) *simulator.Delivery {
	ds, err := e.db.Deliveries(context.Background(), simulator.DeliveryFilter{EventID: eventID})
	require.NoError(tb, err)
	require.Len(tb, ds.Deliveries, 1)
	return ds.Deliveries[0]
}

func TestDeliverySignedWithIdempotencyKey(t *testing.T) {
	e := newEnv(t, nil, 0)
	e.seed(t)
	tg := sandboxtest.NewCallback(t, sandboxtest.Answering(200))
	e.subscribe(t, tg.URL+"/hooks")
	ev := e.kyc(t, simulator.KYCApproved)
	sandboxtest.Eventually(t, func() bool { return len(tg.Received()) == 1 }, "first delivery")
	r := tg.Received()[0]
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	assert.Equal(t, ev.ID, r.Header.Get(signature.HeaderID))
	require.NoError(t, signature.Verify(r.Header.Get(signature.HeaderSignature), r.Body, []string{e.secret}, time.Minute, time.Now()))
	assert.Equal(t, ev.ID, gjson.GetBytes(r.Body, "event_id").String())
	assert.Equal(t, "approved", gjson.GetBytes(r.Body, "data.kyc_status").String())
	assert.Equal(t, "/v1/users/"+e.user+"/?user_account_id_type=platform", gjson.GetBytes(r.Body, "links.self").String())
	sandboxtest.Eventually(t, func() bool { return e.delivery(t, ev.ID).Status == simulator.DeliveryDelivered }, "delivered")
	d := e.delivery(t, ev.ID)
	require.Len(t, d.Attempts, 1)
	assert.Equal(t, 200, d.Attempts[0].StatusCode)
	assert.Equal(t, `{"ok":true}`, d.Attempts[0].ResponseBody)
}

func TestNoEventForPendingAndOneDeliveryPerSubscription(t *testing.T) {
	e := newEnv(t, nil, 0)
	e.seed(t)
	a := sandboxtest.NewCallback(t, sandboxtest.Answering(204))
	b := sandboxtest.NewCallback(t, sandboxtest.Answering(202))
	e.subscribe(t, a.URL)
	e.subscribe(t, b.URL)
	require.NotNil(t, e.kyc(t, simulator.KYCDocumentRequested), "document_requested is delivered")
	assert.Nil(t, e.kyc(t, simulator.KYCPending), "a move into pending emits no event")
	sandboxtest.Eventually(t, func() bool { return len(a.Received()) == 1 && len(b.Received()) == 1 }, "one delivery each")
	assert.Equal(t, a.Received()[0].Body, b.Received()[0].Body, "same event bytes")
}

func TestRetriesOnScheduleWithSameIDAndBody(t *testing.T) {
	schedule := []time.Duration{5 * time.Second, 5 * time.Minute}
	e := newEnv(t, schedule, 0)
	e.seed(t)
	tg := sandboxtest.NewCallback(t, func(n int) int { return []int{500, 302, 200}[min(n, 2)] })
	e.subscribe(t, tg.URL)
	ev := e.kyc(t, simulator.KYCApproved)
	sandboxtest.Eventually(t, func() bool { return len(e.delivery(t, ev.ID).Attempts) == 1 }, "first attempt")
	d := e.delivery(t, ev.ID)
	assert.Equal(t, simulator.DeliveryPending, d.Status)
	assert.WithinDuration(t, e.clock.SchedulerNow().Add(5*time.Second), d.NextAttemptAt, 2*time.Second, "retry after 5s")
	// Nothing happens until the virtual clock reaches the retry...
	time.Sleep(50 * time.Millisecond)
	assert.Len(t, tg.Received(), 1)
	// ...advancing it fires the retry at once.
	e.clock.Advance(5 * time.Second)
	e.disp.Wake()
	sandboxtest.Eventually(t, func() bool { return len(e.delivery(t, ev.ID).Attempts) == 2 }, "second attempt")
	assert.Equal(t, 302, e.delivery(t, ev.ID).Attempts[1].StatusCode, "redirect not followed, a failure")
	e.clock.Advance(5 * time.Minute)
	e.disp.Wake()
	sandboxtest.Eventually(t, func() bool { return e.delivery(t, ev.ID).Status == simulator.DeliveryDelivered }, "third attempt delivers")
	reqs := tg.Received()
	require.Len(t, reqs, 3, "the redirect target was never called")
	for _, r := range reqs {
		assert.Equal(t, ev.ID, r.Header.Get(signature.HeaderID), "idempotency key reused")
		assert.Equal(t, reqs[0].Body, r.Body, "same body bytes on every attempt")
		assert.NoError(t, signature.Verify(r.Header.Get(signature.HeaderSignature), r.Body, []string{e.secret}, time.Minute, time.Now()))
	}
}

func TestFailedAfterScheduleAndTimeout(t *testing.T) {
	e := newEnv(t, []time.Duration{time.Second}, 100*time.Millisecond)
	e.seed(t)
	block := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(block)
	e.subscribe(t, slow.URL)
	ev := e.kyc(t, simulator.KYCApproved)
	sandboxtest.Eventually(t, func() bool { return len(e.delivery(t, ev.ID).Attempts) == 1 }, "first attempt times out")
	a := e.delivery(t, ev.ID).Attempts[0]
	assert.Zero(t, a.StatusCode, "no status when the callback never answered")
	assert.Contains(t, a.Error, "timeout")
	e.clock.Advance(time.Second)
	e.disp.Wake()
	sandboxtest.Eventually(t, func() bool { return e.delivery(t, ev.ID).Status == simulator.DeliveryFailed }, "failed after the last retry")
	assert.Len(t, e.delivery(t, ev.ID).Attempts, 2)
}

func TestDeletedSubscriptionEndsPendingDeliveries(t *testing.T) {
	e := newEnv(t, []time.Duration{time.Hour}, 0)
	e.seed(t)
	tg := sandboxtest.NewCallback(t, sandboxtest.Answering(503))
	sub := e.subscribe(t, tg.URL)
	ev := e.kyc(t, simulator.KYCApproved)
	sandboxtest.Eventually(t, func() bool { return len(e.delivery(t, ev.ID).Attempts) == 1 }, "first attempt")
	require.NoError(t, e.db.DeleteSubscription(context.Background(), e.inst, sub.ID))
	d := e.delivery(t, ev.ID)
	assert.Equal(t, simulator.DeliveryFailed, d.Status)
	assert.Equal(t, "subscription deleted", d.Error)
	subs, err := e.db.Subscriptions(context.Background(), e.inst)
	require.NoError(t, err)
	assert.Empty(t, subs, "deleted subscriptions never reappear")
	assert.True(t, simulator.IsNotFound(e.db.DeleteSubscription(context.Background(), e.inst, sub.ID)))
}

func TestDeliveryResumesAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	var up atomic.Bool
	tg := sandboxtest.NewCallback(t, func(int) int {
		if up.Load() {
			return 200
		}
		return 500
	})
	e := newEnvAt(t, path, []time.Duration{time.Millisecond}, 0)
	e.seed(t)
	e.subscribe(t, tg.URL)
	// Stop the dispatcher before the event exists: it lands only in the outbox.
	e.stop()
	db, err := bolt.Open(path, simulator.NewClock(nil), nil)
	require.NoError(t, err)
	move, err := db.TransitionKYC(context.Background(), e.user, simulator.ProductCrypto, simulator.KYCApproved)
	require.NoError(t, err)
	ev := move.Event
	require.NoError(t, db.Close())
	up.Store(true)
	e2 := newEnvAt(t, path, nil, 0)
	sandboxtest.Eventually(t, func() bool { return e2.delivery(t, ev.ID).Status == simulator.DeliveryDelivered }, "delivered after restart")
	assert.Len(t, tg.Received(), 1)
}

// hookedStore is the real store with hooks a test sets before the dispatcher starts: before
// each commit of attempt records, before the dispatcher decides on each outbox entry a walk
// reaches, and after each walk with what it took. A test orders a walk and a commit with them.
type hookedStore struct {
	*bolt.DB
	beforeRecord func(recs []simulator.AttemptRecord)
	beforeCheck  func(deliveryID string)
	walked       func(taken []*simulator.Delivery)
}

func (s *hookedStore) RecordAttempts(ctx context.Context, recs []simulator.AttemptRecord) error {
	s.beforeRecord(recs)
	return s.DB.RecordAttempts(ctx, recs)
}

func (s *hookedStore) Due(ctx context.Context, now time.Time, from string, limit int, check func(id, subID []byte) (take, hold bool)) ([]*simulator.Delivery, string, error) {
	due, next, err := s.DB.Due(ctx, now, from, limit, func(id, subID []byte) (bool, bool) {
		s.beforeCheck(string(id))
		return check(id, subID)
	})
	s.walked(due)
	return due, next, err
}

// A walk of the outbox reads the store as it was when the walk began. A delivery whose attempt
// is recorded while a walk is under way still stands there pending and due, so it stays in
// flight until that walk ends: released as soon as its record is committed, it was taken by
// the walk and delivered again (a drain test under load met it). The recorder goes on
// meanwhile: it never waits for a walk.
func TestARecordedDeliveryIsNotTakenByAWalkBegunBeforeItsRecord(t *testing.T) {
	var (
		records   atomic.Int32
		xWaits    = make(chan string, 1) // X's delivery id, as its record waits to commit
		commitX   = make(chan struct{})
		answerY   = make(chan struct{})
		yHeld     = make(chan struct{})
		yRecorded = make(chan struct{})
		armed     atomic.Pointer[string] // X's delivery id, once Y's attempt is in flight too
		inWalk    atomic.Bool            // the armed walk has reached X
		hung      atomic.Bool            // the recorder did not go on while that walk was under way
		walked    = make(chan []string, 1)
	)
	releaseX, releaseY := sync.OnceFunc(func() { close(commitX) }), sync.OnceFunc(func() { close(answerY) })
	store := &hookedStore{
		beforeRecord: func(recs []simulator.AttemptRecord) {
			switch records.Add(1) {
			case 1:
				xWaits <- recs[0].DeliveryID
				<-commitX
			case 2:
				close(yRecorded)
			}
		},
		beforeCheck: func(id string) {
			if x := armed.Load(); x == nil || id != *x || inWalk.Swap(true) {
				return
			}
			// This walk began before X's record was committed: let it commit, and the recorder
			// go on to the next record (Y's), before the dispatcher decides on X.
			releaseX()
			releaseY()
			select {
			case <-yRecorded:
			case <-time.After(5 * time.Second):
				hung.Store(true)
			}
		},
		walked: func(taken []*simulator.Delivery) {
			if !inWalk.Load() {
				return
			}
			ids := make([]string, len(taken))
			for i, d := range taken {
				ids[i] = d.ID
			}
			select {
			case walked <- ids:
			default:
			}
		},
	}
	e := newEnvThrough(t, filepath.Join(t.TempDir(), "s.db"), func(db *bolt.DB) webhook.Store { store.DB = db; return store }, nil, 0)
	e.seed(t)
	// Pages to spare: a commit that grows the store's map waits for the walks under way, and
	// X's record must commit while one is.
	for i := range 200 {
		e.kyc(t, []simulator.KYCStatus{simulator.KYCApproved, simulator.KYCAccountTakeover}[i%2])
	}
	tg := sandboxtest.NewCallback(t, func(n int) int {
		if n == 1 { // Y: held until the walk reaches X
			close(yHeld)
			<-answerY
		}
		return http.StatusOK
	})
	t.Cleanup(func() { releaseX(); releaseY() }) // before the callback and the dispatcher stop
	e.subscribe(t, tg.URL)

	x := e.kyc(t, simulator.KYCApproved)
	var xDelivery string
	select {
	case xDelivery = <-xWaits: // answered, its record waiting to commit
	case <-time.After(5 * time.Second):
		t.Fatal("X was not attempted")
	}
	e.kyc(t, simulator.KYCAccountTakeover) // Y
	select {
	case <-yHeld:
	case <-time.After(5 * time.Second):
		t.Fatal("Y was not attempted")
	}
	armed.Store(&xDelivery)
	e.disp.Wake()
	var taken []string
	select {
	case taken = <-walked:
	case <-time.After(5 * time.Second):
		t.Fatal("no walk reached X while its record waited")
	}
	require.False(t, hung.Load(), "the recorder went on to Y's record while the walk was under way")
	assert.NotContains(t, taken, xDelivery, "the walk begun before X's record took X again")
	sandboxtest.Eventually(t, func() bool { return e.delivery(t, x.ID).Status == simulator.DeliveryDelivered }, "X delivered, its record committed")
}

func TestRotationSignsWithBothSecretsNewFirst(t *testing.T) {
	e := newEnv(t, nil, 0)
	e.seed(t)
	tg := sandboxtest.NewCallback(t, sandboxtest.Answering(200))
	e.subscribe(t, tg.URL)
	old := e.secret
	fresh, err := e.db.RotateSecret(context.Background(), e.inst, time.Hour)
	require.NoError(t, err)
	e.kyc(t, simulator.KYCApproved)
	sandboxtest.Eventually(t, func() bool { return len(tg.Received()) == 1 }, "delivery")
	r := tg.Received()[0]
	h, err := signature.Parse(r.Header.Get(signature.HeaderSignature))
	require.NoError(t, err)
	require.Len(t, h.Signatures, 2)
	assert.NoError(t, signature.Verify(r.Header.Get(signature.HeaderSignature), r.Body, []string{fresh}, time.Minute, time.Now()))
	assert.NoError(t, signature.Verify(r.Header.Get(signature.HeaderSignature), r.Body, []string{old}, time.Minute, time.Now()))
	newOnly, err := signature.Parse(signature.Sign(h.Timestamp, r.Body, fresh))
	require.NoError(t, err)
	assert.Equal(t, newOnly.Signatures[0], h.Signatures[0], "the new secret's entry comes first")
}

func TestPrivateCallbackRefusedAtConnect(t *testing.T) {
	e := newEnv(t, []time.Duration{}, 0)
	e.seed(t)
	tg := sandboxtest.NewCallback(t, sandboxtest.Answering(200))
	strict := netguard.New(netguard.Options{AllowLoopback: false})
	d := webhook.New(e.db, webhook.Config{Dial: strict.DialContext, Clock: e.clock})
	a := d.Send(context.Background(), tg.URL, []byte(`{}`), "evt_x", nil)
	assert.Zero(t, a.StatusCode)
	assert.Contains(t, a.Error, "public")
	assert.Empty(t, tg.Received(), "the loopback target was never reached")
}
