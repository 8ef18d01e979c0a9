package bolt_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/bolt"
	"github.com/partnersim/partnersim/simulator/netguard"
	"github.com/partnersim/partnersim/simulator/webhook"
	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

// sink is a loopback receiver that counts deliveries and notes when each event arrived.
type sink struct {
	*httptest.Server
	n       atomic.Int64
	mu      sync.Mutex
	arrived map[string]time.Time
}

func newSink(tb testing.TB, track bool) *sink {
	s := &sink{arrived: map[string]time.Time{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if track {
			b, _ := io.ReadAll(r.Body)
			id := gjson.GetBytes(b, "event_id").String()
			s.mu.Lock()
			s.arrived[id] = time.Now()
			s.mu.Unlock()
		} else {
			_, _ = io.Copy(io.Discard, r.Body)
		}
		s.n.Add(1)
	}))
	tb.Cleanup(s.Close)
	return s
}

func deliveryEnv(tb testing.TB, url string) (*bolt.DB, *webhook.Dispatcher, string, string) {
	wake := webhook.NewWaker()
	db := MustOpen(tb, bolt.Options{Notify: wake.Wake})
	ctx := context.Background()
	in, err := db.CreateInstitution(ctx, "Bench CU", simulator.Vendors{})
	require.NoError(tb, err)
	_, _, err = db.CreateSubscription(ctx, in.ID, simulator.EventKYC, url, "v1")
	require.NoError(tb, err)
	u := &simulator.User{InstitutionID: in.ID, UserAccountID: "bench", CreatedAt: time.Now(),
		Accounts: []simulator.Account{{Product: simulator.ProductCrypto, KYCStatus: simulator.KYCApproved, Cash: decimal.Zero}}}
	require.NoError(tb, db.CreateUser(ctx, u))
	guard := netguard.New(netguard.Options{AllowLoopback: true})
	d := webhook.New(db, webhook.Config{Dial: guard.DialContext, Clock: db.Clock, Workers: 32, Wake: wake})
	return db, d, in.ID, u.PlatformID
}

// BenchmarkDeliveryThroughput drains an outbox of b.N kyc deliveries to a loopback receiver:
// every attempt is signed, POSTed and recorded durably (bbolt, fsync, group commit). It reports
// deliveries/s; BenchmarkSignedPostCeiling is the same work without the outbox.
func BenchmarkDeliveryThroughput(b *testing.B) { benchmarkDeliveries(b, 1) }

// BenchmarkDeliveriesFourInstitutions is BenchmarkDeliveryThroughput with the deliveries spread
// over four institutions (one subscription each, events interleaved): no institution's share
// of the workers (three quarters of them) then bounds the whole run, as it does with one.
func BenchmarkDeliveriesFourInstitutions(b *testing.B) { benchmarkDeliveries(b, 4) }

func benchmarkDeliveries(b *testing.B, institutions int) {
	s := newSink(b, false)
	db, d, inst, pid := deliveryEnv(b, s.URL)
	ctx := context.Background()
	type owner struct{ inst, pid string }
	owners := []owner{{inst, pid}}
	for i := 1; i < institutions; i++ {
		in, err := db.CreateInstitution(ctx, fmt.Sprintf("Bench CU %d", i), simulator.Vendors{})
		require.NoError(b, err)
		_, _, err = db.CreateSubscription(ctx, in.ID, simulator.EventKYC, s.URL, "v1")
		require.NoError(b, err)
		u := &simulator.User{InstitutionID: in.ID, UserAccountID: "bench", CreatedAt: time.Now(),
			Accounts: []simulator.Account{{Product: simulator.ProductCrypto, KYCStatus: simulator.KYCApproved, Cash: decimal.Zero}}}
		require.NoError(b, db.CreateUser(ctx, u))
		owners = append(owners, owner{in.ID, u.PlatformID})
	}
	evs := make([]*simulator.Event, b.N)
	for i := range evs {
		o := owners[i%len(owners)]
		evs[i] = &simulator.Event{ID: fmt.Sprintf("evt_%08d", i), InstitutionID: o.inst, Type: simulator.EventKYC, CreatedAt: time.Now(),
			Data: simulator.EventData{UserAccountID: "bench", PlatformID: o.pid, Product: simulator.ProductCrypto, KYCStatus: simulator.KYCApproved}}
	}
	for chunk := range slices.Chunk(evs, 5000) {
		require.NoError(b, db.EmitAll(ctx, chunk))
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	b.ResetTimer()
	start, cpu := time.Now(), cpuTime()
	go func() { defer close(done); _ = d.Run(runCtx) }()
	// Done when the receiver has every delivery and the outbox is empty (all recorded).
	for {
		if s.n.Load() >= int64(b.N) {
			if _, pending, _ := db.NextDue(ctx, time.Time{}); !pending {
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	el, used := time.Since(start), cpuTime()-cpu
	b.StopTimer()
	cancel()
	<-done
	b.ReportMetric(float64(b.N)/el.Seconds(), "deliveries/s")
	b.ReportMetric(float64(used.Microseconds())/float64(b.N), "cpu-µs/delivery")
}

// cpuTime is the CPU the process has used (user and system, every thread): on a shared machine
// the CPU one delivery costs is steadier than deliveries per second. The loopback receiver runs
// in the process too, in both benchmarks alike.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSignedPostCeiling is the ceiling for BenchmarkDeliveryThroughput: 32 workers
// signing and POSTing the same bodies to the same kind of receiver, recording nothing.
func BenchmarkSignedPostCeiling(b *testing.B) {
	s := newSink(b, false)
	body := (&simulator.Event{ID: "evt_00000000", Type: simulator.EventKYC, CreatedAt: time.Now(),
		Data: simulator.EventData{UserAccountID: "bench", PlatformID: "usr_x", Product: simulator.ProductCrypto, KYCStatus: simulator.KYCApproved}}).Body("v1")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32, MaxIdleConns: 64}}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	start, cpu := time.Now(), cpuTime()
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				req, _ := http.NewRequest("POST", s.URL, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(signature.HeaderID, "evt_00000000")
				req.Header.Set(signature.HeaderSignature, signature.Sign(time.Now(), body, "whsec_bench"))
				res, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		}()
	}
	wg.Wait()
	el, used := time.Since(start), cpuTime()-cpu
	b.ReportMetric(float64(b.N)/el.Seconds(), "deliveries/s")
	b.ReportMetric(float64(used.Microseconds())/float64(b.N), "cpu-µs/delivery")
}

// TestEventToFirstAttemptLatency creates kyc events at PARTNERSIM_EVENT_RATE a second
// (default 1000) for a few seconds, each in its own durable transaction as the product does,
// and reports the time from commit to the receiver seeing the first attempt.
func TestEventToFirstAttemptLatency(t *testing.T) {
	if os.Getenv("PARTNERSIM_MEASURE") == "" {
		t.Skip("a timed measurement for BENCHMARKS.md: set PARTNERSIM_MEASURE=1")
	}
	rate, secs := 1000, 3
	s := newSink(t, true)
	db, d, inst, _ := deliveryEnv(t, s.URL)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = d.Run(ctx) }()
	defer func() { cancel(); <-done }()
	// One user per producer so transitions never conflict: approved <-> account_takeover.
	const producers = 8
	pids := make([]string, producers)
	for i := range pids {
		u := &simulator.User{InstitutionID: inst, UserAccountID: fmt.Sprintf("lat-%d", i), CreatedAt: time.Now(),
			Accounts: []simulator.Account{{Product: simulator.ProductCrypto, KYCStatus: simulator.KYCApproved, Cash: decimal.Zero}}}
		require.NoError(t, db.CreateUser(context.Background(), u))
		pids[i] = u.PlatformID
	}
	var (
		mu        sync.Mutex
		committed = map[string]time.Time{}
		wg        sync.WaitGroup
	)
	total := rate * secs
	interval := time.Duration(producers) * time.Second / time.Duration(rate)
	start := time.Now()
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			to := []simulator.KYCStatus{simulator.KYCAccountTakeover, simulator.KYCApproved}
			for i := 0; i < total/producers; i++ {
				due := start.Add(time.Duration(i)*interval + time.Duration(p)*interval/producers)
				time.Sleep(time.Until(due))
				move, err := db.TransitionKYC(context.Background(), pids[p], simulator.ProductCrypto, to[i%2])
				if err != nil {
					t.Error(err)
					return
				}
				ev := move.Event
				mu.Lock()
				committed[ev.ID] = time.Now()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	achieved := float64(len(committed)) / time.Since(start).Seconds()
	deadline := time.Now().Add(10 * time.Second)
	for s.n.Load() < int64(len(committed)) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var lat []time.Duration
	for id, c := range committed {
		if a, ok := s.arrived[id]; ok {
			lat = append(lat, max(a.Sub(c), 0))
		}
	}
	require.Len(t, lat, len(committed), "every event arrived")
	slices.Sort(lat)
	p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
	t.Logf("events %d at %.0f/s achieved: commit -> first attempt p50 %s p99 %s max %s", len(lat), achieved, p(0.50), p(0.99), lat[len(lat)-1])
}
