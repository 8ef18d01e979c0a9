package bolt

import (
	"bytes"
	"encoding/binary"
	"maps"
	"math"

	"github.com/shopspring/decimal"
	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// priceTable is an institution's prices in the form a list item values holdings in
// (decoder.userItem): each price's int64 coefficient and exponent, found by the symbol's stored
// bytes in a small open-addressed table. A list page looks up every holding of every user on
// it; looking each up in the prices' map and taking the decimal's digits apart was a seventh of
// the page's CPU.
type priceTable struct {
	slots []priceSlot // a power of two long, at most half full
	shift uint        // 64 − log2(len(slots))

	// words holds the symbols of at most 8 bytes again, each keyed by its bytes as one word and
	// with its price scaled for a covered list item's valuation (fixedItemAccounts): a symbol is
	// found by one multiplication and a word compared, and a holding valued by one multiplication.
	words     []wordSlot // a power of two long, at most half full
	wordShift uint
}

// wordSlot is a symbol of at most 8 bytes (word: its bytes little-endian; n: its length, 0 for
// an empty slot) and its price at every quantity exponent a fixed-width amount may have:
// scaled[qe-minQtyExp] is the price p with p×10^qe = scaled×10^accExp, where scaledOK's bit
// says that is an exact int64 (a price of more than 18 digits has none).
type wordSlot struct {
	word     uint64
	n        uint8
	scaledOK uint32
	scaled   [maxQtyExp - minQtyExp + 1]int64
}

// accExp is the exponent a covered item's fast valuation sums its terms at; minQtyExp and
// maxQtyExp bound the quantity exponents it values. A term it cannot put there exactly sends
// the user to CentsSum's path (decoder.userAccounts), which is exact too.
const (
	accExp    = -10
	minQtyExp = -8
	maxQtyExp = 8
)

type priceSlot struct {
	symbol string
	c      int64
	exp    int32
	used   bool
	small  bool // the price has at most 18 digits: c and exp hold it
}

// newPriceTable returns prices as a priceTable.
func newPriceTable(prices map[string]decimal.Decimal) *priceTable {
	size, shift := 8, uint(64-3)
	for size < 2*len(prices) {
		size, shift = size*2, shift-1
	}
	t := &priceTable{slots: make([]priceSlot, size), shift: shift}
	for sym, p := range prices {
		i := home(shift, sym)
		for t.slots[i].used {
			i = (i + 1) & (len(t.slots) - 1)
		}
		t.slots[i] = priceSlot{symbol: sym, used: true, small: p.NumDigits() <= 18, c: p.CoefficientInt64(), exp: p.Exponent()}
	}
	size, t.wordShift = 8, uint(64-3)
	for size < 2*len(prices) {
		size, t.wordShift = size*2, t.wordShift-1
	}
	t.words = make([]wordSlot, size)
	for sym, p := range prices {
		if len(sym) == 0 || len(sym) > 8 {
			continue
		}
		var w [8]byte
		copy(w[:], sym)
		word := binary.LittleEndian.Uint64(w[:])
		i := wordHome(t.wordShift, word, len(sym))
		for t.words[i].n != 0 {
			i = (i + 1) & (len(t.words) - 1)
		}
		s := &t.words[i]
		s.word, s.n = word, uint8(len(sym))
		if p.NumDigits() > 18 {
			continue // never scaled: its holdings take the decimal path
		}
		pc, pexp := p.CoefficientInt64(), p.Exponent()
		for j := range s.scaled {
			if v, ok := simulator.ScaleExact(pc, int64(pexp)+int64(j+minQtyExp)-accExp); ok {
				s.scaled[j], s.scaledOK = v, s.scaledOK|1<<j
			}
		}
	}
	return t
}

// wordHome is the slot where a symbol's probe starts in words.
func wordHome(shift uint, word uint64, n int) int {
	return int(((word ^ uint64(n)<<59) * 0x9e3779b97f4a7c15) >> shift)
}

// word finds the symbol of the n bytes at b[i:] (n <= 8, and b holds 8 bytes from i): its slot,
// or nil when prices have none (a missing price is zero).
func (t *priceTable) word(b []byte, i, n int) *wordSlot {
	word := binary.LittleEndian.Uint64(b[i:]) & (math.MaxUint64 >> (64 - 8*n))
	for j := wordHome(t.wordShift, word, n); t.words[j].n != 0; j = (j + 1) & (len(t.words) - 1) {
		if s := &t.words[j]; s.word == word && int(s.n) == n {
			return s
		}
	}
	return nil
}

// home is the slot where a symbol's probe starts, in a table of 64−shift bits. It takes the
// stored bytes as they are: a string made of them for a call would be an allocation.
func home[S string | []byte](shift uint, sym S) int {
	h := uint64(14695981039346656037) // FNV-1a
	for i := 0; i < len(sym); i++ {
		h = (h ^ uint64(sym[i])) * 1099511628211
	}
	return int((h * 0x9e3779b97f4a7c15) >> shift)
}

// addHolding adds a holding of quantity c×10^exp of symbol to value at its price (a missing
// price is zero, as in simulator.CentsSum.AddHolding), and to hint when it is not nil; ok is
// false when the price has more than 18 digits, which only the decimal path values.
func (t *priceTable) addHolding(value, hint *simulator.CentsSum, symbol []byte, c int64, exp int32) (ok bool) {
	var pc int64
	var pexp int32
	for i := home(t.shift, symbol); t.slots[i].used; i = (i + 1) & (len(t.slots) - 1) {
		if s := &t.slots[i]; s.symbol == string(symbol) {
			if !s.small {
				return false
			}
			pc, pexp = s.c, s.exp
			break
		}
	}
	value.AddHoldingAt(c, exp, pc, pexp)
	if hint != nil {
		hint.AddHoldingAt(c, exp, pc, pexp)
	}
	return true
}

// priceVersion is the version of institution id's prices (bPriceVersions): 0 until they first
// change, one more at each change (putInstitution), kept in the store so that a restart, a
// snapshot and its restore keep it with the index values valued at it. A user index value of
// tag 3 keeps its accounts' values at a version of its institution's prices
// (encoder.valuedItemAccounts), read as stored only while the prices are still at it.
func priceVersion(tx *bbolt.Tx, id string) uint64 {
	n, k := binary.Uvarint(tx.Bucket(bPriceVersions).Get([]byte(id)))
	if k <= 0 {
		return 0
	}
	return n
}

// nextPriceVersion returns the version of institution in's prices once written: the stored
// version, one more when its prices differ from the stored institution's (a price of the same
// value at another exponent values every holding alike: no change). A new institution's (or a
// build's, whose store is empty) is 0. changed reports a version to write.
func (w *writeTx) nextPriceVersion(in *simulator.Institution) (version uint64, changed bool, err error) {
	if w.Tx == nil {
		return 0, false, nil
	}
	raw := w.Bucket(bInstitutions).Get([]byte(in.ID))
	if raw == nil {
		return 0, false, nil
	}
	var was simulator.Institution
	if err := decodeRecord(raw, &was); err != nil {
		return 0, false, err
	}
	version = priceVersion(w.Tx, in.ID)
	if maps.EqualFunc(was.Prices, in.Prices, decimal.Decimal.Equal) {
		return version, false, nil
	}
	return version + 1, true, nil
}

// pricing returns the institution whose users this transaction writes valued at its prices
// (userIndexValue), or nil when it has none to value them at: a build's or a load's writer
// knows the institutions it wrote (putInstitution registers them in w.prices), any other reads
// the institution as this transaction sees it — its price table from the read cache when the
// cached one was read from the same stored record, and always the transaction's price version:
// a value is read as stored only at the version it keeps, so the pair must be this state's (a
// cached one a moment old, after a restore or a reset, could name a version the store gives
// other prices later).
func (w *writeTx) pricing(id string) *pricedInstitution {
	if p, ok := w.prices[id]; ok {
		return p
	}
	if w.Tx == nil || w.bulk != nil {
		return nil
	}
	raw := w.Bucket(bInstitutions).Get([]byte(id))
	if raw == nil {
		return nil
	}
	version := priceVersion(w.Tx, id)
	var p *pricedInstitution
	if v, ok := w.db.caches[string(bInstitutions)].peek(id); ok && bytes.Equal(v.(*pricedInstitution).raw, raw) {
		p = &pricedInstitution{v.(*pricedInstitution).Institution, v.(*pricedInstitution).prices, version, nil}
	} else {
		var in simulator.Institution
		if err := decodeRecord(raw, &in); err != nil {
			return nil
		}
		p = &pricedInstitution{&in, newPriceTable(in.Prices), version, nil}
	}
	if w.prices == nil {
		w.prices = map[string]*pricedInstitution{}
	}
	w.prices[id] = p
	return p
}
