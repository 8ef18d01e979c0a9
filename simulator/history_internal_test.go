package simulator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// AppendPoints writes each point as its head, then Point's amounts as AppendTo writes them
// around `","value":"`, then `"}`, the points comma-separated: at every point of the frames of
// hours from 1950 to 2190, for seeds whose values and cost bases span zero to int64's edges —
// the amounts under 10^8 units it writes itself, negative and larger ones through appendCents,
// and the 10^8-unit edge —, with heads of every length up to the block's, after text of any
// length (the room it makes is its own).
func TestAppendPointsMatchesPointAndAppendTo(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 30))
	amounts := []Cents{0, 1, -1, 99, 100, 1e10 - 1, 1e10, -1e10 + 1, 1 << 53, -(1 << 53), math.MaxInt64, math.MinInt64}
	amount := func() Cents {
		if r.IntN(4) == 0 {
			return amounts[r.IntN(len(amounts))]
		}
		return Cents(r.Int64N(1 << (1 + r.IntN(62))))
	}
	for range 60 {
		hour := time.Date(1950+r.IntN(240), time.Month(1+r.IntN(12)), 1+r.IntN(31), r.IntN(24), 0, 0, 0, time.UTC)
		f := NewHistoryFrame(hour)
		for range 20 {
			sd, ok := HistorySeedOf(fmt.Sprint("usr_", r.Uint64()), hour.AddDate(-r.IntN(10), 0, 0), Cents(r.Int64N(1e12)), Cents(r.Int64N(1e12)), hour)
			require.True(t, ok)
			if r.IntN(2) == 0 { // amounts beyond what a seed computes: the anchors carry them as they are
				sd.Current, sd.Basis = amount(), amount()
			}
			for _, ps := range [][]FramePoint{f.PastDay, f.PastWeek, f.PastMonth, f.PastYear, f.AllTime[:1+r.IntN(len(f.AllTime))], nil} {
				heads := make([]PointHead, len(ps))
				var want []string
				for i := range ps {
					heads[i].N = r.IntN(len(heads[i].B) + 1)
					for j := range heads[i].N {
						heads[i].B[j] = byte('a' + r.IntN(26))
					}
					basis, value := sd.Point(&ps[i])
					want = append(want, string(heads[i].B[:heads[i].N])+basis.String()+`","value":"`+value.String()+`"}`)
				}
				before := make([]byte, r.IntN(3000), 3000+r.IntN(2000))
				got := sd.AppendPoints(before, ps, heads)
				require.Equal(t, string(before), string(got[:len(before)]))
				require.Equal(t, strings.Join(want, ","), string(got[len(before):]), "%+v", sd)
			}
		}
	}
}
