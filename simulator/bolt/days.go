package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"slices"
	"sort"
	"time"

	"go.etcd.io/bbolt"
)

// Every index sorted by time (sort byte sortCreated: the users' created_at indexes and every
// order index) also counts its entries per UTC day of their time, in bCounts under
// dayCountKey. With them a deep last_record_number seeks to the day holding its page instead of
// walking up to it, and a created_at / placed_at range counts its whole days from the counters,
// walking only the partial days at its two ends: a page costs at most about
// two days' entries plus the day counters, whatever the offset or the range.
//
// The counters are kept by putIndex and deleteIndex like the per-prefix ones. A store written
// before them has no metaDays mark and is read by walking, as it always was.

// dayWidth is the width of a time bucket, in timeKey units (nanoseconds).
const dayWidth = uint64(24 * time.Hour)

// metaDays marks a store whose time-sorted indexes keep day counters (every store emptied or
// created since they exist).
var metaDays = []byte("day_counters")

// timed reports whether an index prefix sorts by time (its last byte is the sort byte).
func timed(prefix []byte) bool { return len(prefix) > 0 && prefix[len(prefix)-1] == sortCreated }

// dayOf returns the day of a timeKey.
func dayOf(tk []byte) uint32 { return uint32(binary.BigEndian.Uint64(tk) / dayWidth) }

// dayKey returns the timeKey of the first instant of day d.
func dayKey(d uint32) []byte { return u64(uint64(d) * dayWidth) }

// The kinds of counters in bCounts, each a tag after the index bucket's name: an index
// prefix's entries (countKey), and its entries per day, hour and minute.
const (
	tagEntries byte = iota
	tagDays
	tagHours
	tagMinutes
)

// dayCountsPrefix is the prefix in bCounts of the day counters of an index prefix.
func dayCountsPrefix(bucket, prefix []byte) []byte { return cat(bucket, []byte{tagDays}, prefix) }

// dayCountKey names the counter of the entries under prefix whose time falls on tk's day.
func dayCountKey(bucket, prefix, tk []byte) []byte {
	return timeCountKey(tagDays, bucket, prefix, dayOf(tk))
}

// timeCountKey names the counter of unit x (a day, an hour, a minute: tag) of the entries under
// prefix: the counters' prefix (dayCountsPrefix, hourCountsPrefix, minuteCountsPrefix) and x,
// in one allocation.
func timeCountKey(tag byte, bucket, prefix []byte, x uint32) []byte {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], x)
	return cat(bucket, []byte{tag}, prefix, b[:])
}

// An institution's whole list sorted by time (its kindAll prefix: every user, every order)
// also counts its entries per hour, in bCounts under hourCountKey. A day of it holds ten times
// the entries of a filtered list's day, and a page far into it (a deep last_record_number)
// stepped over up to half of the day it starts in: a few thousand entries a page on a store of
// a million users. With the hours counted it steps over at most half an hour's; a created_at
// range over it counts its partial days by their whole hours, walking at most two partial
// hours. A filter splits a day among its values, and the hours of every filtered list would
// cost about a counter an entry (a user's orders keep a list each), so only the whole list
// keeps them. A store written before them has no metaHours mark and is read by days.

// hourWidth is the width of an hour counter's bucket, in timeKey units (nanoseconds).
const hourWidth = uint64(time.Hour)

// metaHours marks a store whose whole lists keep hour counters (every store emptied or created
// since they exist).
var metaHours = []byte("hour_counters")

// hourly reports whether an index prefix keeps hour counters: it is an institution's whole
// list sorted by time (the institution's id, its 0 separator, kindAll and sortCreated).
func hourly(prefix []byte) bool {
	i := bytes.IndexByte(prefix, 0)
	return i >= 0 && len(prefix) == i+3 && prefix[i+1] == kindAll && prefix[i+2] == sortCreated
}

// hourOf returns the hour of a timeKey (its day is the hour / 24).
func hourOf(tk []byte) uint32 { return uint32(binary.BigEndian.Uint64(tk) / hourWidth) }

// hourCountsPrefix is the prefix in bCounts of the hour counters of an index prefix.
func hourCountsPrefix(bucket, prefix []byte) []byte { return cat(bucket, []byte{tagHours}, prefix) }

// hourCountKey names the counter of the entries under prefix whose time falls in hour h.
func hourCountKey(bucket, prefix []byte, h uint32) []byte {
	return timeCountKey(tagHours, bucket, prefix, h)
}

// The whole lists count their entries per minute too, in bCounts under minuteCountKey. An hour
// of a million users' order list holds ~760 entries, and the partial hours at a time range's
// ends — and the hour a deep page starts in — were walked on their shorter side: ~190 entries
// each on average, ten times a 100k store's, the most of a week's first page at a million users.
// With the minutes counted, a partial hour is its whole minutes' counters (a descent and the
// counters of its shorter side, at most thirty) and the partial minutes at its ends walked on
// their shorter sides: a few entries at a million users. The same prefixes as the hours keep
// them (hourly); a store written before them has no metaMinutes mark and is read by hours.

// minuteWidth is the width of a minute counter's bucket, in timeKey units (nanoseconds); an
// hour is sixty of them.
const minuteWidth = uint64(time.Minute)

// metaMinutes marks a store whose whole lists keep minute counters (every store emptied or
// created since they exist).
var metaMinutes = []byte("minute_counters")

// minuteOf returns the minute of a timeKey (its hour is the minute / 60; a timeKey's minutes
// all fit in 32 bits).
func minuteOf(tk []byte) uint32 { return uint32(binary.BigEndian.Uint64(tk) / minuteWidth) }

// minuteCountsPrefix is the prefix in bCounts of the minute counters of an index prefix.
func minuteCountsPrefix(bucket, prefix []byte) []byte {
	return cat(bucket, []byte{tagMinutes}, prefix)
}

// minuteCountKey names the counter of the entries under prefix whose time falls in minute m.
func minuteCountKey(bucket, prefix []byte, m uint32) []byte {
	return timeCountKey(tagMinutes, bucket, prefix, m)
}

// timeCountPrefixes are the prefixes in bCounts of every time counter (days, hours, minutes)
// of the index prefixes that begin with in.
func timeCountPrefixes(bucket, in []byte) [][]byte {
	return [][]byte{dayCountsPrefix(bucket, in), hourCountsPrefix(bucket, in), minuteCountsPrefix(bucket, in)}
}

// countTime counts an index entry (prefix, rest) added (delta 1) or removed (-1) under its
// day, and its hour and minute when its prefix keeps them.
func (w *writeTx) countTime(bucket, prefix, rest []byte, delta int64) {
	if !timed(prefix) {
		return
	}
	w.count(dayCountKey(bucket, prefix, rest[:8]), delta)
	if hourly(prefix) {
		w.count(hourCountKey(bucket, prefix, hourOf(rest[:8])), delta)
		w.count(minuteCountKey(bucket, prefix, minuteOf(rest[:8])), delta)
	}
}

// nameTimeCounts spools into w's spool of bCounts the day counters, and the hour and minute
// counters of the prefixes that keep them (hourly), of a build's notes of one index bucket: each
// a prefix id (byID names it) in the high 32 bits and a minute (minuteOf) in the low 32. The
// notes are sorted in place.
func (w *writeTx) nameTimeCounts(bucket []byte, byID []string, notes []uint64) error {
	slices.Sort(notes)
	var n [8]byte
	put := func(key []byte, c int) error {
		binary.BigEndian.PutUint64(n[:], uint64(c))
		return w.sink.put(bCounts, key, 0, n[:])
	}
	const perHour, perDay = 60, 24 * 60 // minutes
	for i := 0; i < len(notes); {
		id := notes[i] >> 32
		prefix := []byte(byID[id])
		fine := hourly(prefix)
		day, inDay := uint32(notes[i])/perDay, 0
		hour, inHour := uint32(notes[i])/perHour, 0
		for i < len(notes) && notes[i]>>32 == id {
			k, j := notes[i], i+1
			for j < len(notes) && notes[j] == k {
				j++
			}
			m := uint32(k)
			if fine && m/perHour != hour {
				if err := put(hourCountKey(bucket, prefix, hour), inHour); err != nil {
					return err
				}
				hour, inHour = m/perHour, 0
			}
			if m/perDay != day {
				if err := put(dayCountKey(bucket, prefix, dayKey(day)), inDay); err != nil {
					return err
				}
				day, inDay = m/perDay, 0
			}
			inDay += j - i
			if fine {
				inHour += j - i
				if err := put(minuteCountKey(bucket, prefix, m), j-i); err != nil {
					return err
				}
			}
			i = j
		}
		if err := put(dayCountKey(bucket, prefix, dayKey(day)), inDay); err != nil {
			return err
		}
		if fine {
			if err := put(hourCountKey(bucket, prefix, hour), inHour); err != nil {
				return err
			}
		}
	}
	return nil
}

// dayRange is [lo, hi) of a time-sorted index under prefix, seen as the segments a page walk
// needs: a partial day at each bound that carries a time (head and tail, walked when they are
// counted) and the whole days between them, counted by their counters. Nothing is allocated
// per day: the counters are read in place, in either direction, and a walk stops at the day
// holding its page.
type dayRange struct {
	ctx context.Context
	tx  *bbolt.Tx
	// ic is a cursor of the index, made when first needed and reused by every count's walk
	// (indexCursor): a cursor grows its stack on its first descent, an allocation a level. The
	// index is opened only then (a descent from the root): a range whose counters count it
	// whole, or a page walked in records (walk), never opens it.
	ic *bbolt.Cursor
	// counts is bCounts, opened when first needed (countsBucket): a range whose counters are
	// read whole (dayTable) does not open it.
	counts *bbolt.Bucket
	// walk is the bucket a page is read from: the index, or records keyed by recordHead and
	// each entry's key past prefix (indexPage.records; recordHead nil for the index).
	walk       *bbolt.Bucket
	recordHead []byte
	room       *pageRoom // where the page's walks put its keys (indexPage.room)
	// fromStart says a page is walked from the range's start (pageDays, offset 0), descending
	// when startDesc: partHour leaves the partial hour at that side, the first the walk passes,
	// uncounted and notes it in startPart, for the page's walk to count (pageStart).
	fromStart, startDesc bool
	startPart            *hourPart

	cp []byte // dayCountsPrefix
	// hp is hourCountsPrefix when the index keeps hour counters, else nil, and mp
	// minuteCountsPrefix when it keeps minute counters too; set when first needed (hoursOf), by
	// the store's marks (pageReads).
	hp, mp         []byte
	hpRead         bool
	reads          *pageReads
	bucket         []byte
	prefix, lo, hi []byte // hi is never nil
	// The whole days first..last (inclusive; none when first > last), between head and tail.
	first, last uint32
	head, tail  partial
	// perDay is the mean count of the range's whole days, once total has read them (0 before,
	// or with none).
	perDay int
}

// hourPart is [from, to), a part of one hour of n entries that starts or ends at the hour's
// bounds (partHour).
type hourPart struct {
	from, to []byte
	n        int
}

// partial is a part of one day: [from, to) on day; n < 0 until it is counted.
type partial struct {
	on       bool
	day      uint32
	from, to []byte
	n        int
}

const lastDay = 1<<32 - 1

func newDayRange(ctx context.Context, tx *bbolt.Tx, reads *pageReads, bucket, prefix, lo, hi []byte) *dayRange {
	end := prefixEnd(prefix)
	if hi == nil {
		hi = end
	}
	r := &dayRange{ctx: ctx, tx: tx, cp: dayCountsPrefix(bucket, prefix),
		prefix: prefix, lo: lo, hi: hi, first: 0, last: lastDay, reads: reads, bucket: bucket}
	loT, hiT := len(lo) > len(prefix), len(hi) > len(prefix) && !bytes.Equal(hi, end)
	var dLo, dHi uint32
	if loT {
		dLo = dayOf(lo[len(prefix):])
	}
	if hiT {
		dHi = dayOf(hi[len(prefix):])
	}
	switch {
	case loT && hiT && dLo >= dHi, loT && dLo == lastDay, hiT && dHi == 0:
		// One day, or a bound on the first or last representable day: one partial run (the
		// last case walks the whole range, as a store without counters is read).
		r.first, r.last = 1, 0
		r.head = partial{on: true, day: dLo, from: lo, to: hi, n: -1}
		if !loT || dLo != dHi {
			r.head.day = lastDay // not one day: never counted by subtraction
		}
		return r
	}
	if loT {
		r.first = dLo + 1
		r.head = partial{on: true, day: dLo, from: lo, to: r.dayStart(dLo + 1), n: -1}
	}
	if hiT {
		r.last = dHi - 1
		r.tail = partial{on: true, day: dHi, from: r.dayStart(dHi), to: hi, n: -1}
	}
	return r
}

// indexCursor returns the range's cursor of its index.
func (r *dayRange) indexCursor() *bbolt.Cursor {
	if r.ic == nil {
		r.ic = r.tx.Bucket(r.bucket).Cursor()
	}
	return r.ic
}

// countsBucket returns bCounts, opened now if it is not yet.
func (r *dayRange) countsBucket() *bbolt.Bucket {
	if r.counts == nil {
		r.counts = r.tx.Bucket(bCounts)
	}
	return r.counts
}

// dayStart is the first key of day d (the end of the index past the last day).
func (r *dayRange) dayStart(d uint32) []byte { return cat(r.prefix, dayKey(d)) }

// dayEnd is the key just past day d.
func (r *dayRange) dayEnd(d uint32) []byte {
	if d == lastDay {
		return prefixEnd(r.prefix)
	}
	return r.dayStart(d + 1)
}

// dayCount returns day d's counter: from the prefix's table when it is read whole, else a
// lookup (a descent).
func (r *dayRange) dayCount(d uint32) int {
	if t := r.reads.dayTable(r.tx, r.cp); t != nil {
		return t.of(d)
	}
	var k [64]byte
	key := binary.BigEndian.AppendUint32(append(k[:0], r.cp...), d)
	if v := r.countsBucket().Get(key); v != nil {
		return int(binary.BigEndian.Uint64(v))
	}
	return 0
}

// hoursOf reports whether day d's entries are counted by hour: the index keeps hour counters
// and the day's last hour ends within timeKey's range.
func (r *dayRange) hoursOf(d uint32) bool {
	if !r.hpRead {
		r.hpRead = true
		if hourly(r.prefix) && r.reads.hours {
			r.hp = hourCountsPrefix(r.bucket, r.prefix)
			if r.reads.minutes {
				r.mp = minuteCountsPrefix(r.bucket, r.prefix)
			}
		}
	}
	return r.hp != nil && d != lastDay && (uint64(d)+1)*24 <= math.MaxUint64/hourWidth
}

// minutesOf reports whether hour h's entries are counted by minute: its day's are by hour
// (hoursOf) and the index keeps minute counters.
func (r *dayRange) minutesOf(h uint32) bool { return r.hoursOf(h/24) && r.mp != nil }

// hourTable returns the index's hour counters read whole in this state (pageReads.dayTable),
// when day d is counted by hour and they are; else nil.
func (r *dayRange) hourTable(d uint32) *dayTable {
	if !r.hoursOf(d) {
		return nil
	}
	return r.reads.dayTable(r.tx, r.hp)
}

// hourStart is the first key of hour h.
func (r *dayRange) hourStart(h uint32) []byte { return r.keyAt(uint64(h) * hourWidth) }

// keyAt is the first key at time t (a timeKey's value).
func (r *dayRange) keyAt(t uint64) []byte { return cat(r.prefix, u64(t)) }

// timeOf is the time of a key of the range (a timeKey's value).
func (r *dayRange) timeOf(k []byte) uint64 { return binary.BigEndian.Uint64(k[len(r.prefix):]) }

// eachHour visits the hour counters of the hours [a, b) in scan order (descending when desc)
// until visit returns false; an hour without entries has no counter.
func (r *dayRange) eachHour(a, b uint32, desc bool, visit func(h uint32, n int) bool) {
	r.eachCounter(r.hp, a, b, desc, visit)
}

// eachCounter visits the counters under cp (hourCountsPrefix, minuteCountsPrefix) of the units
// [a, b) in scan order (descending when desc) until visit returns false; a unit without entries
// has no counter.
func (r *dayRange) eachCounter(cp []byte, a, b uint32, desc bool, visit func(x uint32, n int) bool) {
	var buf [64]byte
	key := func(x uint32) []byte { return binary.BigEndian.AppendUint32(append(buf[:0], cp...), x) }
	c := r.countsBucket().Cursor()
	var k, v []byte
	step := c.Next
	if desc {
		step = c.Prev
		if k, _ = c.Seek(key(b)); k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	} else {
		k, v = c.Seek(key(a))
	}
	for ; k != nil && bytes.HasPrefix(k, cp) && len(k) == len(cp)+4; k, v = step() {
		x := binary.BigEndian.Uint32(k[len(cp):])
		if x < a || x >= b || !visit(x, int(binary.BigEndian.Uint64(v))) {
			return
		}
	}
}

// inHour narrows u, a whole day of an index counted by hour, to the hour that holds its entry
// k (in scan order, descending when desc): that hour as a run, and k within it. Counters that
// do not reach k (they never should) leave u as it was, walked as a day.
func (r *dayRange) inHour(u run, desc bool, k int) (run, int) {
	first := u.d * 24
	if t := r.hourTable(u.d); t != nil {
		return r.inUnit(u, u.d, desc, k, hourWidth, func(visit func(h uint32, n int) bool) { t.each(first, first+23, desc, visit) })
	}
	return r.inUnit(u, u.d, desc, k, hourWidth, func(visit func(h uint32, n int) bool) { r.eachHour(first, first+24, desc, visit) })
}

// inMinute narrows u, a whole hour of an index counted by minute (inHour's), to the minute that
// holds its entry k, as inHour narrows a day to its hour.
func (r *dayRange) inMinute(u run, desc bool, k int) (run, int) {
	first := uint32(r.timeOf(u.p.from) / minuteWidth)
	return r.inUnit(u, u.p.day, desc, k, minuteWidth, func(visit func(m uint32, n int) bool) {
		r.eachCounter(r.mp, first, first+60, desc, visit)
	})
}

// inUnit narrows u, a run of day's, to the unit (hour, minute: width wide) that holds its entry
// k, from the counters of u's units that each visits in scan order: that unit as a run, and k
// within it; u as it was when the counters do not reach k.
func (r *dayRange) inUnit(u run, day uint32, desc bool, k int, width uint64, each func(visit func(x uint32, n int) bool)) (run, int) {
	skipped := 0
	out, at := u, k
	each(func(x uint32, n int) bool {
		if skipped+n <= k {
			skipped += n
			return true
		}
		from := uint64(x) * width
		out = run{n: n, p: &partial{on: true, day: day, from: r.keyAt(from), to: r.keyAt(from + width), n: n}}
		at = k - skipped
		return false
	})
	return out, at
}

// seekEntries is about what a cursor's descent from the root costs, in index entries stepped
// over (a descent is a few thousand instructions, a step a few dozen): reading by hours costs
// a descent or two more than walking, worth it only past that many entries.
const seekEntries = 50

// countByHours counts a partial day of an index counted by hour, of day entries in all: its
// whole hours by their counters, the partial hours at its ends walked. ok is false, nothing
// read, when that would cost more than walk, the entries walking its day would step over.
func (r *dayRange) countByHours(p *partial, day, walk int) (n int, ok bool, err error) {
	tf, tt := r.timeOf(p.from), r.timeOf(p.to)
	a, b := uint32(tf/hourWidth), uint32(tt/hourWidth)
	if tf%hourWidth != 0 {
		a++
	}
	// What its two partial hours cost: a quarter of an hour's entries each on average, by
	// their minutes a descent and fifteen counters.
	ends := day / 24
	if r.minutesOf(a) {
		ends = min(ends, 2*(2*seekEntries+15+day/(24*60*4)))
	}
	if a >= b || seekEntries+int(b-a)+ends >= walk {
		return 0, false, nil
	}
	n, err = r.byUnits(r.hp, hourWidth, p.from, p.to, nil, r.partHour)
	return n, true, err
}

// unitSpan is the enclosing unit of a part byUnits counts: its n entries, in the units
// [first, first+units) of the part's width.
type unitSpan struct {
	first, units uint32
	n            int
}

// byUnits counts [from, to) from the counters under cp (hourCountsPrefix, minuteCountsPrefix) of
// the units (width wide) it covers whole, and the partial units at its ends by part, given
// each one's counter: in one pass over the counters inside it, the partial ones beside them
// (a-1 before a partial start, b before a partial end) — or, when it lies in one unit of the
// next size (outer) and covers more than half of it, over the counters outside it, subtracted
// from outer's n.
func (r *dayRange) byUnits(cp []byte, width uint64, from, to []byte, outer *unitSpan, part func(from, to []byte, n int) (int, error)) (int, error) {
	tf, tt := r.timeOf(from), r.timeOf(to)
	a, b := uint32(tf/width), uint32(tt/width) // the units from and to fall in
	headPart, tailPart := tf%width != 0, tt%width != 0
	if headPart {
		a++ // from's unit is partial: the whole units start after it
	}
	var whole, head, tail int
	note := func(x uint32, c int) {
		switch {
		case headPart && x == a-1:
			head = c
		case tailPart && x == b:
			tail = c
		}
	}
	if outer == nil || b-a <= outer.units/2 {
		r.eachCounter(cp, a-min(a, 1), b+1, false, func(x uint32, c int) bool {
			if x >= a && x < b {
				whole += c
			}
			note(x, c)
			return true
		})
	} else {
		outside := 0
		visit := func(x uint32, c int) bool {
			outside += c
			note(x, c)
			return true
		}
		r.eachCounter(cp, outer.first, a, false, visit)
		r.eachCounter(cp, b, outer.first+outer.units, false, visit)
		whole = outer.n - outside
	}
	if headPart {
		n, err := part(from, r.keyAt(uint64(a)*width), head)
		if err != nil {
			return 0, err
		}
		whole += n
	}
	if tailPart {
		n, err := part(r.keyAt(uint64(b)*width), to, tail)
		if err != nil {
			return 0, err
		}
		whole += n
	}
	return whole, nil
}

// partHour counts [from, to), a part of one hour of n entries that starts or ends at the hour's
// bounds (empty when from is to): walking its shorter side (walkShorter) — a quarter of an
// hour's entries on average —, or by its minutes when the index keeps them and that costs less
// (partCosts: an hour of more than a few hundred entries).
func (r *dayRange) partHour(from, to []byte, n int) (int, error) {
	tf, tt := r.timeOf(from), r.timeOf(to)
	if tf == tt {
		return 0, nil // nothing: no walk (its descent would find nothing)
	}
	if r.fromStart && r.startPart == nil && (r.startDesc && bytes.Equal(to, r.hi) || !r.startDesc && bytes.Equal(from, r.lo)) {
		r.startPart = &hourPart{from: from, to: to, n: n} // counted by the page's walk (pageStart)
		return 0, nil
	}
	if walk, byMinutes := r.partCosts(tf, tt, n); byMinutes < walk {
		return r.byMinutes(from, to, n)
	}
	return r.walkShorter(from, to, n, hourWidth)
}

// walkShorter counts [from, to), a part of one unit (an hour, a minute: width wide) of n
// entries that starts or ends at the unit's bounds, walking its shorter side: the part itself,
// or the rest of the unit subtracted from n.
func (r *dayRange) walkShorter(from, to []byte, n int, width uint64) (int, error) {
	tf, tt := r.timeOf(from), r.timeOf(to)
	if tt-tf <= width/2 {
		return countKeys(r.ctx, r.indexCursor(), from, to)
	}
	start := tf - tf%width
	if tf == start { // the unit's start: the rest is its end
		rest, err := countKeys(r.ctx, r.indexCursor(), to, r.keyAt(start+width))
		return n - rest, err
	}
	rest, err := countKeys(r.ctx, r.indexCursor(), r.keyAt(start), from)
	return n - rest, err
}

// byMinutes counts [from, to), a part of one hour of n entries whose index keeps minute
// counters: its whole minutes from their counters — or n less the minutes outside it, when
// those are fewer — and the partial minutes at its ends walked on their shorter sides
// (byUnits): a descent or two into the counters and at most half a minute's entries walked at
// each end.
func (r *dayRange) byMinutes(from, to []byte, n int) (int, error) {
	tf, tt := r.timeOf(from), r.timeOf(to)
	if tf/minuteWidth == (tt-1)/minuteWidth { // within one minute
		return countKeys(r.ctx, r.indexCursor(), from, to)
	}
	hour := unitSpan{first: uint32(tf/hourWidth) * 60, units: 60, n: n}
	return r.byUnits(r.mp, minuteWidth, from, to, &hour, func(from, to []byte, n int) (int, error) {
		return r.walkShorter(from, to, n, minuteWidth)
	})
}

// partCosts is what partHour's two ways cost on the part of one hour of n entries from time tf
// to tt (timeOf), that starts or ends at the hour's bounds, in entries stepped over (a descent counted as
// seekEntries of them): walking its shorter side, after a descent; and by its minutes (+Inf
// when the index keeps none), a descent into the counters, those of its shorter side, and the
// shorter side of its partial minute after a descent.
func (r *dayRange) partCosts(tf, tt uint64, n int) (walk, byMinutes float64) {
	inner := tf // the part's bound inside its hour
	if tf%hourWidth == 0 {
		inner = tt
	}
	side := min(tt-tf, hourWidth-(tt-tf))
	walk = seekEntries + float64(side)/float64(hourWidth)*float64(n)
	if !r.minutesOf(uint32(tf / hourWidth)) {
		return walk, math.Inf(1)
	}
	g := min(inner%minuteWidth, minuteWidth-inner%minuteWidth)
	return walk, 2*seekEntries + float64(side/minuteWidth) + float64(g)/float64(minuteWidth)*float64(n)/60
}

// partCost is what partHour costs on a part from tf to tt (partCosts): the cheaper of its two
// ways.
func (r *dayRange) partCost(tf, tt uint64, n int) float64 {
	walk, byMinutes := r.partCosts(tf, tt, n)
	return min(walk, byMinutes)
}

// count counts a partial day, walking the shorter side of it: a part covering most of its day
// is its day's counter less the rest of the day — or, when the index keeps hour counters and
// the side to walk holds many more entries than an hour, its whole hours' counters and the
// partial hours at its ends.
func (r *dayRange) count(p *partial) error {
	if p.n >= 0 {
		return nil
	}
	if bytes.Compare(p.from, p.to) >= 0 {
		p.n = 0 // an empty range (its start after its end)
		return nil
	}
	if p.day != lastDay {
		if t := r.hourTable(p.day); t != nil && len(p.from) == len(r.prefix)+8 && len(p.to) == len(r.prefix)+8 {
			n, err := r.countInHours(t, p.from, p.to)
			p.n = n
			return err
		}
		start, end := r.dayStart(p.day), r.dayEnd(p.day)
		fromIn, toIn := bytes.Compare(p.from, start) > 0, bytes.Compare(p.to, end) < 0
		// The share of the day the part covers, by time.
		off := func(k []byte) uint64 { return r.timeOf(k) - uint64(p.day)*dayWidth }
		span := dayWidth
		if toIn {
			span = off(p.to)
		}
		if fromIn {
			span -= off(p.from)
		}
		if span > dayWidth/2 {
			n := r.dayCount(p.day)
			if r.hoursOf(p.day) && len(p.from) == len(r.prefix)+8 && len(p.to) == len(r.prefix)+8 {
				rest := int(float64(n) * float64(dayWidth-span) / float64(dayWidth))
				byHours, ok, err := r.countByHours(p, n, rest)
				if err != nil || ok {
					p.n = byHours
					return err
				}
			}
			if fromIn {
				k, err := countKeys(r.ctx, r.indexCursor(), start, p.from)
				if err != nil {
					return err
				}
				n -= k
			}
			if toIn {
				k, err := countKeys(r.ctx, r.indexCursor(), p.to, end)
				if err != nil {
					return err
				}
				n -= k
			}
			p.n = n
			return nil
		}
		// A part of at most half its day: its hours only when the mean of the range's whole
		// days — or, a range within one day, that day's counter (a descent) — says walking it
		// would read more.
		if r.hoursOf(p.day) && len(p.from) == len(r.prefix)+8 && len(p.to) == len(r.prefix)+8 {
			perDay := r.perDay
			if perDay == 0 && r.first > r.last {
				perDay = r.dayCount(p.day)
			}
			walk := int(float64(perDay) * float64(span) / float64(dayWidth))
			n, ok, err := r.countByHours(p, perDay, walk)
			if err != nil || ok {
				p.n = n
				return err
			}
		}
	}
	n, err := countKeys(r.ctx, r.indexCursor(), p.from, p.to)
	p.n = n
	return err
}

// countInHours counts [from, to), a part of one day of an index whose hour counters t holds:
// its whole hours from t, the partial hours at its ends walked on their shorter sides
// (partHour) — no walk at all for bounds on the hour —, or the part walked whole when that
// steps over fewer entries, a descent counted as seekEntries of them (a part within one
// hour, or a few entries short of one).
func (r *dayRange) countInHours(t *dayTable, from, to []byte) (int, error) {
	tf, tt := r.timeOf(from), r.timeOf(to)
	a, b := uint32(tf/hourWidth), uint32(tt/hourWidth) // the hours from and to fall in
	if tf%hourWidth != 0 {
		a++ // from's hour is partial: the whole hours start after it
	}
	if a > b { // within hour b: by its minutes when walking it would step over more (a
		// descent, up to thirty counters and two partial minutes' shorter sides)
		if n := t.of(b); r.minutesOf(b) && float64(tt-tf)/float64(hourWidth)*float64(n) > 2*seekEntries+30+float64(n)/120 {
			return r.byMinutes(from, to, n)
		}
		return countKeys(r.ctx, r.indexCursor(), from, to)
	}
	n := 0
	if a < b {
		n = t.sum(a, b-1)
	}
	// What walking the part costs, and walking its partial hours' shorter sides, in entries:
	// each side's share of its hour's entries by time.
	var nh, nt int
	var fh, ft float64 // the shares of hours a-1 and b the part covers
	if tf%hourWidth != 0 {
		nh, fh = t.of(a-1), float64(uint64(a)*hourWidth-tf)/float64(hourWidth)
	}
	if tt%hourWidth != 0 {
		nt, ft = t.of(b), float64(tt-uint64(b)*hourWidth)/float64(hourWidth)
	}
	walk := float64(seekEntries+n) + fh*float64(nh) + ft*float64(nt)
	byHours := 0.0
	if fh > 0 {
		byHours += r.partCost(tf, uint64(a)*hourWidth, nh)
	}
	if ft > 0 {
		byHours += r.partCost(uint64(b)*hourWidth, tt, nt)
	}
	if walk <= byHours {
		return countKeys(r.ctx, r.indexCursor(), from, to)
	}
	head, err := r.partHour(from, r.hourStart(a), nh)
	if err != nil {
		return 0, err
	}
	tail, err := r.partHour(r.hourStart(b), to, nt)
	return n + head + tail, err
}

// run is one run of a range in scan order: a partial day (p) or the whole day d, of n entries.
type run struct {
	n int
	d uint32
	p *partial
}

// from is the first key of the run.
func (r *dayRange) from(u run) []byte {
	if u.p != nil {
		return u.p.from
	}
	return r.dayStart(u.d)
}

// to is the key just past the run.
func (r *dayRange) to(u run) []byte {
	if u.p != nil {
		return u.p.to
	}
	return r.dayEnd(u.d)
}

// each visits the range's runs in scan order (descending when desc) until visit returns
// false. Whole days come from the counters; partial days are counted when reached.
func (r *dayRange) each(desc bool, visit func(u run) bool) error {
	part := func(p *partial) (bool, error) {
		if !p.on {
			return true, nil
		}
		if err := r.count(p); err != nil {
			return false, err
		}
		return visit(run{n: p.n, p: p}), nil
	}
	first, second := &r.head, &r.tail
	if desc {
		first, second = second, first
	}
	if more, err := part(first); !more || err != nil {
		return err
	}
	if stopped, err := r.eachDay(desc, visit); stopped || err != nil {
		return err
	}
	_, err := part(second)
	return err
}

// eachDay visits the range's whole days in scan order (descending when desc), from their
// counters, until visit returns false (stopped).
func (r *dayRange) eachDay(desc bool, visit func(u run) bool) (stopped bool, err error) {
	if r.first > r.last {
		return false, nil
	}
	if t := r.reads.dayTable(r.tx, r.cp); t != nil {
		t.each(r.first, r.last, desc, func(d uint32, n int) bool {
			stopped = !visit(run{n: n, d: d})
			return !stopped
		})
		return stopped, nil
	}
	var buf [64]byte
	c := r.countsBucket().Cursor()
	seek := func(d uint32) []byte { return binary.BigEndian.AppendUint32(append(buf[:0], r.cp...), d) }
	var k, v []byte
	step := c.Next
	if desc {
		step = c.Prev
		if r.last == lastDay {
			k, _ = c.Seek(prefixEnd(r.cp))
		} else {
			k, _ = c.Seek(seek(r.last + 1))
		}
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	} else {
		k, v = c.Seek(seek(r.first))
	}
	walked := 0
	for ; k != nil && bytes.HasPrefix(k, r.cp) && len(k) == len(r.cp)+4; k, v = step() {
		if walked++; walked%scanCheckEvery == 0 {
			if err := r.ctx.Err(); err != nil {
				return false, err
			}
		}
		d := binary.BigEndian.Uint32(k[len(r.cp):])
		if d < r.first || d > r.last {
			break
		}
		if !visit(run{n: int(binary.BigEndian.Uint64(v)), d: d}) {
			return true, nil
		}
	}
	return false, nil
}

// total counts the whole range: its whole days first, so that their mean (perDay) tells count
// whether a partial day's hours are worth reading without reading its day's counter.
func (r *dayRange) total() (int, error) {
	n, days := 0, 0
	if t := r.reads.dayTable(r.tx, r.cp); t != nil && r.first <= r.last {
		i, j := t.span(r.first, r.last)
		n, days = t.upTo[j]-t.upTo[i], j-i
	} else if _, err := r.eachDay(false, func(u run) bool { n, days = n+u.n, days+1; return true }); err != nil {
		return 0, err
	}
	if days > 0 {
		r.perDay = n / days
	}
	for _, p := range []*partial{&r.head, &r.tail} {
		if !p.on {
			continue
		}
		if err := r.count(p); err != nil {
			return 0, err
		}
		n += p.n
	}
	return n, nil
}

// dayTable is the day counters of one time-sorted index prefix read whole, for one store state
// (pageReads.dayTable): days[i] is the i-th day with a counter, ascending, and upTo[i] the
// entries of days[:i] (upTo has one element more: the prefix's total). A deep page of a list
// sorted by time stepped over up to half of its day counters, one cursor step each (a few
// hundred a page over two years of days), and a time range's total over its whole days; with
// the table both are a search in memory. An index that keeps hour counters has a table of
// them too (hourTable: the same form, hours for days, under hourCountsPrefix): a range's
// partial day is then its whole hours from memory and at most two partial hours walked, where
// each partial day cost a day counter's descent, an hour counters' and up to two walks.
type dayTable struct {
	days []uint32
	upTo []int
}

// sum returns the entries of the table's days within first..last (inclusive).
func (t *dayTable) sum(first, last uint32) int {
	i, j := t.span(first, last)
	return t.upTo[j] - t.upTo[i]
}

// of returns day d's entries (0 without a counter).
func (t *dayTable) of(d uint32) int { return t.sum(d, d) }

// each visits the table's days within first..last (inclusive) in order (descending when desc)
// with their entries, until visit returns false.
func (t *dayTable) each(first, last uint32, desc bool, visit func(d uint32, n int) bool) {
	i, j := t.span(first, last)
	for x := range j - i {
		if desc {
			x = j - 1 - x
		} else {
			x += i
		}
		if !visit(t.days[x], t.upTo[x+1]-t.upTo[x]) {
			return
		}
	}
}

// span returns [i, j), the table's days within first..last (inclusive).
func (t *dayTable) span(first, last uint32) (i, j int) {
	i, _ = slices.BinarySearch(t.days, first)
	j = i + sort.Search(len(t.days)-i, func(x int) bool { return t.days[i+x] > last })
	return i, j
}

// readDayTable reads the day counters under cp (dayCountsPrefix) of counts whole.
func readDayTable(counts *bbolt.Bucket, cp []byte) *dayTable {
	t := &dayTable{upTo: []int{0}}
	c := counts.Cursor()
	for k, v := c.Seek(cp); k != nil && bytes.HasPrefix(k, cp) && len(k) == len(cp)+4; k, v = c.Next() {
		t.days = append(t.days, binary.BigEndian.Uint32(k[len(cp):]))
		t.upTo = append(t.upTo, t.upTo[len(t.upTo)-1]+int(binary.BigEndian.Uint64(v)))
	}
	return t
}

// countKeys walks [from, to) with c and counts its keys.
func countKeys(ctx context.Context, c *bbolt.Cursor, from, to []byte) (int, error) {
	n := 0
	for k, _ := c.Seek(from); k != nil && bytes.Compare(k, to) < 0; k, _ = c.Next() {
		if n++; n%scanCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// pageDays answers a page of [lo, hi) of a time-sorted index from its day counters: total is
// the range's size (known, when known >= 0, else counted from the runs — but for a first page,
// whose walk counts the partial hour it starts in: pageStart) and the page is walked from the
// start of the run that holds its first entry. A page past the middle is found from
// the far end, so a deep offset reads at most half the counters.
func pageDays(ctx context.Context, tx *bbolt.Tx, reads *pageReads, p *indexPage, known int) ([][]byte, int, error) {
	r := newDayRange(ctx, tx, reads, p.bucket, p.prefix, p.lo, p.hi)
	r.room = p.room
	if p.records != nil {
		r.walk, r.recordHead = tx.Bucket(p.records), p.head
	} else {
		r.walk = tx.Bucket(p.bucket)
	}
	desc, offset, limit, keyOf := p.desc, p.offset, p.limit, p.keyOf
	total := known
	if total < 0 {
		r.fromStart, r.startDesc = offset == 0 && limit > 0, desc
		var err error
		if total, err = r.total(); err != nil {
			return nil, 0, err
		}
		r.fromStart = false
		if r.startPart != nil {
			return r.pageStart(total, limit, keyOf)
		}
	}
	if offset >= total || limit <= 0 {
		return [][]byte{}, total, nil
	}
	// At most what the range holds past offset: the runs are walked counted.
	limit = min(limit, total-offset)
	flip := offset > total/2
	if flip {
		offset, desc = total-offset-limit, !desc
	}
	var (
		ids   [][]byte
		err   error
		found bool
	)
	skipped := 0
	eachErr := r.each(desc, func(u run) bool {
		if skipped+u.n <= offset {
			skipped += u.n
			return true
		}
		found = true
		k := offset - skipped
		// By days the page's start is min(k, u.n-k) entries into the day; by hours, about a
		// quarter of an hour's on average, after a descent and up to 24 counters — none when
		// the hours are read whole (hourTable).
		hours := seekEntries + 24
		if r.hourTable(u.d) != nil {
			hours = 0
		}
		if u.p == nil && min(k, u.n-k) > hours+u.n/96 && r.hoursOf(u.d) {
			u, k = r.inHour(u, desc, k)
			// And by minutes to the minute holding it, when that steps over fewer: a descent
			// and up to sixty counters against a quarter of the hour's entries on average.
			if u.p != nil && min(k, u.n-k) > 2*seekEntries+30 && r.minutesOf(uint32(r.timeOf(u.p.from)/hourWidth)) {
				u, k = r.inMinute(u, desc, k)
			}
		}
		ids, err = r.pageFrom(u, desc, k, limit, keyOf)
		return false
	})
	if err == nil {
		err = eachErr
	}
	if err != nil || !found {
		return [][]byte{}, total, err
	}
	if flip {
		slices.Reverse(ids)
	}
	return ids, total, nil
}

// walkKey returns the key in the walked bucket of an index key.
func (r *dayRange) walkKey(k []byte) []byte {
	if r.recordHead == nil {
		return k
	}
	return recordKey(r.prefix, r.recordHead, k)
}

// pageStart reads the page of limit entries from the start of the range (in scan order,
// descending when desc), whose total the range's runs count but for the partial hour at that
// side (startPart, partHour): the page's walk counts it as it passes its entries, stepping on
// past the page at most as far as partHour's own count would walk (a descent and the shorter
// side of the hour), and partHour counts what the walk did not reach. total counts the rest
// of the range: when it holds the page, the page is walked counted from the range's start, as
// pageFrom walks a first run; else the part is counted first.
func (r *dayRange) pageStart(total, limit int, keyOf func(dst, k, v []byte) []byte) ([][]byte, int, error) {
	part, desc := r.startPart, r.startDesc
	r.startPart = nil
	at := r.walkKey
	if limit > total { // the range may not hold the page without the part
		n, err := r.partHour(part.from, part.to, part.n)
		if total += n; err != nil || total == 0 {
			return [][]byte{}, total, err
		}
		ids, err := pageCounted(r.ctx, r.walk, at(r.lo), at(r.hi), desc, 0, min(limit, total), keyOf, r.room, nil)
		return ids, total, err
	}
	// The walk goes on past the page to count the part as far as partHour's own count would
	// step (partCost: its hour's shorter side, or by its minutes) — when the part, by its share
	// of its hour's entries, may end within that: else those steps would be spent and the part
	// counted by partHour all the same (a dense hour: a million users' order list).
	tf, tt := r.timeOf(part.from), r.timeOf(part.to)
	w := walkPart{bound: at(part.to)}
	if cost := r.partCost(tf, tt, part.n); float64(tt-tf)/float64(hourWidth)*float64(part.n) <= float64(limit)+2*cost {
		w.extra = int(cost)
	}
	if desc {
		w.bound = at(part.from)
	}
	ids, err := pageCounted(r.ctx, r.walk, at(r.lo), at(r.hi), desc, 0, limit, keyOf, r.room, &w)
	if err != nil {
		return nil, 0, err
	}
	if !w.done {
		w.n, err = r.partHour(part.from, part.to, part.n)
	}
	return ids, total + w.n, err
}

// pageFrom reads the page of limit entries that starts k entries into run u (in scan order,
// descending when desc) and runs on past it as far as the range goes. The k entries are
// stepped over from the nearer end of the run: a page in the second half of a day starts from
// the day's end, walking at most half the day's entries instead of all but a few of them. The
// runs' counts place each walk inside its range (pageCounted).
func (r *dayRange) pageFrom(u run, desc bool, k, limit int, keyOf func(dst, k, v []byte) []byte) ([][]byte, error) {
	at := r.walkKey
	if k <= u.n/2 {
		if desc {
			return pageCounted(r.ctx, r.walk, at(r.lo), at(r.to(u)), true, k, limit, keyOf, r.room, nil)
		}
		return pageCounted(r.ctx, r.walk, at(r.from(u)), at(r.hi), false, k, limit, keyOf, r.room, nil)
	}
	// The run's last n entries in scan order, read from its far end, then the rest of the page
	// from the start of what follows the run: both walks append to the room's ids, the page is
	// what they added.
	from := len(r.room.ids)
	n := min(limit, u.n-k)
	ids, err := pageCounted(r.ctx, r.walk, at(r.from(u)), at(r.to(u)), !desc, u.n-k-n, n, keyOf, r.room, nil)
	slices.Reverse(ids)
	if err != nil || limit == n {
		return ids, err
	}
	if desc {
		_, err = pageCounted(r.ctx, r.walk, at(r.lo), at(r.from(u)), true, 0, limit-n, keyOf, r.room, nil)
	} else {
		_, err = pageCounted(r.ctx, r.walk, at(r.to(u)), at(r.hi), false, 0, limit-n, keyOf, r.room, nil)
	}
	return r.room.ids[from:], err
}
