package bolt_test

import (
	"context"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/bolt"
)

// BenchmarkListPages reads list pages from a built store (PARTNERSIM_BENCH_DB, e.g. a copy of
// `partnersim fixtures build`'s 100k users + 1M orders store; it is opened for writing) as
// `partnersim load --scenario mix` asks for them, the HTTP layer left out: a filtered user
// page (users), a filtered order page (orders) and a deep page of either (deep), 10 to 100 a
// page. Its instruction counts (callgrind, at two iteration counts) do not move with the
// machine's load.
func BenchmarkListPages(b *testing.B) {
	path := os.Getenv("PARTNERSIM_BENCH_DB")
	if path == "" {
		b.Skip("PARTNERSIM_BENCH_DB names a built store")
	}
	ctx := context.Background()
	db, err := bolt.Open(path, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	const inst = "ins_gen_full" // the generated set's institution
	first, err := db.ListUsers(ctx, inst, simulator.UserFilter{Limit: 1})
	if err != nil || len(first.Users) == 0 {
		b.Fatalf("no users in %s: %v", inst, err)
	}
	last, _ := db.ListUsers(ctx, inst, simulator.UserFilter{Limit: 1, Desc: true})
	var uaids []string
	for off := 0; off < first.Total; off += max(first.Total/50, 1) {
		page, _ := db.ListUsers(ctx, inst, simulator.UserFilter{Limit: 10, Offset: off})
		for _, u := range page.Users {
			uaids = append(uaids, u.UserAccountID)
		}
	}
	firstOrder, _ := db.ListOrders(ctx, inst, simulator.OrderFilter{Limit: 1})
	lastOrder, _ := db.ListOrders(ctx, inst, simulator.OrderFilter{Limit: 1, Desc: true})
	if len(firstOrder.Orders) == 0 {
		b.Fatalf("no orders in %s", inst)
	}
	sides := []simulator.Side{simulator.SideBuy, simulator.SideSell}
	users := func(r *rand.Rand, f simulator.UserFilter) error {
		switch r.IntN(6) {
		case 0:
			f.KYC = map[simulator.Product]simulator.KYCStatus{oneOf(r, simulator.Products): oneOf(r, simulator.KYCStatuses)}
		case 1:
			f.Product = ptr(oneOf(r, simulator.Products))
			f.KYC = map[simulator.Product]simulator.KYCStatus{oneOf(r, simulator.Products): simulator.KYCApproved}
		case 2:
			f.CreatedStart, f.CreatedEnd = window(r, first.Users[0].CreatedAt, last.Users[0].CreatedAt, 30*24*time.Hour)
		case 3:
			f.UserAccountID = ptr(oneOf(r, uaids))
		case 4:
			f.SortKey, f.Offset = simulator.SortUserAccountID, r.IntN(1000)
		default:
			f.Product = ptr(oneOf(r, simulator.Products))
		}
		_, err := db.ListUserItems(ctx, inst, f)
		return err
	}
	orders := func(r *rand.Rand, f simulator.OrderFilter) error {
		switch r.IntN(5) {
		case 0:
			f.Status = ptr(oneOf(r, simulator.OrderStatuses))
		case 1:
			f.Side, f.Product = ptr(oneOf(r, sides)), ptr(oneOf(r, simulator.Products))
		case 2:
			f.PlacedStart, f.PlacedEnd = window(r, firstOrder.Orders[0].PlacedAt, lastOrder.Orders[0].PlacedAt, 7*24*time.Hour)
		case 3:
			f.UserAccountID = ptr(oneOf(r, uaids))
		default:
			f.Status, f.Side = ptr(simulator.OrderCompleted), ptr(oneOf(r, sides))
		}
		return readOrders(db.ListOrderItems(ctx, inst, f))
	}
	kinds := map[string]func(r *rand.Rand) error{
		"users": func(r *rand.Rand) error {
			return users(r, simulator.UserFilter{Limit: oneOf(r, pageSizes), Desc: r.IntN(2) == 0})
		},
		"orders": func(r *rand.Rand) error {
			return orders(r, simulator.OrderFilter{Limit: oneOf(r, pageSizes), Desc: r.IntN(2) == 0})
		},
		"deep": func(r *rand.Rand) error { // offsets in the second half of all users or all orders
			if r.IntN(2) == 0 {
				n := first.Total
				_, err := db.ListUserItems(ctx, inst, simulator.UserFilter{Limit: 100, Offset: n/2 + r.IntN(max(n/2-100, 1)), Desc: r.IntN(2) == 0})
				return err
			}
			n := firstOrder.Total
			return readOrders(db.ListOrderItems(ctx, inst, simulator.OrderFilter{Limit: 100, Offset: n/2 + r.IntN(max(n/2-100, 1)), Desc: r.IntN(2) == 0}))
		},
	}
	for _, name := range []string{"users", "orders", "deep"} {
		b.Run(name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			for b.Loop() {
				if err := kinds[name](r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// readOrders reads every item of an order page, as rendering it does: a page read from
// covered entries or copied records reads each item only then, as a row (OrderItemPage.Read,
// EachRow).
func readOrders(page *simulator.OrderItemPage, err error) error {
	if err != nil {
		return err
	}
	return page.EachRow(func(*simulator.OrderRow) {})
}

var pageSizes = []int{10, 25, 25, 50, 100}

func oneOf[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// window is a random [start, end) of length span inside [from, to), on whole days one time in two.
func window(r *rand.Rand, from, to time.Time, span time.Duration) (*time.Time, *time.Time) {
	start := from
	if room := to.Sub(from) - span; room > 0 {
		start = from.Add(time.Duration(r.Int64N(int64(room))))
	}
	end := start.Add(span)
	if r.IntN(2) == 0 {
		start, end = start.Truncate(24*time.Hour), end.Truncate(24*time.Hour)
	}
	return &start, &end
}
