package console_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"partnersim/fixtures"
	"partnersim/internal/sandboxtest"
	"partnersim/sandbox"
	"partnersim/simulator"
	"partnersim/simulator/bolt"
)

// largeUsers is the institution size the users page must stay responsive at (issue 13).
const largeUsers = 100_000

// seedLarge writes the default fixtures' institutions and keys plus n users of ins_harbor into
// a new store file, the way a fixture load does, and returns its path.
func seedLarge(tb testing.TB, n int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "large.db")
	db, err := bolt.Open(path, simulator.NewClock(nil), simulator.NewIDs(nil))
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	set, err := fixtures.Open(fixtures.Default())
	if err != nil {
		tb.Fatal(err)
	}
	db.Defaults = bolt.Defaults{Prices: set.DefaultPrices, Fees: set.DefaultFees, Portfolios: set.Portfolios}
	l, err := db.NewLoader(context.Background(), true)
	if err != nil {
		tb.Fatal(err)
	}
	for _, in := range set.Institutions {
		if err := l.Institution(in); err != nil {
			tb.Fatal(err)
		}
	}
	for _, k := range set.Keys {
		if err := l.Key(k.APIKey); err != nil {
			tb.Fatal(err)
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
			tb.Fatal(err)
		}
	}
	if err := l.Finish(set.SandboxToken); err != nil {
		tb.Fatal(err)
	}
	return path
}

// TestUsersPageStaysResponsiveWith100kUsers: an institution of 100,000 users is listed a page
// at a time through the store's paged list; the first page, a deep page and a filtered page
// each render per_page rows quickly and say how many match in all.
func TestUsersPageStaysResponsiveWith100kUsers(t *testing.T) {
	// Seeding 100,000 users is CPU work (a minute under the race detector on a busy 2-core
	// machine); the browser tests mostly wait on Chromium, so let it run beside them.
	t.Parallel()
	start := time.Now()
	path := seedLarge(t, largeUsers)
	t.Logf("seeded %d users in %s", largeUsers, time.Since(start).Round(time.Millisecond))
	sb := sandboxtest.MustServe(t, func(c *sandbox.Config) { c.DBPath = path })
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
