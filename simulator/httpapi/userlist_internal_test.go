package httpapi

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/bolt"
)

// Every Get User List page a store answers (bolt's ListUserItems: rows read from the covering
// index, or items where it declines them) renders to the bytes of the same page read from the
// users' whole records (ListUsers, User.Item) and rendered as items (appendUserItemOpen) — over
// random pages of a store of users as a generated set has them and odd ones (amounts beyond
// int64, zones, nanoseconds, escaped ids, products and statuses the spec does not list, no
// accounts), every filter: products, KYC filters, created_at ranges, both sort keys, either
// order, offsets, one user_account_id — total_records and the cursor included.
func TestUserListPagesRenderAsWholeUsers(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(34, 34))
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	_, prices := randomUser(r)
	db, l := mustLoadStore(t, simulator.Institution{ID: "ins_a", Name: "a", Prices: prices})
	var uaids []string
	for i := range 600 {
		u, _ := randomUser(r)
		if r.IntN(5) > 0 { // most users as a generated set has them, some with an odd id
			u = typicalUser(r, start)
			if r.IntN(8) == 0 {
				u.UserAccountID = renderStrings[r.IntN(len(renderStrings))]
			}
		}
		u.InstitutionID, u.PlatformID = "ins_a", fmt.Sprintf("usr_%04d", i)
		u.UserAccountID = fmt.Sprintf("%s%04d", u.UserAccountID, i%500) // some ids twice
		u.CreatedAt = start.Add(time.Duration(r.Int64N(int64(90 * 24 * time.Hour)))).Truncate(time.Second)
		uaids = append(uaids, u.UserAccountID)
		require.NoError(t, l.User(*u))
	}
	require.NoError(t, l.Finish("tok"))

	rowsPages := 0
	for i := range 1500 {
		f := simulator.UserFilter{Limit: 1 + r.IntN(100), Desc: r.IntN(2) == 0}
		if r.IntN(3) > 0 {
			f.Offset = r.IntN(700)
		}
		if r.IntN(3) == 0 {
			f.SortKey = simulator.SortUserAccountID
		}
		switch r.IntN(6) {
		case 0:
			f.Product = &simulator.Products[r.IntN(len(simulator.Products))]
		case 1:
			f.KYC = map[simulator.Product]simulator.KYCStatus{}
			for range 1 + r.IntN(2) {
				f.KYC[simulator.Products[r.IntN(len(simulator.Products))]] = simulator.KYCStatuses[r.IntN(len(simulator.KYCStatuses))]
			}
			if r.IntN(2) == 0 {
				f.Product = &simulator.Products[r.IntN(len(simulator.Products))]
			}
		case 2:
			from := start.Add(time.Duration(r.Int64N(int64(100 * 24 * time.Hour))))
			to := from.Add(time.Duration(r.Int64N(int64(40 * 24 * time.Hour))))
			f.CreatedStart, f.CreatedEnd = &from, &to
			if r.IntN(3) == 0 {
				f.CreatedEnd = nil
			}
		case 3:
			id := uaids[r.IntN(len(uaids))]
			if r.IntN(10) == 0 {
				id = "nobody"
			}
			f.UserAccountID = &id
			f.Offset = r.IntN(2)
		}
		cursor := big.NewInt(int64(f.Offset))
		page, err := db.ListUserItems(ctx, "ins_a", f)
		require.NoError(t, err)
		if page.Rows != nil {
			rowsPages++
		}
		got := string(renderUserList(nil, page, cursor, f.Limit))

		whole, err := db.ListUsers(ctx, "ins_a", f)
		require.NoError(t, err)
		want := &simulator.UserItemPage{Total: whole.Total, Items: []simulator.UserItem{}}
		for _, u := range whole.Users {
			want.Items = append(want.Items, u.Item(whole.Prices, nil))
		}
		require.Equal(t, string(renderUserPage(nil, want, cursor, f.Limit)), got, "page %d: %+v", i, f)
	}
	require.Greater(t, rowsPages, 300, "pages rendered from rows")
}

// typicalUser is a user as a generated set has them: up to four accounts of known products
// and statuses, approved at whole seconds in UTC, cash in cents, a few holdings of up to eight
// places; its user_account_id is a prefix the caller completes.
func typicalUser(r *rand.Rand, start time.Time) *simulator.User {
	u := &simulator.User{UserAccountID: "uaid_", Terms: simulator.Terms{AcceptedAt: start, Version: "v1"}}
	for _, p := range simulator.Products[:r.IntN(len(simulator.Products)+1)] {
		a := simulator.Account{Product: p, KYCStatus: simulator.KYCStatuses[r.IntN(len(simulator.KYCStatuses))], Cash: decimal.New(r.Int64N(1e9), -2)}
		if a.KYCStatus.ShowsApprovedAt() || r.IntN(4) == 0 {
			at := start.Add(time.Duration(r.Int64N(int64(400 * 24 * time.Hour)))).Truncate(time.Second)
			a.KYCApprovedAt = &at
		}
		for _, sym := range []string{"BTC", "AAPL", "VTI", "NOPE"}[:r.IntN(5)] {
			a.Holdings = append(a.Holdings, simulator.Holding{Symbol: sym, Quantity: decimal.New(r.Int64N(1e10), -int32(r.IntN(9)))})
		}
		u.Accounts = append(u.Accounts, a)
	}
	return u
}

// mustLoadStore opens a store on a temporary file, closed when the test ends, and starts
// loading it with in: the caller loads the rest and finishes.
func mustLoadStore(tb testing.TB, in simulator.Institution) (*bolt.DB, *bolt.Loader) {
	tb.Helper()
	db, err := bolt.Open(filepath.Join(tb.TempDir(), "pages.db"), nil, nil)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = db.Close() })
	l, err := db.NewLoader(context.Background(), true)
	require.NoError(tb, err)
	require.NoError(tb, l.Institution(in))
	return db, l
}
