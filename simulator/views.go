package simulator

import (
	"encoding/base64"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// UserView is a user as Get User Detail shows it (decisions D5): its list item, its identity
// and terms, what its history is made of, and the members that name it — what the store reads
// of the record, without its amounts as decimals where it can (User.View gives it from a whole
// user).
type UserView struct {
	Item       UserItem
	PlatformID string
	Terms      Terms
	// Seed is the user's history seed at no hour yet (HistorySeed.At gives the current hour's);
	// History is the fixture-given history, nil for a generated one.
	Seed    HistorySeed
	History *History
	// Prices are the institution's prices that value the user.
	Prices map[string]decimal.Decimal
	// CoreIDs and DBPIDs list the members naming the user as {id, type}.
	CoreIDs []IdentityRef
	DBPIDs  []IdentityRef
	// PlainStrings, when set, says that the view's strings — the user_account_id, the platform
	// id, the terms' version and every identity's id and type — need no escaping (PlainJSON of
	// each): the store checks them once as it reads the view (CheckPlain), which it shares with
	// every later reader, and the renderer writes them as they are. Unset, each is checked.
	PlainStrings bool
}

// CheckPlain sets PlainStrings to whether every string it speaks for is PlainJSON. Call it
// once the view is complete: a string added or changed later must clear the mark or call it
// again.
func (v *UserView) CheckPlain() {
	plain := PlainJSON(v.Item.UserAccountID) && PlainJSON(v.PlatformID) && PlainJSON(v.Terms.Version)
	for _, refs := range [2][]IdentityRef{v.CoreIDs, v.DBPIDs} {
		for _, r := range refs {
			plain = plain && PlainJSON(r.ID) && PlainJSON(r.Type)
		}
	}
	v.PlainStrings = plain
}

// View returns the user as Get User Detail shows it at prices, without its identities.
func (u *User) View(prices map[string]decimal.Decimal) UserView {
	return UserView{Item: u.Item(prices, nil), PlatformID: u.PlatformID, Terms: u.Terms,
		Seed: NewHistorySeed(u, prices, time.Time{}), History: u.History, Prices: prices}
}

// IdentityRef is one identity of a user: a core or dbp id and its type.
type IdentityRef struct {
	ID   string
	Type string
}

// UserSortKey is the sort key of Get User List.
type UserSortKey string

// User list sort keys (decisions D6).
const (
	SortCreatedAt     UserSortKey = "created_at"
	SortUserAccountID UserSortKey = "user_account_id"
)

// UserFilter is a Get User List query. Nil pointers are absent filters.
type UserFilter struct {
	UserAccountID *string
	Product       *Product
	KYC           map[Product]KYCStatus
	CreatedStart  *time.Time // inclusive
	CreatedEnd    *time.Time // exclusive
	SortKey       UserSortKey
	Desc          bool
	Offset        int
	Limit         int
}

// MatchesNothing reports a created_at window that can hold no user (start at or after end):
// the list is an empty page without asking the store.
func (f UserFilter) MatchesNothing() bool { return emptyWindow(f.CreatedStart, f.CreatedEnd) }

// emptyWindow reports whether a time filter [start, end) can match nothing.
func emptyWindow(start, end *time.Time) bool {
	return start != nil && end != nil && !start.Before(*end)
}

// UserPage is one page of users and the count of every match.
type UserPage struct {
	Users  []*User
	Total  int
	Prices map[string]decimal.Decimal
}

// UserItemPage is one page of Get User List as it is shown (UserItem), and the count of every
// match. A store that read every item of the page in int64 cents gives them as Rows instead,
// Items then empty.
type UserItemPage struct {
	Items []UserItem
	Total int
	Rows  *UserRows
}

// AllItems returns the page's items as UserItems, whichever form they were given in.
func (p *UserItemPage) AllItems() []UserItem {
	if p.Rows == nil {
		return p.Items
	}
	items := make([]UserItem, len(p.Rows.Items))
	for i := range items {
		items[i] = p.Rows.Item(i)
	}
	return items
}

// UserRows is a page of user items without pointers: each account's product and KYC status as
// their indexes in Products and KYCStatuses, its value in cents, kyc_approved_at in Unix
// seconds. A page's items as UserItems were a few hundred strings, amounts and times for the
// collector to zero and scan, and each read back to be rendered; rows are what the store read
// and what a list item renders (Item gives one as a UserItem).
//
// A page's rows are taken from those released before (NewUserRows) and given back by their
// last reader (Release): their three slices were most of a page's allocated bytes.
type UserRows struct {
	Items    []UserRow
	Accounts []AccountRow
	UAIDs    []byte // the items' user_account_ids, one after another
	// PlainUAIDs, when set, says that every user_account_id needs no escaping (PlainJSON of
	// each): the store checks them as it reads them, in place of checking their UTF-8, so a
	// page renders them without checking them again. Unset says nothing: they are checked.
	PlainUAIDs bool
}

// NewUserRows returns empty rows, with the room of rows released before.
func NewUserRows() *UserRows {
	r := userRows.Get().(*UserRows)
	r.Items, r.Accounts, r.UAIDs, r.PlainUAIDs = r.Items[:0], r.Accounts[:0], r.UAIDs[:0], false
	return r
}

// Release gives the rows back for a later page: neither they nor anything cut from them may be
// used after.
func (r *UserRows) Release() { userRows.Put(r) }

var userRows = sync.Pool{New: func() any { return new(UserRows) }}

// UserRow is an item of UserRows: where its user_account_id and its accounts end in the rows'
// UAIDs and Accounts (each starts where the item before ends), and its total.
type UserRow struct {
	UAIDEnd, AccountsEnd int32
	Total                Cents
}

// AccountRow is an account of a UserRow (an AccountItem without pointers): kyc_approved_at is
// ApprovedSec and ApprovedNsec, shown when Shows.
type AccountRow struct {
	Value        Cents
	ApprovedSec  int64
	ApprovedNsec int32
	Product, KYC uint8 // indexes in Products and KYCStatuses
	Shows        bool
}

// Item returns item i of the rows as a UserItem.
func (r *UserRows) Item(i int) UserItem {
	var from UserRow
	if i > 0 {
		from = r.Items[i-1]
	}
	row := r.Items[i]
	it := UserItem{UserAccountID: string(r.UAIDs[from.UAIDEnd:row.UAIDEnd]), Total: CentsAmount(row.Total), Accounts: []AccountItem{}}
	for _, a := range r.Accounts[from.AccountsEnd:row.AccountsEnd] {
		ai := AccountItem{Product: Products[a.Product], KYCStatus: KYCStatuses[a.KYC], Value: CentsAmount(a.Value), ShowsApprovedAt: a.Shows}
		if a.Shows {
			ai.ApprovedAt = time.Unix(a.ApprovedSec, int64(a.ApprovedNsec)).UTC()
		}
		it.Accounts = append(it.Accounts, ai)
	}
	return it
}

// UserItem is a user as a list item shows it (spec §2.2): its user_account_id and each
// account's product, market value and KYC state — what the store decodes of a user for a list
// page, without the rest of the record (User.Item gives it from a whole user).
type UserItem struct {
	UserAccountID string
	Total         Amount // the accounts' market values summed
	Accounts      []AccountItem
}

// AccountItem is an account of a UserItem.
type AccountItem struct {
	Product   Product
	KYCStatus KYCStatus
	Value     Amount // market value, rounded half-even to cents (decisions D5)
	// ApprovedAt is kyc_approved_at, shown when ShowsApprovedAt.
	ApprovedAt      time.Time
	ShowsApprovedAt bool
}

// Item returns the user as a list item shows it at prices, its accounts appended to into.
func (u *User) Item(prices map[string]decimal.Decimal, into []AccountItem) UserItem {
	it := UserItem{UserAccountID: u.UserAccountID, Accounts: into}
	var buf [4]Cents // an account a product
	values, total, exact := u.MarketCents(prices, buf[:0])
	it.Total = CentsAmount(total)
	if !exact { // an amount beyond int64: through decimal
		sum := decimal.Zero
		for i := range u.Accounts {
			v := u.Accounts[i].MarketValue(prices)
			sum = sum.Add(v)
			it.Accounts = append(it.Accounts, u.Accounts[i].item(AmountOf(v)))
		}
		it.Total = Amount{Big: &sum}
		return it
	}
	for i := range u.Accounts {
		it.Accounts = append(it.Accounts, u.Accounts[i].item(CentsAmount(values[i])))
	}
	return it
}

// item is the account as a list item shows it, valued at v.
func (a *Account) item(v Amount) AccountItem {
	it := AccountItem{Product: a.Product, KYCStatus: a.KYCStatus, Value: v, ShowsApprovedAt: a.ShowsApprovedAt()}
	if it.ShowsApprovedAt {
		it.ApprovedAt = *a.KYCApprovedAt
	}
	return it
}

// OrderFilter is a Get Order List query. Nil pointers are absent filters.
type OrderFilter struct {
	UserAccountID *string
	Product       *Product
	Side          *Side
	Status        *OrderStatus
	PlacedStart   *time.Time // inclusive
	PlacedEnd     *time.Time // exclusive
	Desc          bool
	Offset        int
	Limit         int
}

// MatchesNothing reports a placed_at window that can hold no order (start at or after end):
// the list is an empty page without asking the store.
func (f OrderFilter) MatchesNothing() bool { return emptyWindow(f.PlacedStart, f.PlacedEnd) }

// OrderPage is one page of orders and the count of every match.
type OrderPage struct {
	Orders []*Order
	Total  int
}

// OrderItemPage is one page of Get Order List as it is shown, and the count of every match. A
// page holds its items (Items), or reads them one at a time as it is rendered (Read, as
// OrderRows): a page of items with strings, times and amounts was most of what a page
// allocated, all of it for the collector to scan.
type OrderItemPage struct {
	Items []OrderItem
	Total int
	// Read, when set, gives the page's items as it is rendered.
	Read OrderRowReader
	// Room, when set, is what Read reads the items from, taken from a pool for this page: the
	// page's last reader gives it back (Release) once it has read every item, never before.
	Room Releaser
}

// Releaser is room a page is read from, given back for a later page once its last reader is
// done with it.
type Releaser interface{ Release() }

// Release gives the page's room back for a later page (Room), once the page's last reader has
// read every item: neither the page nor anything read from it may be used after — the page
// then reads no item, and EachRow says so. A page without room (one whose store pooled nothing,
// or released already) is left as it is: callers that keep a page simply never release it.
func (p *OrderItemPage) Release() {
	if p.Room == nil {
		return
	}
	room := p.Room
	p.Items, p.Read, p.Room = nil, releasedPage{}, nil
	room.Release()
}

// releasedPage is the reader of a page released (OrderItemPage.Release): a read after it is a
// bug of the caller's, an internal error rather than another page's bytes.
type releasedPage struct{}

func (releasedPage) ReadRows(func(*OrderRow)) error {
	return Errorf(EINTERNAL, "order page read after it was released")
}

// OrderRowReader reads a page's items as it is rendered (OrderItemPage.Read). An interface
// rather than a func, so that the store's reader, its row and the page are one allocation.
type OrderRowReader interface {
	// ReadRows gives yield the page's items in order, each in the same OrderRow (valid until
	// the next; its strings are the page's own bytes), and returns the error of reading one.
	ReadRows(yield func(*OrderRow)) error
}

// EachRow gives fn the page's items in order as rows (Read's, or each of Items as its Row)
// and returns Read's error: what a page's renderer reads.
func (p *OrderItemPage) EachRow(fn func(*OrderRow)) error {
	if p.Read != nil {
		return p.Read.ReadRows(fn)
	}
	var row OrderRow
	for i := range p.Items {
		row = p.Items[i].Row()
		fn(&row)
	}
	return nil
}

// OrderItem is an order as a list item shows it (spec §2.5): the order less its institution,
// transaction and platform ids, its amounts as the store keeps them (Amount) — what the store
// decodes of an order for a list page that holds its items (Order.Item gives it from a whole
// order). A page read as it is rendered reads OrderRows instead.
type OrderItem struct {
	ID, UserAccountID       string
	Product                 Product
	Side                    Side
	Symbol                  string
	Quantity, Notional, Fee Amount
	Status                  OrderStatus
	PlacedAt                time.Time
	CompletedAt             time.Time // when HasCompletedAt
	HasCompletedAt          bool
	IsRecurringOrder        bool
	RecurringOrderID        string
	// PlainStrings, when set, says that the ID, UserAccountID, Symbol and RecurringOrderID
	// need no escaping (PlainJSON of each): the store notes it when it writes an order's
	// covered entries, so a page renders them without checking them again. Unset says
	// nothing: they are checked.
	PlainStrings bool
}

// Row returns the item as a page's renderer reads it: its product, side and status looked up
// by their names, its times as Unix seconds and nanoseconds.
func (it *OrderItem) Row() OrderRow {
	r := OrderRow{ID: it.ID, UserAccountID: it.UserAccountID, Symbol: it.Symbol, RecurringOrderID: it.RecurringOrderID,
		Quantity: it.Quantity, Notional: it.Notional, Fee: it.Fee,
		PlacedSec: it.PlacedAt.Unix(), PlacedNsec: int32(it.PlacedAt.Nanosecond()),
		HasCompletedAt: it.HasCompletedAt, IsRecurringOrder: it.IsRecurringOrder, PlainStrings: it.PlainStrings}
	r.SetKindNames(it.Product, it.Side, it.Status)
	if it.HasCompletedAt {
		r.CompletedSec, r.CompletedNsec = it.CompletedAt.Unix(), int32(it.CompletedAt.Nanosecond())
	}
	return r
}

// OrderRow is an order list item as a page reads it to be rendered (OrderItemPage.EachRow):
// what an item shows and nothing made for it — its product, side and status as their positions
// in Products, Sides and OrderStatuses, its times as Unix seconds and nanoseconds, its strings
// cut from the page's own bytes. A store fills one row a page, a read at a time; no field is
// derived from another, so none goes stale when a field is set.
type OrderRow struct {
	ID, UserAccountID, Symbol, RecurringOrderID string
	Quantity, Notional, Fee                     Amount
	PlacedSec, CompletedSec                     int64 // CompletedSec and CompletedNsec when HasCompletedAt
	PlacedNsec, CompletedNsec                   int32 // in [0, 1e9)
	// Product, Side and Status are positions in Products, Sides and OrderStatuses, -1 for a
	// value they do not list: that value is then ProductName, SideName or StatusName (each
	// empty when its position is not -1).
	Product, Side, Status int8
	ProductName           Product
	SideName              Side
	StatusName            OrderStatus
	HasCompletedAt        bool
	IsRecurringOrder      bool
	// PlainStrings is OrderItem.PlainStrings.
	PlainStrings bool
}

// SetKindNames sets the row's product, side and status to values named by their strings,
// which may be ones the spec does not list.
func (r *OrderRow) SetKindNames(product Product, side Side, status OrderStatus) {
	r.Product, r.Side, r.Status = int8(ProductIndex(product)), int8(SideIndex(side)), int8(OrderStatusIndex(status))
	r.ProductName, r.SideName, r.StatusName = "", "", ""
	if r.Product < 0 {
		r.ProductName = product
	}
	if r.Side < 0 {
		r.SideName = side
	}
	if r.Status < 0 {
		r.StatusName = status
	}
}

// Kinds returns the row's product, side and status as values.
func (r *OrderRow) Kinds() (Product, Side, OrderStatus) {
	product, side, status := r.ProductName, r.SideName, r.StatusName
	if r.Product >= 0 {
		product = Products[r.Product]
	}
	if r.Side >= 0 {
		side = Sides[r.Side]
	}
	if r.Status >= 0 {
		status = OrderStatuses[r.Status]
	}
	return product, side, status
}

// Item returns the row as an OrderItem, its times in UTC.
func (r *OrderRow) Item() OrderItem {
	it := OrderItem{ID: r.ID, UserAccountID: r.UserAccountID, Symbol: r.Symbol, RecurringOrderID: r.RecurringOrderID,
		Quantity: r.Quantity, Notional: r.Notional, Fee: r.Fee, PlacedAt: time.Unix(r.PlacedSec, int64(r.PlacedNsec)).UTC(),
		HasCompletedAt: r.HasCompletedAt, IsRecurringOrder: r.IsRecurringOrder, PlainStrings: r.PlainStrings}
	it.Product, it.Side, it.Status = r.Kinds()
	if r.HasCompletedAt {
		it.CompletedAt = time.Unix(r.CompletedSec, int64(r.CompletedNsec)).UTC()
	}
	return it
}

// Item returns the order as a list item shows it.
func (o *Order) Item() OrderItem {
	it := OrderItem{ID: o.ID, UserAccountID: o.UserAccountID, Product: o.Product, Side: o.Side, Symbol: o.Symbol,
		Quantity: AmountOf(o.Quantity), Notional: AmountOf(o.Notional), Fee: AmountOf(o.Fee), Status: o.Status,
		PlacedAt: o.PlacedAt, HasCompletedAt: o.CompletedAt != nil, IsRecurringOrder: o.IsRecurringOrder, RecurringOrderID: o.RecurringOrderID}
	if it.HasCompletedAt {
		it.CompletedAt = *o.CompletedAt
	}
	return it
}

// OrderRequest places one buy or sell (a transaction of one order): a dollar order gives
// Notional, a share order Quantity.
type OrderRequest struct {
	PlatformID       string
	Product          Product
	Side             Side
	Symbol           string
	Notional         *decimal.Decimal
	Quantity         *decimal.Decimal
	RecurringOrderID string
}

// DeliveryFilter is a query of the delivery log (GET /_sandbox/deliveries). Empty strings and
// nil pointers are absent filters.
type DeliveryFilter struct {
	InstitutionID  string
	SubscriptionID string
	EventID        string
	EventType      EventType
	PlatformID     string     // the user the event is about
	Status         string     // DeliveryPending, DeliveryDelivered or DeliveryFailed
	CreatedStart   *time.Time // inclusive
	CreatedEnd     *time.Time // exclusive
	// Cursor is the NextCursor of an earlier page: the page goes on after it.
	Cursor string
	Limit  int
}

// DeliveryPage is one page of the delivery log, newest first. NextCursor is empty when no
// delivery may follow.
type DeliveryPage struct {
	Deliveries []*Delivery
	NextCursor string
}

// DeliveryCursor is the position just after a delivery created at at with id id in the
// newest-first delivery log: the NextCursor of a page ending there. It is opaque to callers.
func DeliveryCursor(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UnixNano(), 10) + "." + id))
}

// ParseDeliveryCursor reads a DeliveryCursor; ok is false when s is not one.
func ParseDeliveryCursor(s string) (at time.Time, id string, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, "", false
	}
	ns, id, found := strings.Cut(string(raw), ".")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !found || err != nil || id == "" {
		return time.Time{}, "", false
	}
	return time.Unix(0, n).UTC(), id, true
}
