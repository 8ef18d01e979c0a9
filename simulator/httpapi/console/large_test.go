package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/sandbox"
)

// largeUsers is the institution size the users page must stay responsive at.
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

// seedLarge loads into a new store file at path, the way a sandbox's first start does, the
// default fixtures' institutions, keys and settings with n users of ins_harbor in place of the
// set's own users, members and transactions.
func seedLarge(path string, n int) error {
	fsys, err := largeSet(n)
	if err != nil {
		return err
	}
	sb, err := sandbox.Open(context.Background(), sandbox.Config{DBPath: path, Fixtures: fsys})
	if err != nil {
		return err
	}
	return sb.Close()
}

// largeSet is the fixture set seedLarge loads: users LARGE-000000… created a minute apart, each
// with a crypto account whose KYC status cycles through every status.
func largeSet(n int) (fstest.MapFS, error) {
	fsys := fstest.MapFS{}
	err := fs.WalkDir(fixtures.Default(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fixtures.Default(), name)
		fsys[name] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		return nil, err
	}
	users := make([]fixtures.UserRecord, n)
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	statuses := simulator.KYCStatuses
	for i := range users {
		created := simulator.FormatTime(base.Add(time.Duration(i) * time.Minute))
		users[i] = fixtures.UserRecord{InstitutionID: "ins_harbor", PlatformID: fmt.Sprintf("usr_large_%06d", i), UserAccountID: fmt.Sprintf("LARGE-%06d", i),
			CreatedAt: created, Terms: &fixtures.TermsRecord{AcceptedAt: created, Version: "2024-01"},
			Accounts: []fixtures.AccountRecord{{Product: string(simulator.ProductCrypto), KYCStatus: string(statuses[i%len(statuses)]),
				Cash: strconv.Itoa(i % 1000), Holdings: []fixtures.HoldingRecord{}}}}
	}
	data, err := json.Marshal(users)
	fsys[fixtures.FileUsers] = &fstest.MapFile{Data: data}
	fsys[fixtures.FileMembers] = &fstest.MapFile{Data: []byte("[]")}
	fsys[fixtures.FileTransactions] = &fstest.MapFile{Data: []byte("[]")}
	return fsys, err
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
