package console_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/sandbox"
	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/bolt"
)

// largeUsers is the institution size the users page must stay responsive at (issue 13).
const largeUsers = 100_000

// large is the store of 100,000 users, seeded once in the background from TestMain (when the
// test that reads it is selected) so its CPU work overlaps the browser tests' waits.
var large struct {
	done chan struct{}
	path string
	took time.Duration
	err  error
}

// startSeedingLarge seeds the large store in the background into a new temporary directory and
// returns a func that removes it.
func startSeedingLarge() (cleanup func()) {
	large.done = make(chan struct{})
	dir, err := os.MkdirTemp("", "partnersim-console-large-")
	if err != nil {
		large.err = err
		close(large.done)
		return func() {}
	}
	large.path = filepath.Join(dir, "large.db")
	go func() {
		defer close(large.done)
		start := time.Now()
		large.err = seedLarge(large.path, largeUsers)
		large.took = time.Since(start)
	}()
	return func() {
		<-large.done
		os.RemoveAll(dir)
	}
}

// seedLarge writes the default fixtures' institutions and keys plus n users of ins_harbor into
// a new store file at path, the way a fixture load does.
func seedLarge(path string, n int) error {
	db, err := bolt.Open(path, simulator.NewClock(nil), simulator.NewIDs(nil))
	if err != nil {
		return err
	}
	defer db.Close()
	set, err := fixtures.Open(fixtures.Default())
	if err != nil {
		return err
	}
	db.Defaults = bolt.Defaults{Prices: set.DefaultPrices, Fees: set.DefaultFees, Portfolios: set.Portfolios}
	l, err := db.NewLoader(context.Background(), true)
	if err != nil {
		return err
	}
	for _, in := range set.Institutions {
		if err := l.Institution(in); err != nil {
			return err
		}
	}
	for _, k := range set.Keys {
		if err := l.Key(k.APIKey); err != nil {
			return err
		}
	}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	statuses := simulator.KYCStatuses
	for i := range n {
		created := base.Add(time.Duration(i) * time.Minute)
		u := simulator.User{PlatformID: fmt.Sprintf("usr_large_%06d", i), InstitutionID: "ins_harbor", UserAccountID: fmt.Sprintf("LARGE-%06d", i),
			CreatedAt: created, Terms: simulator.Terms{AcceptedAt: created, Version: "2024-01"},
			Accounts: []simulator.Account{{Product: simulator.ProductCrypto, KYCStatus: statuses[i%len(statuses)], Cash: decimal.NewFromInt(int64(i % 1000))}}}
		if err := l.User(u); err != nil {
			return err
		}
	}
	return l.Finish(set.SandboxToken)
}

// TestUsersPageStaysResponsiveWith100kUsers: an institution of 100,000 users is listed a page
// at a time through the store's paged list; the first page, a deep page and a filtered page
// each render per_page rows quickly and say how many match in all.
func TestUsersPageStaysResponsiveWith100kUsers(t *testing.T) {
	if large.done == nil {
		t.Fatal("TestMain did not start seeding the large store")
	}
	<-large.done
	if large.err != nil {
		t.Fatalf("seed %d users: %v", largeUsers, large.err)
	}
	t.Logf("seeded %d users in %s (in the background)", largeUsers, large.took.Round(time.Millisecond))
	sb := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.DBPath = large.path })
	client := signedIn(t, sb)

	pages := []struct {
		query string
		rows  int
		first string
		total string
	}{
		{"per_page=100", 100, "LARGE-099999", "of 100000"},
		{"per_page=100&sort_order=asc&last_record_number=99950", 50, "LARGE-099950", "Showing 99951–100000 of 100000"},
		{"per_page=25&crypto_kyc_status=approved&sort_order=asc", 25, "LARGE-000002", "of 16667"},
		{"per_page=10&sort_key=user_account_id&sort_order=asc&last_record_number=50000", 10, "LARGE-050000", "Showing 50001–50010 of 100000"},
	}
	for _, p := range pages {
		t.Run(p.query, func(t *testing.T) {
			began := time.Now()
			body := client.get(t, "/_sandbox/ui/institutions/ins_harbor/users?"+p.query, http.StatusOK)
			took := time.Since(began)
			assert(t, strings.Count(body, `<a href="/_sandbox/ui/users/usr_large_`) == p.rows, "rows: got %d, want %d", strings.Count(body, `<a href="/_sandbox/ui/users/usr_large_`), p.rows)
			assert(t, strings.Contains(body, ">"+p.first+"</a>"), "the page should list %s first", p.first)
			assert(t, strings.Contains(body, p.total), "the pager should say %q", p.total)
			// Generous for a shared 2-core machine under the race detector; a page that loaded
			// every user would take seconds.
			assert(t, took < 2*time.Second, "the page took %s", took)
			t.Logf("%s: %d rows in %s", p.query, p.rows, took)
		})
	}
}
