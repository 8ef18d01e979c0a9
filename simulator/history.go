package simulator

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"slices"
	"time"

	"github.com/shopspring/decimal"
)

// HistorySeed is everything a generated history depends on: the user's id (the series' seed)
// and creation time, the current hour (every series' anchor derives from it), and the current
// value and cost basis. Equal seeds generate equal histories, so a seed is a cache key for a
// user's series within one period (decisions D5).
type HistorySeed struct {
	PlatformID string
	// Created and Hour are the user's created_at and now truncated to the hour, both in UTC
	// (so that == compares instants).
	Created, Hour time.Time
	// Current and Basis are the current value and cost basis as whole cents (0 when out of
	// int64 range) and as floats, which shape the older points.
	Current, Basis   Cents
	CurrentF, BasisF float64
	// Funded is false for a user with no positive value: every series is empty.
	Funded bool
	// hash is the seed of the user's wobble (FNV-1a of the platform id).
	hash uint64
}

// NewHistorySeed computes the seed of u's history at now under prices: in whole cents when
// the sums fit (MarketCents), else through decimal, to the same seed.
func NewHistorySeed(u *User, prices map[string]decimal.Decimal, now time.Time) HistorySeed {
	var buf [4]Cents
	_, current, ok := u.MarketCents(prices, buf[:0])
	basis, okBasis := u.costBasisCents(prices)
	if ok && okBasis {
		if s, ok := HistorySeedOf(u.PlatformID, u.CreatedAt, current, basis, now); ok {
			return s
		}
	}
	return newHistorySeedDecimal(u, prices, now)
}

// HistorySeedOf is NewHistorySeed of a user with platform id platformID created at created,
// given its current value (TotalMarketValue) and cost basis (its accounts' CostBasisHint
// summed) in cents; ok is false when they are beyond what it computes exactly, where
// NewHistorySeed takes decimal.
func HistorySeedOf(platformID string, created time.Time, current, basis Cents, now time.Time) (HistorySeed, bool) {
	// decimal's Float64 of an amount in cents is float64(cents)/100 up to 2^53 cents.
	if absInt64(int64(current)) > 1<<53 || absInt64(int64(basis)) > 1<<53 {
		return HistorySeed{}, false
	}
	s := HistorySeed{PlatformID: platformID, Created: created.UTC(), Hour: now.UTC().Truncate(time.Hour),
		Funded: current > 0, hash: fnv64a(platformID)}
	if s.Funded {
		s.Current, s.Basis = current, basis
		s.CurrentF, s.BasisF = float64(current)/100, float64(basis)/100
	}
	return s, true
}

// At returns the seed taken at now's hour.
func (sd HistorySeed) At(now time.Time) HistorySeed {
	sd.Hour = now.UTC().Truncate(time.Hour)
	return sd
}

// Hash returns a hash of what the seed's history depends on besides its hour — its user's id,
// creation time, value and cost basis —, salted: a cache's doorkeeper bit of the seed. It mixes
// the id's hash the seed keeps, where hashing the id again was most of a miss's look-up.
func (sd *HistorySeed) Hash(salt uint64) uint64 {
	z := salt ^ sd.hash + uint64(sd.Created.UnixNano())*0x9e3779b97f4a7c15 + uint64(sd.Current)*0xbf58476d1ce4e5b9 +
		uint64(sd.Basis)*0x94d049bb133111eb
	// splitmix64's finalizer, as wobble's
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// fnv64a is FNV-1a of s (hash/fnv's New64a, without its allocations).
func fnv64a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// newHistorySeedDecimal is NewHistorySeed through decimal arithmetic, for amounts beyond int64.
func newHistorySeedDecimal(u *User, prices map[string]decimal.Decimal, now time.Time) HistorySeed {
	current := u.TotalMarketValue(prices)
	h := fnv.New64a()
	h.Write([]byte(u.PlatformID))
	s := HistorySeed{PlatformID: u.PlatformID, Created: u.CreatedAt.UTC(), Hour: now.UTC().Truncate(time.Hour),
		Funded: current.IsPositive(), hash: h.Sum64()}
	if !s.Funded {
		return s
	}
	basis := decimal.Zero
	for i := range u.Accounts {
		basis = basis.Add(u.Accounts[i].CostBasisHint(prices))
	}
	s.CurrentF, _ = current.Float64()
	s.BasisF, _ = basis.Float64()
	s.Current, _ = CentsOf(current)
	s.Basis, _ = CentsOf(basis)
	return s
}

// Generate builds the historical market value of a user deterministically, seeded by its
// platform id (decisions D5): past_day 24 hourly points, past_week 7 daily, past_month 30
// daily, past_year 52 weekly, all_time monthly since created_at. Each series is anchored to
// its current period's UTC boundary — the hour, midnight, Monday midnight, the 1st of the
// month — whose point carries the current value, so every request in the same period sees the
// same series. A user with no funded account gets empty arrays.
func (sd HistorySeed) Generate() History { return NewHistoryFrame(sd.Hour).Generate(sd) }

// HistoryFrame is what every user's generated history shares within one hour (decisions D5):
// each series' instants and, at each, the growth factors that depend only on its distance from
// its series' anchor. Built once an hour, it leaves a user's series a few multiplications a
// point, where computing instants and exponentials per request was most of Get User Detail.
type HistoryFrame struct {
	Hour time.Time
	// PastDay … PastYear are the series' points, oldest first, the anchor last.
	PastDay, PastWeek, PastMonth, PastYear []FramePoint
	// AllTime holds the month starts from the current month's back 1,200 months, newest first:
	// a user's all_time series is its first AllTimeLen(created) points, oldest first.
	AllTime []FramePoint
}

// FramePoint is one instant of a series with its growth factors.
type FramePoint struct {
	AsOf   time.Time
	unix   int64
	anchor bool    // the series' last point: it carries the current value
	g      float64 // value growth back to here: about 6% a year
	basis  float64 // cost-basis growth: about 4% a year
	amp    float64 // the wobble's amplitude here
}

// NewHistoryFrame builds the frame of now's hour.
func NewHistoryFrame(now time.Time) *HistoryFrame {
	now = now.UTC()
	hour := now.Truncate(time.Hour)
	f := &HistoryFrame{Hour: hour}
	point := func(anchor, t time.Time) FramePoint {
		years := anchor.Sub(t).Hours() / (24 * 365)
		return FramePoint{AsOf: t, unix: t.Unix(), anchor: t.Equal(anchor), g: math.Exp(-0.06 * years), basis: math.Exp(-0.04 * years),
			amp: math.Min(1, years*4+0.1)}
	}
	// series returns n points ending at anchor, the k-th from the end at step(k).
	series := func(n int, anchor time.Time, step func(k int) time.Time) []FramePoint {
		out := make([]FramePoint, 0, n)
		for k := n - 1; k >= 0; k-- {
			out = append(out, point(anchor, step(k)))
		}
		return out
	}
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	monday := midnight.AddDate(0, 0, -((int(midnight.Weekday()) + 6) % 7))
	first := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	f.PastDay = series(24, hour, func(k int) time.Time { return hour.Add(-time.Duration(k) * time.Hour) })
	f.PastWeek = series(7, midnight, func(k int) time.Time { return midnight.AddDate(0, 0, -k) })
	f.PastMonth = series(30, midnight, func(k int) time.Time { return midnight.AddDate(0, 0, -k) })
	f.PastYear = series(52, monday, func(k int) time.Time { return monday.AddDate(0, 0, -7*k) })
	f.AllTime = make([]FramePoint, 0, maxMonths+1)
	for k := 0; k <= maxMonths; k++ {
		f.AllTime = append(f.AllTime, point(first, first.AddDate(0, -k, 0)))
	}
	return f
}

// maxMonths bounds all_time: 100 years of months before the current one.
const maxMonths = 1200

// AllTimeLen returns how many points a user created at created has in all_time: the current
// month's start and every earlier one not before created (at most maxMonths earlier). The
// month starts fall as they go back, so those not before created are the first ones, found by
// halving on their Unix seconds (a month start is a whole second: it is not before created
// when its second is created's next whole one or later).
func (f *HistoryFrame) AllTimeLen(created time.Time) int {
	from := created.Unix()
	if created.Nanosecond() > 0 {
		from++
	}
	lo, hi := 0, maxMonths // the months back not before created: lo of them at least, hi at most
	for lo < hi {
		m := int(uint(lo+hi+1) >> 1)
		if f.AllTime[m].unix >= from {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo + 1
}

// Point returns the cost basis and value of a seed's history at p.
func (sd *HistorySeed) Point(p *FramePoint) (basis, value Cents) {
	if p.anchor {
		return sd.Basis, sd.Current
	}
	return sd.grown(p)
}

// grown is Point at a point before its series' anchor: growth back in time plus a bounded
// deterministic wobble per instant; values are whole cents computed once, so no float ever
// reaches a decimal.
func (sd *HistorySeed) grown(p *FramePoint) (basis, value Cents) {
	return Cents(math.RoundToEven(sd.BasisF * p.basis * 100)), Cents(math.RoundToEven(sd.CurrentF * p.g * (1 + 0.03*wobble(sd.hash, p.unix)*p.amp) * 100))
}

// PointHead is the text before a point's amounts, `{"as_of":"…","cost_basis":"`, in a block
// that AppendPoints copies whole: B[:N].
type PointHead struct {
	B [64]byte
	N int
}

// pointRoom is the room AppendPoints writes a point into: its head's block, two amounts' room
// (centsRoom), the texts after each and the comma.
const pointRoom = len(PointHead{}.B) + 2*centsRoom + len(pointValueText) + 4

// centsRoom is the room an amount is written into in place: any amount's text (21 bytes at
// most) and room past it.
const centsRoom = 24

// pointValueText is `","value":"` in a block, written by one copy of the block.
var pointValueText = [16]byte{'"', ',', '"', 'v', 'a', 'l', 'u', 'e', '"', ':', '"'}

// AppendPoints appends the points of sd's series at ps as a history renders them (decisions
// D5), comma-separated: each its head (heads[i], one for each of ps), its cost basis,
// `","value":"`, its value and `"}`. The room of them all is made once, and each point is
// computed (Point) and written (its amounts as appendCents writes them) in place without a
// call: a Get User Detail writes ~110, and the calls, room checks and copies around each amount
// were most of writing them. An amount that is negative or of 10^8 units or more is written by
// appendCents.
func (sd *HistorySeed) AppendPoints(b []byte, ps []FramePoint, heads []PointHead) []byte {
	if len(ps) == 0 {
		return b
	}
	heads = heads[:len(ps)]
	b = slices.Grow(b, len(ps)*pointRoom)
	for i := range ps {
		p, head := &ps[i], &heads[i]
		basis, value := sd.Basis, sd.Current
		if !p.anchor {
			basis, value = sd.grown(p)
		}
		at := len(b)
		dst := (*[pointRoom]byte)(b[at : at+pointRoom])
		*(*[len(head.B)]byte)(dst[:len(head.B)]) = head.B
		k := head.N
		if b, v := uint64(basis), uint64(value); b < 1e10 && v < 1e10 { // 0 to 10^8 units less a cent
			units := b / 100
			k += putSmallCents((*[12]byte)(dst[k:k+12]), digits8(units), b-units*100)
			*(*[len(pointValueText)]byte)(dst[k : k+len(pointValueText)]) = pointValueText
			k += len(`","value":"`)
			units = v / 100
			k += putSmallCents((*[12]byte)(dst[k:k+12]), digits8(units), v-units*100)
		} else {
			k += len(appendCents(dst[k:k:k+centsRoom], int64(basis))) // written in place: centsRoom of room
			k += copy(dst[k:], `","value":"`)
			k += len(appendCents(dst[k:k:k+centsRoom], int64(value)))
		}
		binary.LittleEndian.PutUint32(dst[k:k+4], '"'|'}'<<8|','<<16) // `"},` and a byte of room
		b = b[:at+k+3]
	}
	return b[:len(b)-1] // the last point's comma
}

// Generate builds a seed's history from the frame of the seed's hour.
func (f *HistoryFrame) Generate(sd HistorySeed) History {
	h := History{AllTime: []ValuePoint{}, PastDay: []ValuePoint{}, PastWeek: []ValuePoint{}, PastMonth: []ValuePoint{}, PastYear: []ValuePoint{}}
	if !sd.Funded {
		return h
	}
	conv := func(ps []FramePoint) []ValuePoint {
		out := make([]ValuePoint, len(ps))
		for i := range ps {
			out[i].AsOf = ps[i].AsOf
			out[i].CostBasis, out[i].Value = sd.Point(&ps[i])
		}
		return out
	}
	h.PastDay, h.PastWeek, h.PastMonth, h.PastYear = conv(f.PastDay), conv(f.PastWeek), conv(f.PastMonth), conv(f.PastYear)
	all := f.AllTime[:f.AllTimeLen(sd.Created)]
	h.AllTime = make([]ValuePoint, len(all))
	for i := range all {
		p := &all[len(all)-1-i]
		h.AllTime[i].AsOf = p.AsOf
		h.AllTime[i].CostBasis, h.AllTime[i].Value = sd.Point(p)
	}
	return h
}

// Replay plays a fixture-given history at the seed's hour (decisions D5). The given series say
// how a user's value went as of their last points; served, every series has D5's points all
// the same — the frame's instants, the last at the current period's start — and takes its
// amounts from the given points counted back from the last, scaled so that the last carries
// the current value and cost basis (the shape is kept, the level follows the user's holdings
// and prices). Instants before a given series begins take the generated amounts. A user with
// no funded account has empty series, as a generated history has. The fixtures' check makes
// sure no given series ends at an amount of zero, which could not be scaled.
func (f *HistoryFrame) Replay(sd HistorySeed, given *History) History {
	h := f.Generate(sd)
	gs, hs := given.Series(), h.Series()
	for k := range hs {
		replaySeries(*hs[k], *gs[k], sd)
	}
	return h
}

// Replay is the frame of the seed's hour's Replay.
func (sd HistorySeed) Replay(given *History) History {
	return NewHistoryFrame(sd.Hour).Replay(sd, given)
}

// replaySeries overwrites the amounts of out (a generated series, oldest first) with given's,
// matched from the last point back and scaled to the seed's current value and cost basis. An
// empty out (an unfunded user) or given changes nothing.
func replaySeries(out, given []ValuePoint, sd HistorySeed) {
	n := min(len(out), len(given))
	for i := range n {
		g, last, o := given[len(given)-n+i], given[len(given)-1], &out[len(out)-n+i]
		o.Value, o.CostBasis = scaled(g.Value, sd.Current, last.Value), scaled(g.CostBasis, sd.Basis, last.CostBasis)
	}
}

// scaled is v × num / den rounded half-even to the cent; den is not zero. The ratio comes first,
// so that v = den gives num exactly.
func scaled(v, num, den Cents) Cents {
	return Cents(math.RoundToEven(float64(v) / float64(den) * float64(num)))
}

// wobble maps (seed, instant) to a value in [-1, 1) with a splitmix64 hash.
func wobble(seed uint64, unix int64) float64 {
	z := seed + uint64(unix)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11)/float64(1<<52) - 1
}
