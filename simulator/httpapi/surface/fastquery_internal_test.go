package surface

import (
	"math/big"
	"reflect"
	"testing"

	"github.com/partnersim/partnersim/simulator/validate"
)

// taken are the queries a partner's lists send (the load generator's forms among them): the
// fast path must read every one, and read it as the general parser does.
var taken = []string{
	"",
	"per_page=25",
	"crypto_kyc_status=approved&per_page=10&sort_order=asc",
	"product=robo&roth_ira_kyc_status=approved&per_page=100&sort_order=desc",
	"created_at_end=2024-02-01T00%3A00%3A00Z&created_at_start=2024-01-02T00%3A00%3A00Z&per_page=50&sort_order=desc",
	"created_at_end=2024-02-01&created_at_start=2024-01-02&per_page=50&sort_order=asc",
	"per_page=25&sort_order=asc&user_account_id=UA-000123",
	"last_record_number=412&per_page=10&sort_key=user_account_id&sort_order=desc",
	"per_page=100&last_record_number=50000&sort_order=asc",
	"product=securities&per_page=1",
	"status=completed&side=buy&per_page=25&sort_order=desc",
	"side=sell&product=crypto&per_page=10&sort_order=asc",
	"placed_at_end=2024-03-08T00%3A00%3A00Z&placed_at_start=2024-03-01T00%3A00%3A00Z&per_page=100&sort_order=asc",
	"placed_at_start=2024-03-01&placed_at_end=2024-03-08",
	"status=pending&per_page=1&per_page=100",
	"unknown=x&per_page=7&&sort_order=asc&",
	"user_account_id=&per_page=2",
	"user_account_id=a+b%20c&per_page=3",
	"last_record_number=0",
	"last_record_number=999999999999999999",
}

// odd are queries the fast path may decline: errors, odd forms, bounds, encodings, repeats.
var odd = []string{
	"per_page=0", "per_page=101", "per_page=100&per_page=101", "per_page=101&per_page=100", "per_page=", "per_page",
	"per_page=025", "per_page=+5", "per_page=%205", "per_page=5.0", "per_page=1_0", "per_page=-1", "per_page=%31%30",
	"last_record_number=-1", "last_record_number=00", "last_record_number=1000000000000000000",
	"last_record_number=18446744073709551616", "last_record_number=1e3",
	"sort_order=ASC", "sort_order=", "sort_order=asc&sort_order=up", "sort_%6Frder=asc", "sort+order=asc",
	"sort_key=created_at", "sort_key=nope", "product=Robo", "product=robo%00", "crypto_kyc_status=", "robo_kyc_status=closed",
	"securities_kyc_status=account_takeover&crypto_kyc_status=pending", "crypto_kyc_status=approved&crypto_kyc_status=x",
	"created_at_start=2024-13-01", "created_at_start=", "created_at_end=2024-01-01T10:00", "created_at_start=1700000000",
	"created_at_start=2024-01-01T00:00:00%2B05:00", "created_at_start=2024-01-01T00:00:00+05:00",
	"status=done", "side=BUY", "placed_at_start=x", "placed_at_end=2024-02-30", "user_account_id=%ff%fe", "user_account_id=%",
	"product=%E2%82%AC", "\xff=1", "per_page=5;sort_order=asc", "=&=&==", "&&&", "per_page=%3",
}

// TestFastListAgrees holds the lists' fast path to the general parser: it reads every common
// query, and whatever it reads, ParseList reads alike without error.
func TestFastListAgrees(t *testing.T) {
	for _, q := range taken {
		if !agreeUsers(t, q) && !agreeOrders(t, q) {
			t.Errorf("%q: neither list's fast path read it", q)
		}
	}
	for _, q := range taken[:10] {
		if !agreeUsers(t, q) {
			t.Errorf("%q: the user list's fast path declined it", q)
		}
	}
	for _, q := range taken[10:] {
		if !agreeOrders(t, q) {
			t.Errorf("%q: the order list's fast path declined it", q)
		}
	}
	for _, q := range odd {
		agreeUsers(t, q)
		agreeOrders(t, q)
	}
}

// FuzzFastListAgrees is TestFastListAgrees over any query.
func FuzzFastListAgrees(f *testing.F) {
	for _, q := range append(append([]string{}, taken...), odd...) {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		agreeUsers(t, q)
		agreeOrders(t, q)
	})
}

// agreeUsers reports whether the user list's fast path read q, failing t when ParseList reads
// it otherwise.
func agreeUsers(t *testing.T, q string) bool { return agree(t, q, fastUserList, UserListQuery) }

func agreeOrders(t *testing.T, q string) bool { return agree(t, q, fastOrderList, OrderListQuery) }

func agree[F any](t *testing.T, q string, fast func(string) (F, *big.Int, bool), query func(*validate.Params) (F, *big.Int)) bool {
	t.Helper()
	f, cursor, ok := fast(q)
	if ok {
		want, wantCursor, err := ParseList(q, query)
		same(t, q, f, cursor, want, wantCursor, err)
	}
	return ok
}

func same[F any](t *testing.T, q string, got F, cursor *big.Int, want F, wantCursor *big.Int, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%q: the fast path read it, the general parser refused it: %v", q, err)
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q: the fast path read %+v, the general parser %+v", q, got, want)
	}
	if cursor.Cmp(wantCursor) != 0 {
		t.Errorf("%q: the fast path's cursor %v, the general parser's %v", q, cursor, wantCursor)
	}
}

// BenchmarkListQuery reads the common queries of both lists the general way and the fast way.
func BenchmarkListQuery(b *testing.B) {
	users, orders := taken[:10], taken[10:]
	b.Run("general", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_, _, _ = ParseList(users[i%len(users)], UserListQuery)
			_, _, _ = ParseList(orders[i%len(orders)], OrderListQuery)
		}
	})
	b.Run("fast", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			_, _, _ = ParseUserListQuery(users[i%len(users)])
			_, _, _ = ParseOrderListQuery(orders[i%len(orders)])
		}
	})
}
