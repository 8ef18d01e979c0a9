package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// userSummary is the value of every user index entry: enough to apply any list filter without
// decoding the user.
type userSummary struct {
	created  time.Time
	statuses [4]byte // per simulator.Products: 0 no account, else 1 + KYCIndex
	uaid     string
}

func summarize(u *simulator.User) userSummary {
	s := userSummary{created: u.CreatedAt, uaid: u.UserAccountID}
	for _, a := range u.Accounts {
		if i := simulator.ProductIndex(a.Product); i >= 0 {
			s.statuses[i] = byte(1 + simulator.KYCIndex(a.KYCStatus))
		}
	}
	return s
}

// encode is the summary as a store without metaUserItems keeps it: created_at, the statuses
// and the user_account_id.
func (s userSummary) encode() []byte {
	return cat(timeKey(s.created), s.statuses[:], []byte(s.uaid))
}

// userSummaryLen is the length of the part every user index value starts with and every
// filter reads: created_at and the statuses.
const userSummaryLen = 12

// metaUserItems marks a store whose user index values carry what a user's list item shows
// (userIndexValue): every store emptied or created since they do. A list page of such a store
// is read from its index walk alone — it reached each user's record by a descent into
// user_records, whose records of a filtered page lie far apart, and decoded it there. A store
// written before keeps the summary alone (userSummary.encode) and is read from its records,
// as it always was; writers keep the form the store has.
var metaUserItems = []byte("user_items")

// coversUsers reports whether the store's user index values carry the list items.
func coversUsers(tx *bbolt.Tx) bool { return tx.Bucket(bMeta).Get(metaUserItems) != nil }

// metaUserValues marks a store whose user index values may keep each account's value at a
// version of its institution's prices (tag 3, encoder.valuedItemAccounts; priceVersion): every
// store emptied, created or built since. A store without it (written before) keeps tags 0-2,
// read and written as before.
var metaUserValues = []byte("user_values")

// userIndexValue is the value of every index entry of a user: the summary (userSummaryLen
// bytes, then the user_account_id) and, when covered, the user_account_id's length before it
// and the accounts after it as far as a list item shows them (encoder.itemAccounts), valued at
// at's prices when at is not nil.
func userIndexValue(u *simulator.User, covered bool, at *pricedInstitution) []byte {
	s := summarize(u)
	if !covered {
		return s.encode()
	}
	e := encoder{b: make([]byte, 0, 192)} // a generated set's users' values are 100-190 bytes
	e.b = append(append(e.b, timeKey(s.created)...), s.statuses[:]...)
	e.uvarint(uint64(len(s.uaid)))
	e.b = append(e.b, s.uaid...)
	e.itemAccounts(u.Accounts, at)
	return e.b
}

// summaryUAIDLen returns the length of the user_account_id in a user index value (the key of
// an entry sorted by user_account_id ends with it, a 0 and the platform id).
func summaryUAIDLen(v []byte, covered bool) int {
	if !covered {
		return len(v) - userSummaryLen
	}
	n, _ := binary.Uvarint(v[userSummaryLen:])
	return int(n)
}

// userIndexEntries returns (prefix, rest) of every index entry of a user.
func userIndexEntries(u *simulator.User) [][2][]byte {
	in := inst(u.InstitutionID)
	pid := []byte(u.PlatformID)
	byCreated := cat([]byte{sortCreated}, timeKey(u.CreatedAt))
	byUAID := cat([]byte{sortUAID}, []byte(u.UserAccountID), []byte{0})
	var out [][2][]byte
	add := func(filter []byte) {
		out = append(out,
			[2][]byte{cat(in, filter, []byte{sortCreated}), cat(byCreated[1:], pid)},
			[2][]byte{cat(in, filter, []byte{sortUAID}), cat(byUAID[1:], pid)})
	}
	add([]byte{kindAll})
	for _, a := range u.Accounts {
		p := byte(simulator.ProductIndex(a.Product))
		add([]byte{kindProduct, p})
		add([]byte{kindKYC, p, byte(simulator.KYCIndex(a.KYCStatus))})
	}
	return out
}

// putUser writes a user and keeps its indexes; old is the stored version or nil.
func (w *writeTx) putUser(old, u *simulator.User) error {
	var was []byte
	var olds [][2][]byte
	if old != nil {
		was, olds = userKeyPrefix(old), userIndexEntries(old)
		if old.UserAccountID != u.UserAccountID {
			if err := w.Bucket(bUserUAID).Delete(cat(inst(old.InstitutionID), []byte(old.UserAccountID))); err != nil {
				return err
			}
		}
	}
	covered := w.coversUsers()
	var at *pricedInstitution
	if covered && w.keeps(metaUserValues) {
		at = w.pricing(u.InstitutionID)
	}
	if err := w.reindex(bUserIndex, olds, userIndexEntries(u), userIndexValue(u, covered, at)); err != nil {
		return err
	}
	if err := w.put(bUserUAID, cat(inst(u.InstitutionID), []byte(u.UserAccountID)), []byte(u.PlatformID)); err != nil {
		return err
	}
	return userRecords.put(w, u.PlatformID, was, userKeyPrefix(u), u)
}

// getUser reads a user of institution instID; another institution's user does not exist.
func getUser(tx *bbolt.Tx, instID, platformID string) (*simulator.User, error) {
	return getClustered[simulator.User](tx, userRecords, instID, platformID)
}

func getInstitution(tx *bbolt.Tx, id string) (*simulator.Institution, error) {
	var in simulator.Institution
	if err := getRecord(tx, bInstitutions, []byte(id), &in, "institution not found"); err != nil {
		return nil, err
	}
	return &in, nil
}

// Institution returns an institution.
func (s *DB) Institution(ctx context.Context, id string) (*simulator.Institution, error) {
	var in *simulator.Institution
	err := s.view(ctx, func(tx *bbolt.Tx) (err error) {
		in, err = getInstitution(tx, id)
		return err
	})
	return in, err
}

// resolveUser applies decisions D5's resolution of (id, type) to a user of the institution:
// it returns the user's stored record, valid while tx is, and the cursor of user_keys at the
// user's entry where the store keeps the record there (clustered.find), else nil.
func resolveUser(tx *bbolt.Tx, in *simulator.Institution, id string, t simulator.IDType) ([]byte, *bbolt.Cursor, error) {
	if t == simulator.IDPlatform {
		raw, keys, err := userRecords.find(tx, in.ID, id)
		if err != nil {
			return nil, nil, simulator.Errorf(simulator.ENOTFOUND, "no user matches user_account_id")
		}
		return raw, keys, nil
	}
	if _, ok := in.Vendors.Vendor(t); !ok {
		return nil, nil, simulator.Errorf(simulator.EINVALID, "no vendor configured for user_account_id_type: %s", t)
	}
	m, err := findMember(tx, in.ID, id, t)
	if err != nil {
		return nil, nil, simulator.Errorf(simulator.ENOTFOUND, "no user matches user_account_id")
	}
	for _, pid := range m.UserIDs {
		if raw, keys, err := userRecords.find(tx, in.ID, pid); err == nil {
			return raw, keys, nil
		}
	}
	return nil, nil, simulator.Errorf(simulator.ENOTFOUND, "no user matches user_account_id")
}

// findMember finds the member with a core or dbp id.
func findMember(tx *bbolt.Tx, instID, id string, t simulator.IDType) (*simulator.Member, error) {
	core := id
	if t == simulator.IDDBP {
		v := tx.Bucket(bMemberDBP).Get(cat(inst(instID), []byte(id)))
		if v == nil {
			return nil, simulator.Errorf(simulator.ENOTFOUND, "no member matches user_account_id")
		}
		core = string(v)
	}
	var m simulator.Member
	if err := getRecord(tx, bMembers, cat(inst(instID), []byte(core)), &m, "no member matches user_account_id"); err != nil {
		return nil, err
	}
	return &m, nil
}

// UserDetail resolves and returns a user for Get User Detail.
//
// The view is shared with every other reader of the same user in the same store state (a
// user asked for again is answered without a transaction, viewCache): callers must not modify
// it.
func (s *DB) UserDetail(ctx context.Context, instID, id string, t simulator.IDType) (*simulator.UserView, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	gen, key := s.gen.Load(), viewKey{inst: instID, id: id, t: t}
	if v := s.views.get(gen, key); v != nil {
		return v, nil
	}
	var v simulator.UserView
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		in, err := s.readPriced(tx, instID)
		if err != nil {
			return err
		}
		raw, keys, err := resolveUser(tx, in.Institution, id, t)
		if err != nil {
			return err
		}
		if !readView(raw, in.prices, &v) {
			var u simulator.User
			if err := decodeRecord(raw, &u); err != nil {
				return fmt.Errorf("decode user %q: %w", id, err)
			}
			v = u.View(in.Prices)
		}
		v.Prices = in.Prices
		v.CoreIDs, v.DBPIDs = []simulator.IdentityRef{}, []simulator.IdentityRef{}
		// The user's member_user entries: right after its own in user_keys where the store
		// keeps them there (memberKey: any institution's, each key's own after the prefix),
		// else in member_user (the prefix is the institution's). The keys are made on the
		// stack; the member's core id ends the key either way.
		var room, instRoom [96]byte
		var prefix, own, k, ref []byte
		c := keys
		if c != nil {
			prefix, own = memberKey(room[:0], v.PlatformID, nil, ""), appendInst(instRoom[:0], instID)
			k, ref = c.Next()
		} else {
			prefix = append(append(appendInst(room[:0], instID), v.PlatformID...), 0)
			c = tx.Bucket(bMemberUser).Cursor()
			k, ref = c.Seek(prefix)
		}
		for ; k != nil && bytes.HasPrefix(k, prefix); k, ref = c.Next() {
			core := k[len(prefix):]
			if !bytes.HasPrefix(core, own) {
				continue // another institution's member names the user
			}
			core = core[len(own):]
			var m simulator.Member
			if decodeMemberRef(ref, &m) {
				m.CoreID = string(core)
			} else if err := getRecord(tx, bMembers, cat(inst(instID), core), &m, "member not found"); err != nil {
				return fmt.Errorf("member index is stale: %w", err)
			}
			v.CoreIDs = append(v.CoreIDs, simulator.IdentityRef{ID: m.CoreID, Type: m.CoreIDType})
			if m.DBPID != nil {
				typ := "dbp"
				if in.Vendors.DBP != nil {
					typ = *in.Vendors.DBP
				}
				v.DBPIDs = append(v.DBPIDs, simulator.IdentityRef{ID: *m.DBPID, Type: typ})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	v.CheckPlain() // once here, not on every render of the shared view
	s.views.put(gen, key, &v)
	return &v, nil
}

// readView reads a stored user record as Get User Detail shows it into v (simulator.User.View)
// without decoding its amounts into decimals: its accounts as a list item reads them
// (decoder.userAccounts), valued and hinted at prices in int64 cents. It is false, v
// unspecified, where the whole user must be decoded: a record of the JSON form or cut short,
// or whatever userItem declines (an amount beyond int64, a product or status it does not know).
func readView(raw []byte, prices *priceTable, v *simulator.UserView) bool {
	if len(raw) == 0 || raw[0] != recordV1 {
		return false
	}
	d := decoder{b: raw[1:], version: raw[0]}
	d.share()
	v.PlatformID = d.str()
	d.raw(d.uvarint()) // institution
	v.Item.UserAccountID = d.str()
	created := d.time()
	v.Terms.AcceptedAt = d.time()
	v.Terms.Version = d.str()
	d.varint() // live sessions
	var basis simulator.CentsSum
	accounts, ok := d.userAccounts(&v.Item, prices, make([]simulator.AccountItem, 0, len(simulator.Products)), &basis, false)
	if !ok {
		return false
	}
	v.Item.Accounts = accounts
	v.History = d.history()
	hint, ok := basis.Cents()
	if d.err != nil || len(d.b) != 0 || !ok {
		return false
	}
	v.Seed, ok = simulator.HistorySeedOf(v.PlatformID, created, simulator.Cents(v.Item.Total.Coef), hint, time.Time{})
	return ok
}

// User returns a user as stored (control plane).
func (s *DB) User(ctx context.Context, platformID string) (*simulator.User, error) {
	var u simulator.User
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		return userRecords.get(tx, "", platformID, &u)
	})
	if err != nil {
		return nil, err
	}
	return &u, nil
}

// RevokeSessions ends every live session of every user the member names (decisions D5).
func (s *DB) RevokeSessions(ctx context.Context, instID, id string, t simulator.IDType) error {
	return s.update(ctx, func(w *writeTx) error {
		in, err := getInstitution(w.Tx, instID)
		if err != nil {
			return err
		}
		if in.Vendors.DBP == nil {
			return simulator.Errorf(simulator.EINVALID, "no digital banking platform configured")
		}
		var ids []string
		if t == simulator.IDPlatform {
			ids = []string{id}
		} else {
			if _, ok := in.Vendors.Vendor(t); !ok {
				return simulator.Errorf(simulator.EINVALID, "no vendor configured for user_account_id_type: %s", t)
			}
			m, err := findMember(w.Tx, instID, id, t)
			if err != nil {
				return simulator.Errorf(simulator.ENOTFOUND, "no member matches user_account_id")
			}
			ids = m.UserIDs
		}
		found := false
		for _, pid := range ids {
			u, err := getUser(w.Tx, instID, pid)
			if err != nil {
				continue
			}
			found = true
			if u.LiveSessions == 0 {
				continue
			}
			old := *u
			u.LiveSessions = 0
			if err := w.putUser(&old, u); err != nil {
				return err
			}
		}
		if !found {
			if t == simulator.IDPlatform {
				return simulator.Errorf(simulator.ENOTFOUND, "no member matches user_account_id")
			}
			return simulator.Errorf(simulator.ENOTFOUND, "no user record for this member")
		}
		return nil
	})
}

// ListUsers answers Get User List (decisions D6) from the user indexes with whole users (the
// control plane's list; the API's is ListUserItems). It is ENOTFOUND when the institution is
// unknown, an empty page when the created_at window matches nothing.
func (s *DB) ListUsers(ctx context.Context, instID string, f simulator.UserFilter) (*simulator.UserPage, error) {
	page := &simulator.UserPage{Users: []*simulator.User{}}
	return orNil(page, s.listUsers(ctx, instID, f, false, &page.Total, func(tx *bbolt.Tx, in *pricedInstitution, keys [][]byte, _ bool) (err error) {
		page.Prices = in.Prices
		page.Users, err = pageRecords(tx, bUsers, keys, instID, func(u *simulator.User) string { return u.InstitutionID }, "user")
		return err
	}))
}

// ListUserItems answers Get User List as ListUsers does, each user decoded only as far as its
// list item shows it (userItems): a page of whole users spent most of its time decoding
// fields no item shows and amounts into decimals.
func (s *DB) ListUserItems(ctx context.Context, instID string, f simulator.UserFilter) (*simulator.UserItemPage, error) {
	page := &simulator.UserItemPage{Items: []simulator.UserItem{}}
	return orNil(page, s.listUsers(ctx, instID, f, true, &page.Total, func(tx *bbolt.Tx, in *pricedInstitution, keys [][]byte, covered bool) (err error) {
		if covered {
			if page.Rows = coveredRows(keys, in); page.Rows == nil {
				page.Items, err = coveredItems(keys, in)
			}
		} else {
			page.Items, err = userItems(tx, keys, instID, in)
		}
		return err
	}))
}

// listUsers finds Get User List's page in the user indexes: the page costs O(offset + limit)
// entries plus, when a filter the index cannot answer is present, one pass over the chosen
// index's range to count matches. It stores the count of every match in *total and hands the
// page's keys in user_records to read, which decodes them — or, when items are wanted and the
// store's index values carry them (coversUsers), the page's index values, and covered.
func (s *DB) listUsers(ctx context.Context, instID string, f simulator.UserFilter, items bool, total *int, read func(tx *bbolt.Tx, in *pricedInstitution, keys [][]byte, covered bool) error) error {
	// The page's keys (or values) are read in the transaction, and what the page keeps is
	// copied from them (coveredRows, userItems): the walk's room goes back after it.
	room := takePageRoom()
	defer room.Release()
	return s.view(ctx, func(tx *bbolt.Tx) error {
		in, err := s.readPriced(tx, instID)
		if err != nil || f.MatchesNothing() {
			return err
		}
		reads := s.readsOf(tx)
		match, long := userMatcher(f), reads.userItems
		if f.UserAccountID != nil {
			if long && items {
				if v, n, ok := coveredByUAID(tx, instID, f, match); ok {
					*total = n
					return read(tx, in, v, true)
				}
			}
			keys, n, err := userByUAID(tx, instID, f, match)
			if err != nil {
				return err
			}
			*total = n
			return read(tx, in, keys, false)
		}
		filter, residual := userIndexFor(tx, reads, instID, f)
		sortKind := byte(sortCreated)
		if f.SortKey == simulator.SortUserAccountID {
			sortKind = sortUAID
			residual = residual || f.CreatedStart != nil || f.CreatedEnd != nil
		}
		prefix := cat(inst(instID), filter, []byte{sortKind})
		lo, hi := prefix, prefixEnd(prefix)
		if sortKind == sortCreated {
			if f.CreatedStart != nil {
				lo = cat(prefix, timeKey(*f.CreatedStart))
			}
			if f.CreatedEnd != nil {
				hi = cat(prefix, timeKey(*f.CreatedEnd))
			}
		}
		// A user's key in user_records: the institution, created_at (from the key, or the
		// summary of a user_account_id index) and platform id — or, covered, no key: the values
		// themselves.
		var keyOf func(dst, k, v []byte) []byte
		covered := long && items
		if !covered {
			head := inst(instID)
			keyOf = func(dst, k, v []byte) []byte {
				dst = append(dst, head...)
				if sortKind == sortCreated {
					return append(dst, k[len(prefix):]...)
				}
				return append(append(dst, v[:8]...), k[len(prefix)+summaryUAIDLen(v, long)+1:]...)
			}
		}
		keys, n, err := s.page(ctx, tx, indexPage{bucket: bUserIndex, prefix: prefix, lo: lo, hi: hi,
			byTime: sortKind == sortCreated, residual: residual, desc: f.Desc, offset: f.Offset, limit: f.Limit, keyOf: keyOf, room: room},
			func() ([]byte, func(v []byte) bool) { return userFilterKey(f), match })
		*total = n
		if err != nil {
			return err
		}
		return read(tx, in, keys, covered)
	})
}

// userByUAID is Get User List filtered by user_account_id: the one user it names, if it
// matches the other filters (count 1), its key in user_records when it is on the page (offset
// 0).
func userByUAID(tx *bbolt.Tx, instID string, f simulator.UserFilter, match func([]byte) bool) ([][]byte, int, error) {
	pid := tx.Bucket(bUserUAID).Get(cat(inst(instID), []byte(*f.UserAccountID)))
	if pid == nil {
		return nil, 0, nil
	}
	u, err := getUser(tx, instID, string(pid))
	if err != nil {
		return nil, 0, err
	}
	if !match(summarize(u).encode()) {
		return nil, 0, nil
	}
	if f.Offset == 0 && f.Limit > 0 {
		return [][]byte{cat(userKeyPrefix(u), pid)}, 1, nil
	}
	return nil, 1, nil
}

// coveredByUAID is userByUAID for a store whose user index values carry the items
// (coversUsers): the user's entry in the index of all users by user_account_id, found by one
// lookup, is both the summary the filters read and the page's item — its record, decoded whole
// to be matched and read again for its item, was most of such a page. ok is false when the
// entry is not there (a stale index), and the caller reads the record as before.
func coveredByUAID(tx *bbolt.Tx, instID string, f simulator.UserFilter, match func([]byte) bool) (values [][]byte, n int, ok bool) {
	pid := tx.Bucket(bUserUAID).Get(cat(inst(instID), []byte(*f.UserAccountID)))
	if pid == nil {
		return nil, 0, true
	}
	v := tx.Bucket(bUserIndex).Get(cat(inst(instID), []byte{kindAll, sortUAID}, []byte(*f.UserAccountID), []byte{0}, pid))
	switch {
	case v == nil:
		return nil, 0, false
	case !match(v):
		return nil, 0, true
	case f.Offset == 0 && f.Limit > 0:
		return [][]byte{v}, 1, true
	}
	return nil, 1, true
}

// userIndexFor chooses the narrowest user index for f: the KYC filter with the fewest entries
// (the counters say, through reads: nil reads them from tx), else a product filter, else all users. residual says whether f filters
// on more than the index answers.
func userIndexFor(tx *bbolt.Tx, reads *pageReads, instID string, f simulator.UserFilter) (filter []byte, residual bool) {
	filter, residual = []byte{kindAll}, len(f.KYC) > 1
	best := -1
	for _, p := range simulator.Products {
		if st, ok := f.KYC[p]; ok {
			cand := []byte{kindKYC, byte(simulator.ProductIndex(p)), byte(simulator.KYCIndex(st))}
			if n := reads.countOf(tx, bUserIndex, cat(inst(instID), cand, []byte{sortCreated})); best < 0 || n < best {
				filter, best = cand, n
			}
		}
	}
	if f.Product != nil {
		if filter[0] == kindKYC && filter[1] != byte(simulator.ProductIndex(*f.Product)) {
			residual = true
		} else if filter[0] == kindAll {
			filter = []byte{kindProduct, byte(simulator.ProductIndex(*f.Product))}
		}
	}
	return filter, residual
}

// userFilterKey names the filters userMatcher checks, for the count cache (pageFiltered).
func userFilterKey(f simulator.UserFilter) []byte {
	var k []byte
	for _, p := range simulator.Products {
		k = append(k, 0)
		if st, ok := f.KYC[p]; ok {
			k[len(k)-1] = byte(1 + simulator.KYCIndex(st))
		}
	}
	if f.Product != nil {
		k = append(k, byte(1+simulator.ProductIndex(*f.Product)))
	} else {
		k = append(k, 0)
	}
	for _, t := range []*time.Time{f.CreatedStart, f.CreatedEnd} {
		if t != nil {
			k = append(append(k, 1), timeKey(*t)...)
		} else {
			k = append(k, 0)
		}
	}
	return k
}

// userMatcher returns a predicate over raw index values (userSummary encodings) for the
// filters an index scan must check itself. It reads the bytes in place: a scan over a whole
// institution's index must not allocate per entry.
func userMatcher(f simulator.UserFilter) func(v []byte) bool {
	var want [4]byte // 0: any; 0xff: has an account; else 1 + KYC index
	for p, st := range f.KYC {
		want[simulator.ProductIndex(p)] = byte(1 + simulator.KYCIndex(st))
	}
	if f.Product != nil && want[simulator.ProductIndex(*f.Product)] == 0 {
		want[simulator.ProductIndex(*f.Product)] = 0xff
	}
	var lo, hi []byte
	if f.CreatedStart != nil {
		lo = timeKey(*f.CreatedStart)
	}
	if f.CreatedEnd != nil {
		hi = timeKey(*f.CreatedEnd)
	}
	return func(v []byte) bool {
		for i, w := range want {
			switch {
			case w == 0:
			case w == 0xff:
				if v[8+i] == 0 {
					return false
				}
			case v[8+i] != w:
				return false
			}
		}
		if lo != nil && bytes.Compare(v[:8], lo) < 0 || hi != nil && bytes.Compare(v[:8], hi) >= 0 {
			return false
		}
		return true
	}
}
