package bolt

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/wordwise"
)

// Users, members, orders, transactions and deliveries — the records read on every detail,
// list page and attempt, and the bulk of a large set — are stored in a compact binary form;
// the other records stay JSON. A binary record starts with its format version (recordV1),
// which no JSON record does ('{'), so a store written before the binary form opened (and keeps
// working: each record is rewritten in the new form the next time it changes) — decodeRecord
// reads both.
//
// The form of version 1, field by field in the struct's order: strings and byte strings as a
// uvarint length then the bytes; integers as varints; booleans as one byte; a time as varint
// Unix seconds, uvarint nanoseconds and varint zone offset in seconds; an optional value (a
// pointer) as a presence byte then the value; a slice as uvarint length+1, 0 for nil (so nil
// and empty survive as JSON tells them apart); a decimal in the canonical form its JSON text
// decodes to (coefficient and exponent of its String()), as varint coefficient and varint
// exponent, or, beyond 18 digits, tag 1 and the text. TestRecordCodecMatchesJSON and
// FuzzRecordCodec hold decode(encode(x)) to what a JSON round trip of x gives.
const recordV1 = 0x01

// recordV2 is version 1 with each delivery attempt's signature header (a string) after its
// response body. Deliveries are written in it, once, as they are created (their attempts go to
// their log, webhooks.go; a test send's one attempt stays inline); deliveries of version 1, or
// rewritten with their attempts inline by stores before the log, still decode (version 1 with
// no signature).
const recordV2 = 0x02

// encodeRecord encodes a record for storage: binary for users, members, orders, transactions
// and deliveries, JSON for everything else.
func encodeRecord(v any) ([]byte, error) {
	// Room for an order or a transaction at once: grown from nothing, a record's encoding took
	// five allocations and copies, about half of what encoding a record cost a build.
	return appendRecord(make([]byte, 0, recordRoom), v)
}

// appendRecord appends v's encoding for storage (encodeRecord) to dst.
func appendRecord(dst []byte, v any) ([]byte, error) {
	e := encoder{b: dst}
	switch r := v.(type) {
	case *simulator.User:
		e.user(r)
	case *simulator.Member:
		e.member(r)
	case *simulator.Order:
		e.order(r)
	case *simulator.Transaction:
		e.transaction(r)
	case *simulator.Delivery:
		e.delivery(r)
	default:
		j, err := json.Marshal(v)
		return append(dst, j...), err
	}
	return e.b, nil
}

// decodeRecord decodes a stored record of either form into v.
func decodeRecord(raw []byte, v any) error {
	if len(raw) == 0 || raw[0] != recordV1 && raw[0] != recordV2 {
		return json.Unmarshal(raw, v)
	}
	d := decoder{b: raw[1:], version: raw[0]}
	switch r := v.(type) {
	case *simulator.User:
		d.share()
		d.user(r)
	case *simulator.Member:
		d.share()
		d.member(r)
	case *simulator.Order:
		d.share()
		d.order(r)
	case *simulator.Transaction:
		d.share()
		d.transaction(r)
	case *simulator.Delivery:
		d.delivery(r)
	default:
		return fmt.Errorf("binary record into %T", v)
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errors.New("trailing bytes")
	}
	return d.err
}

type encoder struct{ b []byte }

// recordRoom is the room encodeRecord starts a record's encoding with.
const recordRoom = 256

func (e *encoder) uvarint(n uint64) { e.b = binary.AppendUvarint(e.b, n) }
func (e *encoder) varint(n int64)   { e.b = binary.AppendVarint(e.b, n) }
func (e *encoder) str(s string)     { s = validUTF8(s); e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }

// validUTF8 replaces each invalid byte of s with U+FFFD, as a JSON round trip (the form
// records were stored in before) does.
func validUTF8(s string) string {
	if asciiOnly(s) || utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // utf8.RuneError for an invalid byte
		i += n
	}
	return b.String()
}

// asciiOnly reports whether s is all ASCII, a word at a time: what almost every string a
// record holds is, found in a third of utf8.ValidString's instructions (a build encodes a few
// strings a record; checking them was a fiftieth of its instructions).
func asciiOnly(s string) bool {
	b := []byte(s) // s's bytes, shared: b is only read
	var m wordwise.Mask
	for ; len(b) >= 8; b = b[8:] {
		m |= wordwise.Above(binary.LittleEndian.Uint64(b), 0x7f)
	}
	for _, c := range b { // the last few: a word of one byte each
		m |= wordwise.Above(uint64(c), 0x7f)
	}
	return !m.Any()
}

func (e *encoder) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// length writes a slice's length, nil as 0.
func (e *encoder) length(n int, isNil bool) {
	if isNil {
		e.uvarint(0)
	} else {
		e.uvarint(uint64(n) + 1)
	}
}

// strs writes a list of strings (ids), nil as such.
func (e *encoder) strs(v []string) {
	e.length(len(v), v == nil)
	for _, s := range v {
		e.str(s)
	}
}

func (e *encoder) time(t time.Time) {
	_, off := t.Zone()
	e.varint(t.Unix())
	e.uvarint(uint64(t.Nanosecond()))
	e.varint(int64(off))
}

func (e *encoder) timePtr(t *time.Time) {
	e.bool(t != nil)
	if t != nil {
		e.time(*t)
	}
}

// decimal writes d as its JSON text would decode: the coefficient and exponent of String().
// Most amounts are small enough to get them by integer arithmetic (canonical); formatting each
// through big.Int was a twentieth of a build.
func (e *encoder) decimal(d decimal.Decimal) {
	if c, exp, ok := canonical(d); ok {
		e.b = append(e.b, 0)
		e.varint(c)
		e.varint(int64(exp))
		return
	}
	e.decimalText(d)
}

// canonical returns the coefficient and exponent of d.String() — the integer for an exponent
// of zero or more, else trailing fractional zeros trimmed — when its digits (a leading "0."
// counted as one) are at most 18, what decimalText writes in binary; ok is false otherwise.
func canonical(d decimal.Decimal) (c int64, exp int32, ok bool) {
	if d.NumDigits() > 18 {
		return 0, 0, false
	}
	c, exp = d.CoefficientInt64(), d.Exponent()
	for ; exp > 0; exp-- {
		if c > 99_999_999_999_999_999 || c < -99_999_999_999_999_999 { // × 10 passes 18 digits
			return 0, 0, false
		}
		c *= 10
	}
	for exp < 0 && c%10 == 0 {
		c /= 10
		exp++
	}
	n := 1 // digits of |c|
	for v := c; v >= 10 || v <= -10; v /= 10 {
		n++
	}
	return c, exp, max(n, int(1-exp)) <= 18
}

// decimalText writes d through its String(): tag 0 and its coefficient and exponent when they
// are at most 18 digits, else tag 1 and the text.
func (e *encoder) decimalText(d decimal.Decimal) {
	s := d.String()
	digits, exp := s, 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		digits, exp = s[:i]+s[i+1:], -(len(s) - i - 1)
	}
	if n := len(strings.TrimPrefix(digits, "-")); n <= 18 {
		if c, err := strconv.ParseInt(digits, 10, 64); err == nil {
			e.b = append(e.b, 0)
			e.varint(c)
			e.varint(int64(exp))
			return
		}
	}
	e.b = append(e.b, 1)
	e.str(s)
}

func (e *encoder) user(u *simulator.User) {
	e.b = append(e.b, recordV1)
	e.str(u.PlatformID)
	e.str(u.InstitutionID)
	e.str(u.UserAccountID)
	e.time(u.CreatedAt)
	e.time(u.Terms.AcceptedAt)
	e.str(u.Terms.Version)
	e.varint(int64(u.LiveSessions))
	e.accounts(u.Accounts)
	e.bool(u.History != nil)
	if h := u.History; h != nil {
		for _, s := range h.Series() {
			e.length(len(*s), *s == nil)
			for _, p := range *s {
				e.time(p.AsOf)
				e.varint(int64(p.CostBasis))
				e.varint(int64(p.Value))
			}
		}
	}
}

// accounts writes a user's accounts as its record keeps them.
func (e *encoder) accounts(accounts []simulator.Account) {
	e.length(len(accounts), accounts == nil)
	for i := range accounts {
		a := &accounts[i]
		e.str(string(a.Product))
		e.str(string(a.KYCStatus))
		e.timePtr(a.KYCApprovedAt)
		e.account(a)
		e.str(a.Portfolio)
	}
}

// account writes an account's cash and holdings.
func (e *encoder) account(a *simulator.Account) {
	e.decimal(a.Cash)
	e.length(len(a.Holdings), a.Holdings == nil)
	for _, h := range a.Holdings {
		e.str(h.Symbol)
		e.decimal(h.Quantity)
	}
}

// itemAccounts writes a user's accounts as far as a list item shows them, for its user index
// entries' values (userIndexValue): a tag, and, an account, its product's and KYC status's
// indexes, kyc_approved_at when the item shows it, its cash and holdings — about two thirds of
// the record's form. Tag 3 (valuedItemAccounts) when at is given and the accounts are valued
// exactly at its prices in one pass, else tag 2 (fixedItemAccounts) when every amount has at
// most 18 digits, tag 0 (compactItemAccounts) otherwise; the record's form (tag 1,
// encoder.accounts) is kept for a product or status the indexes do not know.
func (e *encoder) itemAccounts(accounts []simulator.Account, at *pricedInstitution) {
	for i := range accounts {
		if simulator.ProductIndex(accounts[i].Product) < 0 || simulator.KYCIndex(accounts[i].KYCStatus) < 0 {
			e.b = append(e.b, 1)
			e.accounts(accounts)
			return
		}
	}
	start := len(e.b)
	if at != nil && e.valuedItemAccounts(accounts, at) {
		return
	}
	e.b = e.b[:start]
	if !e.fixedItemAccounts(accounts) {
		e.b = e.b[:start]
		e.compactItemAccounts(accounts)
	}
}

// compactItemAccounts writes tag 0 and the accounts, their amounts as encoder.decimal writes
// them (what every covered store wrote before tag 2).
func (e *encoder) compactItemAccounts(accounts []simulator.Account) {
	e.b = append(e.b, 0)
	e.length(len(accounts), accounts == nil)
	for i := range accounts {
		e.itemAccountHead(&accounts[i])
		e.account(&accounts[i])
	}
}

// fixedItemAccounts writes tag 2 and the accounts, each amount fixed-width (fixedAmount): a
// list page reads a few hundred amounts, and stepping through their varints was a fifth of
// its store's instructions. It is false, what it wrote unspecified, when an amount has more
// than 18 digits.
func (e *encoder) fixedItemAccounts(accounts []simulator.Account) bool {
	e.b = append(e.b, 2)
	e.length(len(accounts), accounts == nil)
	for i := range accounts {
		e.itemAccountHead(&accounts[i])
		if !e.fixedAccountAmounts(&accounts[i]) {
			return false
		}
	}
	return true
}

// fixedAccountAmounts writes an account's cash and holdings as tag 2 does, each amount
// fixed-width; it is false, what it wrote unspecified, when an amount has more than 18 digits.
func (e *encoder) fixedAccountAmounts(a *simulator.Account) bool {
	if !e.fixedAmount(a.Cash) {
		return false
	}
	e.length(len(a.Holdings), a.Holdings == nil)
	for _, h := range a.Holdings {
		e.str(h.Symbol)
		if !e.fixedAmount(h.Quantity) {
			return false
		}
	}
	return true
}

// valuedItemAccounts writes tag 3: the version of the institution's prices (at.version) and
// the accounts as tag 2 writes them, each with, after its head, its value in cents at those
// prices (8 bytes of int64, little-endian) and the length of its amounts, so that a page of an
// institution whose prices are still at that version reads each account's value and steps over
// its holdings (valueFixedAccounts, valuedStored): valuing every holding of every account at
// every page was a quarter of a user page's CPU. The values are valueFixedAccounts' own, read
// from what is written (valuedExact): one rule for what an account is worth. It is false, what
// it wrote unspecified, where tag 2 cannot be written or valueFixedAccounts declines.
func (e *encoder) valuedItemAccounts(accounts []simulator.Account, at *pricedInstitution) bool {
	e.b = append(e.b, 3)
	e.uvarint(at.version)
	start := len(e.b)
	e.length(len(accounts), accounts == nil)
	// Room on the stack for a typical user's: where each account's value goes, the accounts
	// valued.
	var slotRoom [4]int
	var rowRoom [4]simulator.AccountRow
	slots := slotRoom[:0]
	for i := range accounts {
		e.itemAccountHead(&accounts[i])
		slots = append(slots, len(e.b))
		e.b = append(e.b, make([]byte, 8)...)
		// The amounts' length, one byte when under 128 (every typical account's), else moved up.
		size := len(e.b)
		e.b = append(e.b, 0)
		if !e.fixedAccountAmounts(&accounts[i]) {
			return false
		}
		if n := len(e.b) - size - 1; n < 0x80 {
			e.b[size] = byte(n)
		} else {
			var l [binary.MaxVarintLen64]byte
			k := binary.PutUvarint(l[:], uint64(n))
			e.b = slices.Insert(e.b, size+1, l[1:k]...)
			copy(e.b[size:], l[:k])
		}
	}
	rows, _, ok := valueFixedAccounts(e.b[start:], valuedExact, at.prices, rowRoom[:0])
	if !ok {
		return false
	}
	for i, at := range slots {
		binary.LittleEndian.PutUint64(e.b[at:], uint64(rows[i].Value))
	}
	return true
}

// itemAccountHead writes what an item shows of an account besides its amounts: its product's
// and KYC status's indexes and kyc_approved_at when shown.
func (e *encoder) itemAccountHead(a *simulator.Account) {
	e.b = append(e.b, byte(simulator.ProductIndex(a.Product)), byte(simulator.KYCIndex(a.KYCStatus)))
	e.bool(a.ShowsApprovedAt())
	if a.ShowsApprovedAt() {
		e.time(*a.KYCApprovedAt)
	}
}

// fixedAmount writes d's canonical coefficient (canonical) as 8 bytes, little-endian, and its
// exponent as a byte; it is false, nothing written, when d has more than 18 digits.
func (e *encoder) fixedAmount(d decimal.Decimal) bool {
	c, exp, ok := canonical(d)
	if !ok || exp < math.MinInt8 || exp > math.MaxInt8 {
		return false
	}
	e.b = append(binary.LittleEndian.AppendUint64(e.b, uint64(c)), byte(int8(exp)))
	return true
}

func (e *encoder) member(m *simulator.Member) {
	e.b = append(e.b, recordV1)
	e.str(m.InstitutionID)
	e.str(m.CoreID)
	e.str(m.CoreIDType)
	e.bool(m.DBPID != nil)
	if m.DBPID != nil {
		e.str(*m.DBPID)
	}
	e.strs(m.UserIDs)
	e.time(m.CreatedAt)
}

// encodeMemberRef is the value of a member's entries in member_user: what Get User Detail shows
// of the member beside its core id (the key's end) — its core id type and dbp id — so that a
// detail reads no member record. A member is never changed once created (CreateMember), so the
// copy stays the record's.
func encodeMemberRef(m *simulator.Member) []byte {
	e := encoder{b: []byte{recordV1}}
	e.str(m.CoreIDType)
	e.bool(m.DBPID != nil)
	if m.DBPID != nil {
		e.str(*m.DBPID)
	}
	return e.b
}

// decodeMemberRef reads a member_user value into m (its CoreIDType and DBPID); ok is false for
// the empty value of a store written before member_user kept them, or one it cannot read, and
// the caller reads the member record.
func decodeMemberRef(raw []byte, m *simulator.Member) (ok bool) {
	if len(raw) == 0 || raw[0] != recordV1 {
		return false
	}
	d := decoder{b: raw[1:]}
	d.share()
	m.CoreIDType = d.str()
	if d.bool() {
		id := d.str()
		m.DBPID = &id
	}
	return d.err == nil && len(d.b) == 0
}

func (e *encoder) order(o *simulator.Order) {
	e.b = append(e.b, recordV1)
	e.str(o.ID)
	e.str(o.InstitutionID)
	e.str(o.TransactionID)
	e.str(o.PlatformID)
	e.str(o.UserAccountID)
	e.str(string(o.Product))
	e.str(string(o.Side))
	e.str(o.Symbol)
	e.decimal(o.Quantity)
	e.decimal(o.Notional)
	e.decimal(o.Fee)
	e.str(string(o.Status))
	e.time(o.PlacedAt)
	e.timePtr(o.CompletedAt)
	e.bool(o.IsRecurringOrder)
	e.str(o.RecurringOrderID)
	e.bool(o.ByNotional)
}

func (e *encoder) transaction(t *simulator.Transaction) {
	e.b = append(e.b, recordV1)
	e.str(t.ID)
	e.str(t.InstitutionID)
	e.str(t.PlatformID)
	e.str(t.UserAccountID)
	e.str(string(t.Product))
	e.str(string(t.Type))
	e.str(string(t.Status))
	e.decimal(t.Amount)
	e.time(t.CreatedAt)
	e.timePtr(t.CompletedAt)
	e.strs(t.OrderIDs)
}

func (e *encoder) delivery(d *simulator.Delivery) {
	e.b = append(e.b, recordV2)
	e.str(d.ID)
	e.str(d.EventID)
	e.str(d.SubscriptionID)
	e.str(d.InstitutionID)
	e.str(d.URL)
	e.length(len(d.Body), d.Body == nil)
	e.b = append(e.b, d.Body...)
	e.str(d.Status)
	e.time(d.NextAttemptAt)
	e.length(len(d.Attempts), d.Attempts == nil)
	for _, a := range d.Attempts {
		e.attempt(&a)
	}
	e.str(d.Error)
	e.time(d.CreatedAt)
}

func (e *encoder) attempt(a *simulator.Attempt) {
	e.time(a.At)
	e.varint(int64(a.StatusCode))
	e.str(a.Error)
	e.b = binary.BigEndian.AppendUint64(e.b, math.Float64bits(a.LatencyMS))
	e.str(a.ResponseBody)
	e.str(a.Signature)
}

// decoder reads a binary record; the first error sticks and later reads return zero values.
type decoder struct {
	b       []byte
	err     error
	version byte // the record's format version
	// shared, when set, is a copy of the whole record (from where b started): strings are cut
	// from it instead of each being allocated (a list page decodes ~10 strings a record).
	shared string
	// fixed: the amounts are fixed-width (encoder.fixedAmount), as in a user index value's
	// accounts of tag 2 and 3; valued: each account's head is followed by its value and the
	// length of its amounts (tag 3, encoder.valuedItemAccounts), which are stepped over.
	fixed, valued bool
}

// skipValue steps over an account's value and the length of its amounts after its head in
// accounts of tag 3 (d.valued).
func (d *decoder) skipValue() {
	if d.valued {
		d.raw(8)
		d.uvarint()
	}
}

// share makes the record's strings slices of one copy of it. Used for the small records read
// by the page (users, members, orders, transactions); a string then keeps the whole record
// alive, so not for deliveries, whose body is copied on its own.
func (d *decoder) share() { d.shared = string(d.b) }

var errShort = errors.New("binary record: truncated")

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

// uvarint reads a uvarint as binary.Uvarint does: lengths, counts and small numbers take one
// byte, an amount's coefficient or a time's seconds two to five, read here without the loop.
func (d *decoder) uvarint() uint64 {
	b := d.b
	switch {
	case len(b) > 0 && b[0] < 0x80:
		d.b = b[1:]
		return uint64(b[0])
	case len(b) > 1 && b[1] < 0x80:
		d.b = b[2:]
		return uint64(b[0]&0x7f) | uint64(b[1])<<7
	case len(b) > 2 && b[2] < 0x80:
		d.b = b[3:]
		return uint64(b[0]&0x7f) | uint64(b[1]&0x7f)<<7 | uint64(b[2])<<14
	}
	n, k := binary.Uvarint(b)
	if k <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = b[k:]
	return n
}

// varint reads a varint (zigzag-encoded) as binary.Varint does.
func (d *decoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// raw returns the next n bytes (aliasing the record: callers copy).
func (d *decoder) raw(n uint64) []byte {
	if n > uint64(len(d.b)) {
		d.fail(errShort)
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) str() string { return d.cut(d.raw(d.uvarint())) }

// cut returns v, bytes just read (they end where b now starts), as a string: cut from shared
// when it is set.
func (d *decoder) cut(v []byte) string {
	if d.shared == "" || len(v) == 0 {
		return string(v)
	}
	start := len(d.shared) - len(d.b) - len(v)
	return d.shared[start : start+len(v)]
}

func (d *decoder) bool() bool {
	v := d.raw(1)
	return len(v) == 1 && v[0] == 1
}

// length reads a slice length: -1 for nil. A length beyond the bytes left is refused before
// anything is allocated for it.
func (d *decoder) length() int {
	n := d.uvarint()
	if n == 0 {
		return -1
	}
	if n-1 > uint64(len(d.b)) {
		d.fail(errShort)
		return -1
	}
	return int(n - 1)
}

// strs reads a list of strings written by encoder.strs.
func (d *decoder) strs() []string {
	n := d.length()
	if n < 0 {
		return nil
	}
	v := make([]string, n)
	for i := range v {
		v[i] = d.str()
	}
	return v
}

func (d *decoder) time() time.Time {
	sec, nsec, off := d.skipTime()
	if d.err != nil {
		return time.Time{}
	}
	return unixTime(sec, nsec, off)
}

// unixTime is the time of fields encoder.time wrote (timeFieldsOK): UTC for a zero offset, a
// fixed zone of that offset otherwise.
func unixTime(sec int64, nsec uint64, off int64) time.Time {
	t := time.Unix(sec, int64(nsec))
	if off == 0 {
		return t.UTC()
	}
	return t.In(time.FixedZone("", int(off)))
}

// timeFieldsOK reports whether a stored time's nanoseconds and zone offset are ones
// encoder.time writes.
func timeFieldsOK(nsec uint64, off int64) bool {
	return nsec < 1e9 && off >= -86400*2 && off <= 86400*2
}

// skipTime reads a time's fields and checks them as time does, without making the time (a list
// item steps over two times a user).
func (d *decoder) skipTime() (sec int64, nsec uint64, off int64) {
	sec, nsec, off = d.varint(), d.uvarint(), d.varint()
	if !timeFieldsOK(nsec, off) {
		d.fail(errors.New("binary record: bad time"))
	}
	return sec, nsec, off
}

func (d *decoder) timePtr() *time.Time {
	if !d.bool() {
		return nil
	}
	t := d.time()
	return &t
}

func (d *decoder) decimal() decimal.Decimal {
	if d.fixed {
		c, exp := d.fixedAmount()
		return decimal.New(c, exp)
	}
	tag := d.raw(1)
	switch {
	case len(tag) != 1:
		return decimal.Zero
	case tag[0] == 0:
		c, exp := d.varint(), d.varint()
		if exp < math.MinInt32 || exp > math.MaxInt32 {
			d.fail(errors.New("binary record: bad exponent"))
			return decimal.Zero
		}
		return decimal.New(c, int32(exp))
	case tag[0] == 1:
		v, err := decimal.NewFromString(d.str())
		if err != nil {
			d.fail(err)
		}
		return v
	}
	d.fail(errors.New("binary record: bad decimal"))
	return decimal.Zero
}

func (d *decoder) user(u *simulator.User) {
	*u = simulator.User{PlatformID: d.str(), InstitutionID: d.str(), UserAccountID: d.str(), CreatedAt: d.time()}
	u.Terms.AcceptedAt = d.time()
	u.Terms.Version = d.str()
	u.LiveSessions = int(d.varint())
	u.Accounts = d.accounts(false)
	u.History = d.history()
}

// accounts reads what encoder.accounts wrote, or, compact, what encoder.itemAccounts wrote
// after its tag 0, 2 or 3 (d.fixed, d.valued; their portfolios, which no item shows, empty).
func (d *decoder) accounts(compact bool) []simulator.Account {
	n := d.length()
	if n < 0 {
		return nil
	}
	accounts := make([]simulator.Account, n)
	for i := range accounts {
		a := &accounts[i]
		if compact {
			a.Product, a.KYCStatus = indexed(d.raw(1), simulator.Products), indexed(d.raw(1), simulator.KYCStatuses)
		} else {
			a.Product, a.KYCStatus = simulator.Product(d.str()), simulator.KYCStatus(d.str())
		}
		a.KYCApprovedAt = d.timePtr()
		d.skipValue()
		a.Cash = d.decimal()
		if n := d.length(); n >= 0 {
			a.Holdings = make([]simulator.Holding, n)
			for j := range a.Holdings {
				a.Holdings[j] = simulator.Holding{Symbol: d.str(), Quantity: d.decimal()}
			}
		}
		if !compact {
			a.Portfolio = d.str()
		}
	}
	return accounts
}

// indexed returns the value of values at the index b holds (one byte), or "" with none.
func indexed[T ~string](b []byte, values []T) T {
	if len(b) == 1 && int(b[0]) < len(values) {
		return values[b[0]]
	}
	return ""
}

// history reads a user record's last field, its fixture-given history: nil when it has none.
func (d *decoder) history() *simulator.History {
	if !d.bool() {
		return nil
	}
	// A history is the record's last field: its bytes are the rest of the record.
	rest := d.b
	if h := givenHistories.get(rest); h != nil {
		d.b = d.b[len(d.b):]
		return h
	}
	h := &simulator.History{}
	for _, s := range h.Series() {
		if n := d.length(); n >= 0 {
			*s = make([]simulator.ValuePoint, n)
			for i := range *s {
				(*s)[i] = simulator.ValuePoint{AsOf: d.time(), CostBasis: simulator.Cents(d.varint()), Value: simulator.Cents(d.varint())}
			}
		}
	}
	if d.err == nil && len(d.b) == 0 {
		givenHistories.put(rest, h)
	}
	return h
}

// userItem reads a user record of version 1 (after its version byte) as far as its list item
// shows it (simulator.UserItem), without allocating: its institution and user_account_id (the
// record's bytes), its total into it and its accounts appended to accounts, valued at prices in int64 cents
// (simulator.CentsSum). Amounts are read from their stored coefficients; the fields no item
// shows are stepped over, the history (the record's last field) not read at all. uaid is nil
// when the item cannot be made so — an amount stored as text (beyond 18 digits), a value
// beyond int64, a product or status it does not know, a malformed record — and the caller
// decodes the whole user; accounts is then as it was given.
func (d *decoder) userItem(it *simulator.UserItem, prices *priceTable, accounts []simulator.AccountItem) (inst, uaid []byte, _ []simulator.AccountItem) {
	d.raw(d.uvarint()) // platform id
	inst = d.raw(d.uvarint())
	uaid = d.raw(d.uvarint())
	d.skipTime()       // created_at
	d.skipTime()       // terms accepted_at
	d.raw(d.uvarint()) // terms version
	d.varint()         // live sessions
	accounts, ok := d.userAccounts(it, prices, accounts, nil, false)
	if !ok {
		return nil, nil, accounts
	}
	return inst, uaid, accounts
}

// userAccounts reads a user record's accounts as userItem does, its total into it and each
// account appended to accounts; basis, when not nil, is given the sum of their cost-basis hints
// (simulator.Account.CostBasisHint) in cents. compact, it reads what encoder.itemAccounts wrote
// after its tag 0 (a user index value). ok is false when userItem declines, and accounts are
// then as they were given.
func (d *decoder) userAccounts(it *simulator.UserItem, prices *priceTable, accounts []simulator.AccountItem, basis *simulator.CentsSum, compact bool) (_ []simulator.AccountItem, ok bool) {
	given := accounts
	n := d.length()
	var total simulator.CentsSum
	for range max(n, 0) {
		var a simulator.AccountItem
		if compact {
			a.Product, a.KYCStatus = indexed(d.raw(1), simulator.Products), indexed(d.raw(1), simulator.KYCStatuses)
			if a.Product == "" || a.KYCStatus == "" {
				return given, false
			}
		} else if a.Product, ok = known(d.raw(d.uvarint()), simulator.Products); !ok {
			return given, false
		} else if a.KYCStatus, ok = known(d.raw(d.uvarint()), simulator.KYCStatuses); !ok {
			return given, false
		}
		if d.bool() {
			at := d.time()
			if a.ShowsApprovedAt = a.KYCStatus.ShowsApprovedAt(); a.ShowsApprovedAt {
				a.ApprovedAt = at
			}
		}
		d.skipValue()
		var value simulator.CentsSum
		hint, hints := simulator.CostBasisSum(), (*simulator.CentsSum)(nil)
		if basis != nil {
			hints = &hint
		}
		c, exp, ok := d.smallDecimal()
		if !ok {
			return given, false
		}
		value.Add(c, exp)
		if hints != nil {
			hint.Add(c, exp)
		}
		for range max(d.length(), 0) {
			symbol := d.raw(d.uvarint())
			c, exp, ok := d.smallDecimal()
			if !ok {
				return given, false
			}
			if !prices.addHolding(&value, hints, symbol, c, exp) {
				return given, false
			}
		}
		if !compact {
			d.raw(d.uvarint()) // portfolio
		}
		cents, ok := value.Cents()
		if !ok {
			return given, false
		}
		if basis != nil {
			h, ok := hint.Cents()
			if !ok {
				return given, false
			}
			basis.Add(int64(h), -2)
		}
		total.Add(int64(cents), -2)
		a.Value = simulator.CentsAmount(cents)
		accounts = append(accounts, a)
	}
	sum, ok := total.Cents()
	if d.err != nil || !ok {
		return given, false
	}
	it.Total = simulator.CentsAmount(sum)
	return accounts, true
}

// accountsForm is which accounts of a user index value valueFixedAccounts reads, and how.
type accountsForm uint8

const (
	fixedAmounts accountsForm = iota // tag 2 (encoder.fixedItemAccounts): valued at the prices
	valuedExact                      // tag 3 (encoder.valuedItemAccounts), valued at the prices as tag 2, its values not read
	valuedStored                     // tag 3 at the prices' version: its values read as stored, holdings stepped over
)

// valueFixedAccounts reads the accounts of a user index value of tag 2 or 3 (b: after the tag
// and, for tag 3, the version; form says which and how) as userAccounts reads them with compact
// and d.fixed set — each account appended to accounts as a row (simulator.AccountRow), the
// item's total returned — in one pass over the bytes, valuing each account at accExp
// (priceTable.word's scaled prices: a multiplication a holding, no CentsSum), or, valuedStored,
// reading the value tag 3 keeps (which is this function's, valuedExact, at the prices of that
// version: encoder.valuedItemAccounts). A list page reads a few hundred accounts, and the
// general reader's steps (a decoder call a field, a sum that moves its exponent term by term, a
// symbol hashed byte by byte) were most of its store's instructions. ok is false, accounts as
// given, where it does not answer exactly what userAccounts would: anything malformed, a
// kyc_approved_at with a zone, a symbol it does not index (empty or longer than 8 bytes), a term
// it cannot put at accExp exactly — and the caller reads the value with userAccounts, which is
// exact too (either path's cents are the exact sum's).
func valueFixedAccounts(b []byte, form accountsForm, prices *priceTable, accounts []simulator.AccountRow) (_ []simulator.AccountRow, _ simulator.Cents, ok bool) {
	var n uint64
	i := -1
	if len(b) > 0 && b[0] < 0x80 {
		n, i = uint64(b[0]), 1
	} else {
		n, i = uvarintAt(b, 0)
	}
	if i < 0 || n > uint64(len(b)-i)+1 {
		return accounts, 0, false
	}
	if n <= 1 { // a length is written one more than it is, 0 for nil
		return accounts, 0, true
	}
	// The rows are written in place, in room grown for them when there is too little (n is at
	// most the bytes left), by a loop of few live values: appending each, beside the accounts
	// as given, kept its state on the stack.
	start, m := len(accounts), int(n)-1
	rows := accounts
	if cap(rows)-start < m {
		rows = slices.Grow(rows, m)
	}
	rows = rows[:start+m]
	if form == valuedStored {
		if total, ok := storedAccountRows(b[i:], rows[start:]); ok {
			return rows, total, true
		}
	}
	total, ok := valueAccountRows(b, i, form, prices, rows[start:])
	if !ok {
		return accounts, 0, false
	}
	return rows, total, true
}

// valueAccountRows reads the accounts of valueFixedAccounts into rows, one each, from b[i:],
// and returns their total; ok is false where valueFixedAccounts declines. The common case's
// varints — a time's seconds (five bytes), its nanoseconds and offset and an account's length
// of amounts (a byte each) — are read here, the others by uvarintAt: a call a varint made the
// loop keep its state on the stack around each.
func valueAccountRows(b []byte, i int, form accountsForm, prices *priceTable, rows []simulator.AccountRow) (_ simulator.Cents, ok bool) {
	var total int64
	for x := range rows {
		if len(b)-i < 3+9 {
			return 0, false
		}
		p, k, shows := b[i], b[i+1], b[i+2]
		if int(p) >= len(simulator.Products) || int(k) >= len(showsApprovedAt) || shows > 1 {
			return 0, false
		}
		i += 3
		var sec int64
		var nsec uint64
		approved := false
		if shows == 1 {
			var off uint64
			j := -1
			if len(b)-i >= 10 { // the seconds of up to eight bytes, then two of one byte
				if u, n := wordUvarint(binary.LittleEndian.Uint64(b[i:])); n > 0 && b[i+n]|b[i+n+1] < 0x80 {
					sec, nsec, off, j = int64(u>>1)^-int64(u&1), uint64(b[i+n]), uint64(b[i+n+1]), i+n+2 // off: 0 as a varint too
				}
			}
			if j < 0 {
				sec, nsec, off, j = timeFieldsAt(b, i)
			}
			if j < 0 || nsec >= 1e9 || off != 0 {
				return 0, false
			}
			if approved = showsApprovedAt[k]; !approved {
				sec, nsec = 0, 0
			}
			i = j
		}
		var cents simulator.Cents
		if form == fixedAmounts {
			if cents, i, ok = valueFixedAmounts(b, i, prices); !ok {
				return 0, false
			}
		} else {
			if len(b)-i < 8 {
				return 0, false
			}
			stored := simulator.Cents(binary.LittleEndian.Uint64(b[i:]))
			var size uint64
			j := -1
			if len(b)-i > 8 && b[i+8] < 0x80 {
				size, j = uint64(b[i+8]), i+9
			} else {
				size, j = uvarintAt(b, i+8)
			}
			if j < 0 || size > uint64(len(b)-j) {
				return 0, false
			}
			end := j + int(size)
			if form == valuedStored {
				cents, i = stored, end
			} else if cents, i, ok = valueFixedAmounts(b[:end], j, prices); !ok || i != end {
				return 0, false
			}
		}
		if total, ok = simulator.AddExact(total, int64(cents)); !ok {
			return 0, false
		}
		rows[x] = simulator.AccountRow{Value: cents, ApprovedSec: sec, ApprovedNsec: int32(nsec), Product: p, KYC: k, Shows: approved}
	}
	return simulator.Cents(total), true
}

// storedAccountRows is valueAccountRows of valuedStored for accounts as a generated set's are
// written — a kyc_approved_at of whole seconds or fewer than 128 nanoseconds, in UTC, amounts
// under 128 bytes —, by a loop without a call: ok is false at anything else, and the caller
// reads the accounts with valueAccountRows. Its rows are that function's wherever it answers.
func storedAccountRows(b []byte, rows []simulator.AccountRow) (_ simulator.Cents, ok bool) {
	var total int64
	for x := range rows {
		// b is resliced past each field, so that its indexes are constants the length checks
		// cover.
		if len(b) < 3+9 {
			return 0, false
		}
		p, k, shows := b[0], b[1], b[2]
		if int(p) >= len(simulator.Products) || int(k) >= len(showsApprovedAt) || shows > 1 {
			return 0, false
		}
		b = b[3:]
		row := &rows[x]
		*row = simulator.AccountRow{Product: p, KYC: k}
		if shows == 1 {
			// The seconds' varint of up to eight bytes, the nanoseconds' of one and the zone's 0.
			if len(b) < 10 {
				return 0, false
			}
			u, n := wordUvarint(binary.LittleEndian.Uint64(b))
			if n == 0 || b[n] >= 0x80 || b[n+1] != 0 {
				return 0, false
			}
			if showsApprovedAt[k] {
				row.Shows, row.ApprovedSec, row.ApprovedNsec = true, int64(u>>1)^-int64(u&1), int32(b[n])
			}
			b = b[n+2:]
		}
		// The value, the amounts' length of one byte, the amounts stepped over.
		if len(b) < 9 || b[8] >= 0x80 || 9+int(b[8]) > len(b) {
			return 0, false
		}
		row.Value = simulator.Cents(binary.LittleEndian.Uint64(b))
		b = b[9+int(b[8]):]
		if total, ok = simulator.AddExact(total, int64(row.Value)); !ok {
			return 0, false
		}
	}
	return simulator.Cents(total), true
}

// showsApprovedAt says, by a KYC status's index in simulator.KYCStatuses, whether an account
// in it shows kyc_approved_at (KYCStatus.ShowsApprovedAt).
var showsApprovedAt = func() []bool {
	shows := make([]bool, len(simulator.KYCStatuses))
	for i, k := range simulator.KYCStatuses {
		shows[i] = k.ShowsApprovedAt()
	}
	return shows
}()

// valueFixedAmounts values an account's amounts as tag 2 writes them (encoder.fixedAccountAmounts),
// at b[i:], for valueFixedAccounts: its value in cents and the index after them.
func valueFixedAmounts(b []byte, i int, prices *priceTable) (_ simulator.Cents, next int, ok bool) {
	if len(b)-i < 9 {
		return 0, 0, false
	}
	sum, ok := simulator.ScaleExact(int64(binary.LittleEndian.Uint64(b[i:])), int64(int8(b[i+8]))-accExp)
	if !ok {
		return 0, 0, false
	}
	holdings, j := uvarintAt(b, i+9)
	if j < 0 || holdings > uint64(len(b)-j)+1 {
		return 0, 0, false
	}
	i = j
	for range max(int(holdings)-1, 0) {
		if i >= len(b) || b[i] == 0 || b[i] > 8 || len(b)-i-1 < int(b[i])+9 {
			return 0, 0, false // a symbol of a length words does not index, or cut short
		}
		sn := int(b[i])
		q := i + 1 + sn
		if s := prices.word(b, i+1, sn); s != nil { // no price: the holding is worth nothing
			e := int(int8(b[q+8])) - minQtyExp
			if e < 0 || e >= len(s.scaled) || s.scaledOK&(1<<e) == 0 {
				return 0, 0, false
			}
			term, ok := simulator.MulExact(int64(binary.LittleEndian.Uint64(b[q:])), s.scaled[e])
			if !ok {
				return 0, 0, false
			}
			if sum, ok = simulator.AddExact(sum, term); !ok {
				return 0, 0, false
			}
		}
		i = q + 9
	}
	cents, ok := simulator.RoundCents(sum, accExp)
	return cents, i, ok
}

// uvarintAt reads the uvarint at b[i:] and returns it and the index after it, -1 when there is
// none (i < 0 passes through). One of up to 8 bytes with 8 bytes to read from is taken from one
// word (wordUvarint): an amount's coefficient, a time's seconds and nanoseconds take 3 to 5.
func uvarintAt(b []byte, i int) (uint64, int) {
	switch {
	case i < 0 || i >= len(b):
		return 0, -1
	case b[i] < 0x80:
		return uint64(b[i]), i + 1
	case len(b)-i >= 8:
		if v, n := wordUvarint(binary.LittleEndian.Uint64(b[i:])); n > 0 {
			return v, i + n
		}
	}
	v, k := binary.Uvarint(b[i:])
	if k <= 0 {
		return 0, -1
	}
	return v, i + k
}

// wordUvarint reads a uvarint from the 8 bytes of w (little-endian, as they lie) and returns
// it and its length, 0 when it is longer: its 7-bit groups are gathered three shifts at a time
// rather than a byte a step.
func wordUvarint(w uint64) (uint64, int) {
	stops := ^w & 0x8080808080808080 // the last byte's top bit is clear
	if stops == 0 {
		return 0, 0
	}
	n := bits.TrailingZeros64(stops)/8 + 1
	x := w & (^uint64(0) >> (64 - 8*n)) & 0x7f7f7f7f7f7f7f7f
	x = x&0x007f007f007f007f | x&0x7f007f007f007f00>>1
	x = x&0x00003fff00003fff | x&0x3fff00003fff0000>>2
	x = x&0x000000000fffffff | x&0x0fffffff00000000>>4
	return x, n
}

// timeFieldsAt reads a time's three varints (encoder.time) at b[i:]: its Unix seconds,
// nanoseconds and zone offset, and the index after them, -1 when they are cut short. The
// offset is zigzagged back as varintAt does.
func timeFieldsAt(b []byte, i int) (sec int64, nsec uint64, off uint64, next int) {
	sec, i = varintAt(b, i)
	nsec, i = uvarintAt(b, i)
	o, i := varintAt(b, i)
	return sec, nsec, uint64(o), i
}

// varintAt is uvarintAt for a varint.
func varintAt(b []byte, i int) (int64, int) {
	u, j := uvarintAt(b, i)
	return int64(u>>1) ^ -int64(u&1), j
}

// smallDecimal reads a decimal stored as coefficient and exponent (tag 0, or fixed-width when
// d.fixed); ok is false for one stored as text.
func (d *decoder) smallDecimal() (c int64, exp int32, ok bool) {
	if d.fixed {
		c, exp = d.fixedAmount()
		return c, exp, d.err == nil
	}
	tag := d.raw(1)
	if len(tag) != 1 || tag[0] != 0 {
		d.fail(errors.New("binary record: not a small decimal"))
		return 0, 0, false
	}
	c, e := d.varint(), d.varint()
	if e < math.MinInt32 || e > math.MaxInt32 {
		d.fail(errors.New("binary record: bad exponent"))
		return 0, 0, false
	}
	return c, int32(e), d.err == nil
}

// fixedAmount reads what encoder.fixedAmount wrote.
func (d *decoder) fixedAmount() (c int64, exp int32) {
	if len(d.b) < 9 {
		d.fail(errShort)
		return 0, 0
	}
	c, exp = int64(binary.LittleEndian.Uint64(d.b)), int32(int8(d.b[8]))
	d.b = d.b[9:]
	return c, exp
}

// known returns the value of values that b spells, without allocating.
func known[T ~string](b []byte, values []T) (T, bool) {
	if i := position(b, values); i >= 0 {
		return values[i], true
	}
	return "", false
}

// position returns the position in values of the value b spells, -1 for none, without
// allocating.
func position[T ~string](b []byte, values []T) int {
	for i, v := range values {
		if string(v) == string(b) {
			return i
		}
	}
	return -1
}

// givenHistories holds the fixture-given histories decoded (simulator.User.History), by their
// stored bytes: a user with a given history is decoded on every detail, and its ~140 points
// were a third of that request's CPU. Decoding is a pure function of the bytes, so a hit is
// exactly what decoding would give. The History is shared by every reader of those bytes (and
// the HTTP layer keeps its rendering by that pointer): nothing modifies a History once it is
// decoded — a user given a new history gets a new one.
var givenHistories = historyIntern{m: map[string]*simulator.History{}}

// historyIntern is a bounded map from a history's stored bytes to its decoded value; when its
// keys would pass historyInternMax bytes it starts again empty.
type historyIntern struct {
	mu    sync.RWMutex
	m     map[string]*simulator.History
	bytes int
}

// historyInternMax bounds the interned histories' stored bytes (~2 KB each: ~8,000 users).
const historyInternMax = 16 << 20

func (c *historyIntern) get(raw []byte) *simulator.History {
	c.mu.RLock()
	h := c.m[string(raw)]
	c.mu.RUnlock()
	return h
}

func (c *historyIntern) put(raw []byte, h *simulator.History) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bytes+len(raw) > historyInternMax {
		clear(c.m)
		c.bytes = 0
	}
	if _, ok := c.m[string(raw)]; !ok {
		c.m[string(raw)] = h
		c.bytes += len(raw)
	}
}

func (d *decoder) member(m *simulator.Member) {
	*m = simulator.Member{InstitutionID: d.str(), CoreID: d.str(), CoreIDType: d.str()}
	if d.bool() {
		id := d.str()
		m.DBPID = &id
	}
	m.UserIDs = d.strs()
	m.CreatedAt = d.time()
}

func (d *decoder) order(o *simulator.Order) {
	*o = simulator.Order{ID: d.str(), InstitutionID: d.str(), TransactionID: d.str(), PlatformID: d.str(), UserAccountID: d.str(),
		Product: simulator.Product(d.str()), Side: simulator.Side(d.str()), Symbol: d.str(),
		Quantity: d.decimal(), Notional: d.decimal(), Fee: d.decimal(), Status: simulator.OrderStatus(d.str()),
		PlacedAt: d.time(), CompletedAt: d.timePtr(), IsRecurringOrder: d.bool(), RecurringOrderID: d.str(), ByNotional: d.bool()}
}

// orderRow reads an order record of version 1 (after its version byte, shared) as a page's
// renderer reads its list item (simulator.OrderRow), and returns its institution:
// decoder.order less the fields no item shows, its amounts as stored (a decimal only for one
// stored as text, beyond 18 digits), its times as their Unix seconds and nanoseconds, its
// strings checked for JSON escaping (OrderRow.PlainStrings). It reads
// at an index into the record, as coveredOrder reads an entry, not through the decoder's steps
// (a page of the index of all orders reads each of its orders here: recordOrders). It sets
// every field of o.
func (d *decoder) orderRow(o *simulator.OrderRow) (instID string) {
	b, base := d.b, len(d.shared)-len(d.b)
	j := 0
	str := func() string { // the next string, cut from shared; none once j < 0
		i, k := strAt(b, j)
		if j = k; i < 0 {
			return ""
		}
		return d.shared[base+i : base+k]
	}
	o.ID = str()
	instID = str()
	_, j = strAt(b, j) // transaction id
	_, j = strAt(b, j) // platform id
	o.UserAccountID = str()
	product, side := str(), str()
	o.Symbol = str()
	if o.Quantity, j = d.amountAt(b, j); j >= 0 {
		if o.Notional, j = d.amountAt(b, j); j >= 0 {
			o.Fee, j = d.amountAt(b, j)
		}
	}
	o.SetKindNames(simulator.Product(product), simulator.Side(side), simulator.OrderStatus(str()))
	o.PlacedSec, o.PlacedNsec, j = d.unixAt(b, j)
	o.HasCompletedAt, o.CompletedSec, o.CompletedNsec = false, 0, 0
	if j >= 0 && j < len(b) {
		if o.HasCompletedAt = b[j] == 1; o.HasCompletedAt {
			o.CompletedSec, o.CompletedNsec, j = d.unixAt(b, j+1)
		} else {
			j++
		}
	}
	o.IsRecurringOrder, o.RecurringOrderID = false, ""
	if j >= 0 && j < len(b) {
		o.IsRecurringOrder = b[j] == 1
		j++
		o.RecurringOrderID = str()
	}
	// A record carries no mark of plain strings (orderItemTail's plainTag): checked here, once,
	// so that the renderer writes them between its quotes as a covered entry's.
	o.PlainStrings = simulator.PlainJSON(o.ID) && simulator.PlainJSON(o.UserAccountID) && simulator.PlainJSON(o.Symbol) && simulator.PlainJSON(o.RecurringOrderID)
	switch {
	case j < 0 || j >= len(b): // the by-notional byte is the last
		d.fail(errShort) // unless a time or an amount failed first
	case j+1 != len(b):
		d.fail(errors.New("trailing bytes"))
	default:
		d.b = b[len(b):]
	}
	return instID
}

// unixAt reads the time written by encoder.time at b[i:] as decoder.time does, as its Unix
// seconds and nanoseconds (its zone's offset checked, then dropped: a page renders the
// instant), and returns the index after it, -1 when it fails (d's error then says why, a cut
// one aside).
func (d *decoder) unixAt(b []byte, i int) (sec int64, nsec int32, j int) {
	sec, i = varintAt(b, i)
	ns, i := uvarintAt(b, i)
	var off int64
	if uint(i) < uint(len(b)) && b[i] < 0x80 { // an offset of one byte (UTC's 0), without the call
		off, i = int64(b[i]>>1)^-int64(b[i]&1), i+1
	} else {
		off, i = varintAt(b, i)
	}
	switch {
	case i < 0:
		return 0, 0, -1
	case !timeFieldsOK(ns, off):
		d.fail(errors.New("binary record: bad time"))
		return 0, 0, -1
	}
	return sec, int32(ns), i
}

// orderItemStrings reads an order record of version 1 (after its version byte, not shared) as
// orderItem does, without making its strings: the id, user_account_id, symbol and recurring
// order id are appended to arena, where each ends is noted in ends (the caller cuts them from
// one string of the page's arena), and the product, side and status are the values they spell.
// A page then copies ~80 bytes an order instead of its whole record. ok is false for a product,
// side or status it does not know, and the caller reads the record with orderItem; arena is
// then as it was given.
func (d *decoder) orderItemStrings(o *simulator.OrderItem, arena []byte, ends *[4]int) (inst, _ []byte, ok bool) {
	given := arena
	arena = append(arena, d.raw(d.uvarint())...) // id
	ends[0] = len(arena)
	inst = d.raw(d.uvarint())
	d.raw(d.uvarint())                           // transaction id
	d.raw(d.uvarint())                           // platform id
	arena = append(arena, d.raw(d.uvarint())...) // user_account_id
	ends[1] = len(arena)
	product, side := position(d.raw(d.uvarint()), simulator.Products), position(d.raw(d.uvarint()), simulator.Sides)
	arena = append(arena, d.raw(d.uvarint())...) // symbol
	ends[2] = len(arena)
	o.Quantity, o.Notional, o.Fee = d.amount(), d.amount(), d.amount()
	status := position(d.raw(d.uvarint()), simulator.OrderStatuses)
	o.PlacedAt = d.time()
	if o.HasCompletedAt = d.bool(); o.HasCompletedAt {
		o.CompletedAt = d.time()
	}
	o.IsRecurringOrder = d.bool()
	arena = append(arena, d.raw(d.uvarint())...) // recurring order id
	ends[3] = len(arena)
	d.bool() // by notional
	if d.err == nil && len(d.b) != 0 {
		d.err = errors.New("trailing bytes")
	}
	if product < 0 || side < 0 || status < 0 {
		return nil, given, false
	}
	o.Product, o.Side, o.Status = simulator.Products[product], simulator.Sides[side], simulator.OrderStatuses[status]
	return inst, arena, true
}

// orderItemTail writes what an order's list item shows beside its index entry's key
// (placed_at, the order id), summary and user_account_id, for its covered entries
// (orderItemValue): tag 0 when the summary's bytes name its product, side and status, else tag
// 1 and the three strings, plus plainTag when marks (the store notes it, metaOrderPlain) and
// the id, user_account_id, symbol and recurring order id all need no JSON escaping; then the
// symbol, the amounts, completed_at, whether it recurs and the recurring order id, each as the
// record keeps it.
func (e *encoder) orderItemTail(o *simulator.Order, marks bool) {
	var plain byte
	if marks && simulator.PlainJSON(o.ID) && simulator.PlainJSON(o.UserAccountID) && simulator.PlainJSON(o.Symbol) && simulator.PlainJSON(o.RecurringOrderID) {
		plain = plainTag
	}
	if simulator.ProductIndex(o.Product) < 0 || simulator.SideIndex(o.Side) < 0 || simulator.OrderStatusIndex(o.Status) < 0 {
		e.b = append(e.b, 1|plain)
		e.str(string(o.Product))
		e.str(string(o.Side))
		e.str(string(o.Status))
	} else {
		e.b = append(e.b, plain)
	}
	e.str(o.Symbol)
	e.decimal(o.Quantity)
	e.decimal(o.Notional)
	e.decimal(o.Fee)
	e.timePtr(o.CompletedAt)
	e.bool(o.IsRecurringOrder)
	e.str(o.RecurringOrderID)
}

// plainTag is the bit of a covered order value's tag that says its strings need no JSON
// escaping (orderItemTail, metaOrderPlain).
const plainTag = 2

// coveredOrder reads an order's list item from a covered index entry as a page's walk copies
// it (listOrders: the length of the key's rest, the rest — placed_at's timeKey and the order
// id — and the value, orderItemValue) as a page's renderer reads it (simulator.OrderRow): its
// strings cut from d.shared (the entry's copy); the product, side and status the positions
// the summary's bytes give, or their own strings; placed_at the key's instant, completed_at
// its Unix seconds and nanoseconds, no time made. It reads at an index into the entry rather
// than through the decoder's steps (a page reads a few hundred numbers and strings, and each
// step's store of d.b was most of reading one); a decimal stored as text goes through the
// decoder. It sets every field of o: a page reads its items into one row (coveredOrders), not
// cleared between them.
func (d *decoder) coveredOrder(o *simulator.OrderRow) {
	b, base := d.b, len(d.shared)-len(d.b)
	n, i := uvarintAt(b, 0)
	if i < 0 || n > uint64(len(b)-i) || n < 8 {
		d.fail(errShort)
		return
	}
	o.PlacedSec, o.PlacedNsec = unixOfKey(b[i : i+8])
	o.ID = d.shared[base+i+8 : base+i+int(n)]
	i += int(n)
	if len(b)-i < orderSummaryLen+2 { // the summary, the user_account_id's length, the tag
		d.fail(errShort)
		return
	}
	head := b[i : i+orderSummaryLen]
	var j int
	if i, j = strAt(b, i+orderSummaryLen); i >= 0 {
		o.UserAccountID = d.shared[base+i : base+j]
	}
	if j < 0 || j >= len(b) {
		d.fail(errShort)
		return
	}
	// A plain id is printable ASCII (simulator.PlainJSON), so valid UTF-8: checked only when
	// not marked so.
	if o.PlainStrings = b[j]&plainTag != 0; !o.PlainStrings && !utf8.ValidString(o.ID) {
		o.ID = validUTF8(o.ID) // as the record keeps it
	}
	switch {
	case b[j]&^plainTag == 1:
		var p, sd, st [2]int
		p[0], p[1] = strAt(b, j+1)
		sd[0], sd[1] = strAt(b, p[1])
		st[0], st[1] = strAt(b, sd[1])
		if st[0] < 0 {
			d.fail(errShort)
			return
		}
		cut := func(at [2]int) string { return d.shared[base+at[0] : base+at[1]] }
		o.SetKindNames(simulator.Product(cut(p)), simulator.Side(cut(sd)), simulator.OrderStatus(cut(st)))
		j = st[1]
	case b[j]&^plainTag == 0 && int(head[0]) < len(simulator.Products) && int(head[1]) < len(simulator.Sides) && int(head[2]) < len(simulator.OrderStatuses):
		o.Product, o.Side, o.Status = int8(head[0]), int8(head[1]), int8(head[2])
		o.ProductName, o.SideName, o.StatusName = "", "", ""
		j++
	default:
		d.fail(errors.New("binary record: bad order item"))
		return
	}
	if i, j = strAt(b, j); i < 0 {
		d.fail(errShort)
		return
	}
	o.Symbol = d.shared[base+i : base+j]
	if o.Quantity, j = d.amountAt(b, j); j >= 0 {
		if o.Notional, j = d.amountAt(b, j); j >= 0 {
			o.Fee, j = d.amountAt(b, j)
		}
	}
	if j < 0 || j >= len(b) {
		d.fail(errShort) // unless an amount failed first
		return
	}
	if o.HasCompletedAt = b[j] == 1; o.HasCompletedAt {
		if o.CompletedSec, o.CompletedNsec, j = d.unixAt(b, j+1); j < 0 {
			d.fail(errShort) // unless the time's fields failed first
			return
		}
	} else {
		o.CompletedSec, o.CompletedNsec = 0, 0 // the row is reused: every field is set
		j++
	}
	if j >= len(b) {
		d.fail(errShort)
		return
	}
	o.IsRecurringOrder = b[j] == 1
	if i, j = strAt(b, j+1); i < 0 {
		d.fail(errShort)
		return
	}
	o.RecurringOrderID = d.shared[base+i : base+j]
	if j != len(b) {
		d.fail(errors.New("trailing bytes"))
		return
	}
	d.b = b[j:]
}

// unixOfKey is timeFromKey as Unix seconds and nanoseconds, no time made.
func unixOfKey(k []byte) (sec int64, nsec int32) {
	ns := int64(binary.BigEndian.Uint64(k) ^ (1 << 63))
	sec, rem := ns/1e9, ns%1e9
	if rem < 0 { // before 1970: the second before, and what is left of it
		sec, rem = sec-1, rem+1e9
	}
	return sec, int32(rem)
}

// strAt returns where the string written by encoder.str at b[i:] starts and ends, -1 when there
// is none (i < 0 passes through). A length of one byte is read inline (strAt is small enough to
// be inlined: an order item reads four to ten strings), a longer one by longStrAt.
func strAt(b []byte, i int) (start, end int) {
	if uint(i) < uint(len(b)) && b[i] < 0x80 && int(b[i]) < len(b)-i {
		return i + 1, i + 1 + int(b[i])
	}
	return longStrAt(b, i)
}

// longStrAt is strAt of any length.
func longStrAt(b []byte, i int) (start, end int) {
	n, i := uvarintAt(b, i)
	if i < 0 || n > uint64(len(b)-i) {
		return -1, -1
	}
	return i, i + int(n)
}

// amountAt reads the amount written by encoder.decimal at b[i:] as decoder.amount does and
// returns the index after it, -1 when it fails (d's error then says why, a cut one aside).
func (d *decoder) amountAt(b []byte, i int) (simulator.Amount, int) {
	if i >= 0 && i < len(b) && b[i] == 0 {
		c, j := varintAt(b, i+1)
		var exp int64
		if uint(j) < uint(len(b)) && b[j] < 0x80 { // an exponent of one byte, without the call
			exp, j = int64(b[j]>>1)^-int64(b[j]&1), j+1
		} else {
			exp, j = varintAt(b, j)
		}
		switch {
		case j < 0:
			return simulator.Amount{}, -1
		case exp < math.MinInt32 || exp > math.MaxInt32:
			d.fail(errors.New("binary record: bad exponent"))
			return simulator.Amount{}, -1
		}
		return simulator.Amount{Coef: c, Exp: int32(exp)}, j
	}
	if i < 0 || i >= len(b) {
		return simulator.Amount{}, -1
	}
	r := decoder{b: b[i:]} // a decimal stored as text
	if a := r.amount(); r.err == nil {
		return a, len(b) - len(r.b)
	}
	d.fail(r.err)
	return simulator.Amount{}, -1
}

// amount reads a decimal as an Amount: its stored coefficient and exponent, or a decimal for
// one stored as text.
func (d *decoder) amount() simulator.Amount {
	if len(d.b) > 0 && d.b[0] == 0 && !d.fixed { // smallDecimal's, inline: three an order item
		d.b = d.b[1:]
		c, exp := d.varint(), d.varint()
		if exp < math.MinInt32 || exp > math.MaxInt32 {
			d.fail(errors.New("binary record: bad exponent"))
		}
		if d.err != nil {
			return simulator.Amount{}
		}
		return simulator.Amount{Coef: c, Exp: int32(exp)}
	}
	if len(d.b) > 0 && d.b[0] == 0 {
		if c, exp, ok := d.smallDecimal(); ok {
			return simulator.Amount{Coef: c, Exp: exp}
		}
		return simulator.Amount{}
	}
	v := d.decimal()
	return simulator.Amount{Big: &v}
}

func (d *decoder) transaction(t *simulator.Transaction) {
	*t = simulator.Transaction{ID: d.str(), InstitutionID: d.str(), PlatformID: d.str(), UserAccountID: d.str(),
		Product: simulator.Product(d.str()), Type: simulator.TransactionType(d.str()), Status: simulator.OrderStatus(d.str()),
		Amount: d.decimal(), CreatedAt: d.time(), CompletedAt: d.timePtr(), OrderIDs: d.strs()}
}

func (d *decoder) delivery(v *simulator.Delivery) {
	*v = simulator.Delivery{ID: d.str(), EventID: d.str(), SubscriptionID: d.str(), InstitutionID: d.str(), URL: d.str()}
	if n := d.length(); n >= 0 {
		v.Body = append(json.RawMessage{}, d.raw(uint64(n))...)
	}
	v.Status, v.NextAttemptAt = d.str(), d.time()
	if n := d.length(); n >= 0 {
		v.Attempts = make([]simulator.Attempt, n)
		for i := range v.Attempts {
			v.Attempts[i] = d.attempt()
		}
	}
	v.Error, v.CreatedAt = d.str(), d.time()
}

func (d *decoder) attempt() simulator.Attempt {
	a := simulator.Attempt{At: d.time(), StatusCode: int(d.varint()), Error: d.str()}
	if b := d.raw(8); len(b) == 8 {
		a.LatencyMS = math.Float64frombits(binary.BigEndian.Uint64(b))
	}
	a.ResponseBody = d.str()
	if d.version >= recordV2 {
		a.Signature = d.str()
	}
	return a
}

// deliveryStep is one entry of a delivery's log (bDeliveryLog): what happened at one of its
// slots — the attempt made for it, if any — and where the delivery stands after.
type deliveryStep struct {
	Attempt *simulator.Attempt
	simulator.DeliveryState
}

// stepV1 is the form of a log entry: the version byte, a presence byte and the attempt (as in
// a version 2 delivery), then the state's status, next attempt and error.
const stepV1 = 0x01

func encodeStep(st *deliveryStep) []byte {
	e := encoder{b: make([]byte, 0, 128)}
	e.b = append(e.b, stepV1)
	e.bool(st.Attempt != nil)
	if st.Attempt != nil {
		e.attempt(st.Attempt)
	}
	e.str(st.Status)
	e.time(st.NextAttemptAt)
	e.str(st.Error)
	return e.b
}

func decodeStep(raw []byte, st *deliveryStep) error {
	if len(raw) == 0 || raw[0] != stepV1 {
		return errors.New("delivery log entry: unknown form")
	}
	d := decoder{b: raw[1:], version: recordV2}
	*st = deliveryStep{}
	if d.bool() {
		a := d.attempt()
		st.Attempt = &a
	}
	st.Status, st.NextAttemptAt, st.Error = d.str(), d.time(), d.str()
	if d.err == nil && len(d.b) != 0 {
		d.err = errors.New("trailing bytes")
	}
	return d.err
}
