package bolt

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
)

// tempStore opens a new store in a folder of its own on clock (nil: the real one), closed when
// the test ends.
func tempStore(tb testing.TB, clock *simulator.Clock) *DB {
	tb.Helper()
	db, err := Open(filepath.Join(tb.TempDir(), "s.db"), clock, nil)
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	return db
}

// reopen closes db and opens its file again on clock (nil: the real one), as a restart does;
// the store it returns is closed when the test ends.
func reopen(tb testing.TB, db *DB, clock *simulator.Clock) *DB {
	tb.Helper()
	path := db.Path()
	require.NoError(tb, db.Close())
	db, err := Open(path, clock, nil)
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	return db
}

// EmitAll writes events and their deliveries in one transaction (benchmarks fill the outbox
// with it; the product writes each event with the state change that caused it).
func (s *DB) EmitAll(ctx context.Context, evs []*simulator.Event) error {
	return s.update(ctx, func(w *writeTx) error {
		for _, e := range evs {
			if err := s.emit(w, e); err != nil {
				return err
			}
		}
		return nil
	})
}

// RehearseWrites makes every later write run its function twice, first in a transaction that
// is rolled back, as bbolt's Batch does when another call of a group fails (see DB.update).
func (s *DB) RehearseWrites() { s.rehearse = true }

// OrderItemsOf returns a page's items as a list, each copied: a page read from covered index
// entries gives them one at a time, in one item (OrderItemPage.Read). An item's PlainStrings is
// a rendering hint that a store from before does not give: it is cleared when it is right, and
// kept to differ when it is wrong (strings that need escaping).
func OrderItemsOf(tb testing.TB, p *simulator.OrderItemPage) []simulator.OrderItem {
	tb.Helper()
	items := []simulator.OrderItem{}
	require.NoError(tb, eachItem(p, func(o *simulator.OrderItem) {
		it := *o
		it.PlainStrings = it.PlainStrings && !plainItem(&it)
		items = append(items, it)
	}))
	return items
}

// eachItem gives fn the page's items in order, each as its row shows it (OrderItemPage.EachRow,
// OrderRow.Item), and returns EachRow's error.
func eachItem(p *simulator.OrderItemPage, fn func(*simulator.OrderItem)) error {
	return p.EachRow(func(r *simulator.OrderRow) {
		it := r.Item()
		fn(&it)
	})
}
