package httpapi

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator"
)

// unixToInternal is time's count of seconds from the year 1 to 1970: time.Unix of
// math.MinInt64+unixToInternal is the earliest instant a time.Time holds, of
// math.MaxInt64-unixToInternal the latest.
const unixToInternal = 62135596800

// extremeInstants are the instants whose texts are the longest any time.Time writes (years of
// twelve digits, one of them negative), the ends of what the sandbox stores (decisions D17) and
// of what --frozen-clock takes (RFC 3339's years), each to the microsecond.
var extremeInstants = []time.Time{
	time.Unix(math.MinInt64+unixToInternal, 999_999_000),
	time.Unix(math.MaxInt64-unixToInternal, 999_999_000),
	simulator.FirstStorableTime.Add(-time.Microsecond), simulator.LastStorableTime,
	time.Date(0, 1, 1, 0, 0, 0, 999_999_000, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999_999_000, time.UTC),
}

// A point's head block holds the as_of of any instant a time.Time can hold, so the panic of
// newRenderSeries is out of reach of any clock: the frames of the sandbox's clock — within the
// storable years, or an RFC 3339 year where --frozen-clock puts it — write whole hours of
// four-digit years (46 bytes).
func TestPointHeadsHoldAnyInstant(t *testing.T) {
	longest := 0
	for _, at := range extremeInstants {
		var s renderSeries
		require.NotPanics(t, func() { s = newRenderSeries([]simulator.FramePoint{{AsOf: at}}) }, "as_of %v", at)
		longest = max(longest, s.heads[0].N)
	}
	assert.LessOrEqual(t, longest, len(simulator.PointHead{}.B), "the longest head, got/want at most")
	assert.Equal(t, 62, longest, "the longest head: `{\"as_of\":\"-292277022657-01-27T08:29:52.999999Z\",\"cost_basis\":\"`")
	for _, now := range []time.Time{simulator.FirstStorableTime, simulator.LastStorableTime, time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)} {
		require.NotPanics(t, func() { newRenderFrame(now) }, "the frame of %v", now)
	}
}

// itemRoom holds the largest user item a page's rows can render, with a block's room
// (textBlockLen) to spare past its end, so no putText of an item reaches past the room made
// for it, whatever the store holds: any number of accounts, each with the longest product and
// KYC texts, amounts of int64's edges, kyc_approved_at of any instant to the microsecond, and
// a user_account_id of any length, plain or escaped.
func TestItemRoomHoldsTheLargestItem(t *testing.T) {
	var head, kyc uint8 // the product and KYC status whose blocks are the longest
	for p := range rowBlocks.nextHeads {
		if rowBlocks.nextHeads[p].n > rowBlocks.nextHeads[head].n {
			head = uint8(p)
		}
	}
	for k := range rowBlocks.kyc {
		if rowBlocks.kyc[k].approvedAt.n > rowBlocks.kyc[kyc].approvedAt.n {
			kyc = uint8(k)
		}
	}
	for _, at := range extremeInstants {
		for _, uaid := range []string{"usr_1", strings.Repeat("u", 300), strings.Repeat("\"\x01é", 100)} {
			for n := range 40 {
				rows := simulator.UserRows{UAIDs: []byte(uaid), PlainUAIDs: simulator.PlainJSON(uaid)}
				for i := range n {
					value := simulator.Cents(math.MinInt64) // its total's digits, copied
					if i%2 == 1 {
						value++
					}
					rows.Accounts = append(rows.Accounts, simulator.AccountRow{Value: value, ApprovedSec: at.Unix(),
						ApprovedNsec: int32(at.Nanosecond()), Product: head, KYC: kyc, Shows: true})
				}
				rows.Items = []simulator.UserRow{{UAIDEnd: int32(len(uaid)), AccountsEnd: int32(n), Total: math.MinInt64}}
				var item []byte
				require.NotPanics(t, func() { item = appendUserRows(nil, &rows) })
				room := itemRoom(n) + len(uaid) // what a plain id's item is given, from its start
				if !rows.PlainUAIDs {           // the rest of an escaped id's item, past its head
					item = item[len(appendItemHead(nil, uaid, false)):]
					room = itemRoom(n)
				}
				require.LessOrEqual(t, len(item), room-textBlockLen, "%d accounts at %v, id %.10q: the item's bytes, got/want at most", n, at, uaid)
			}
		}
	}
}
