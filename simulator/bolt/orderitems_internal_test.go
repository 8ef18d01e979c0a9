package bolt

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// A page of orders read with their strings cut from one arena (orderItems,
// decoder.orderItemStrings) holds each order's item as the whole order gives it — orders whose
// product, side or status an item knows beside ones it does not (read on their own), and
// records of the JSON form, in any mix on one page.
func TestOrderItemsMatchWholeOrders(t *testing.T) {
	g := recordGen{rand.New(rand.NewPCG(34, 4))}
	db := tempStore(t, nil)
	const instID = "ins_page"
	var raws, keys [][]byte
	require.NoError(t, db.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(bOrders)
		for i := range 400 {
			o := g.order()
			o.InstitutionID = instID
			if g.r.IntN(8) > 0 {
				o.Product = simulator.Products[g.r.IntN(len(simulator.Products))]
				o.Side = orderSides[g.r.IntN(2)]
				o.Status = simulator.OrderStatuses[g.r.IntN(len(simulator.OrderStatuses))]
			}
			raw, err := encodeRecord(o)
			if err != nil {
				return err
			}
			if i%50 == 7 { // a record of the JSON form
				if raw, err = json.Marshal(o); err != nil {
					return err
				}
			}
			key := cat(orderKeyPrefix(o), []byte(o.ID), []byte{byte(i >> 8), byte(i)}) // unique
			if err := b.Put(key, raw); err != nil {
				return err
			}
			raws, keys = append(raws, raw), append(keys, key)
		}
		return nil
	}))
	order := make([]int, len(keys)) // the page in key order, as an index gives it
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
	require.NoError(t, db.db.View(func(tx *bbolt.Tx) error {
		for start := 0; start < len(order); start += 25 {
			page := order[start:min(start+25, len(order))]
			pageKeys := make([][]byte, len(page))
			for i, k := range page {
				pageKeys[i] = keys[k]
			}
			items, err := orderItems(tx, pageKeys, instID)
			require.NoError(t, err)
			for i, k := range page {
				var whole simulator.Order
				require.NoError(t, decodeRecord(raws[k], &whole))
				want, got := whole.Item(), items[i]
				for _, a := range []*simulator.Amount{&want.Quantity, &want.Notional, &want.Fee, &got.Quantity, &got.Notional, &got.Fee} {
					d := a.Decimal() // either form of the same decimal
					*a = simulator.Amount{Big: &d}
				}
				require.Equal(t, want, got, "order %d of the page at %d", i, start)
			}
		}
		for _, raw := range raws[:50] {
			if raw[0] != recordV1 {
				continue
			}
			for n := 1; n < len(raw); n += 1 + len(raw)/20 {
				var it simulator.OrderItem
				var ends [4]int
				d := decoder{b: raw[1:n]}
				d.orderItemStrings(&it, nil, &ends)
				require.Error(t, d.err, "cut at %d bytes", n)
			}
		}
		_, err := orderItems(tx, keys[:1], "ins_other")
		require.Error(t, err, "another institution's order: a stale index")
		return nil
	}))
}
