package bolt

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/partnersim/partnersim/simulator"
)

// Buckets, created at open. Keys are composite byte strings; integers and times are big-endian
// so that keys sort. "inst" below is the institution id followed by a 0x00 separator (ids never
// contain NUL).
var (
	bMeta          = []byte("meta")           // name → value
	bInstitutions  = []byte("institutions")   // institution id → Institution JSON
	bPriceVersions = []byte("price_versions") // institution id → uvarint version of its prices (prices.go)
	bKeys          = []byte("keys")           // sha256 hex of key → APIKey JSON
	bKeyIDs        = []byte("key_ids")        // key id → sha256 hex
	bUsers         = []byte("user_records")   // inst + created_at timeKey + platform id → User (codec.go); clustered.go
	bUserKeys      = []byte("user_keys")      // platform id → inst + created_at timeKey, its key in user_records less the id (+ the record: metaUsersByID)
	bUserUAID      = []byte("user_uaid")      // inst + user_account_id → platform id
	bUserIndex     = []byte("user_index")     // see userIndexKey
	bMembers       = []byte("members")        // inst + core id → Member JSON
	bMemberDBP     = []byte("member_dbp")     // inst + dbp id → core id
	bMemberUser    = []byte("member_user")    // inst + platform id + 0 + core id → memberRef (codec.go); empty before it
	bOrders        = []byte("order_records")  // inst + placed_at timeKey + order id → Order (codec.go); clustered.go
	bOrderKeys     = []byte("order_keys")     // order id → inst + placed_at timeKey, its key in order_records less the id
	bOrderIndex    = []byte("order_index")    // see orderIndexKey
	bTransactions  = []byte("transactions")   // transaction id → Transaction (codec.go)
	bCounts        = []byte("counts")         // index prefix → uint64 count of entries under it
	bSubs          = []byte("subscriptions")  // subscription id → Subscription JSON
	bSubsByInst    = []byte("subs_by_inst")   // inst + created_at + subscription id → nil
	bSecrets       = []byte("secrets")        // institution id → SigningSecrets JSON
	bEvents        = []byte("events")         // event id → Event JSON
	bDeliveries    = []byte("deliveries")     // delivery id → Delivery as created (codec.go)
	bDeliveryEvent = []byte("delivery_event") // event id + 0 + delivery id → nil
	bOutbox        = []byte("outbox")         // next attempt (virtual time) + delivery id → subscription id
	bDeliveryLog   = []byte("delivery_log")   // slot (virtual time) + delivery id → deliveryStep (webhooks.go)
	bDeliveryTime  = []byte("delivery_time")  // created_at timeKey + delivery id → deliveryIndexEntry (deliveryindex.go)
	bSnapshots     = []byte("snapshots")      // reserved for control-plane snapshots
	bScenarioRuns  = []byte("scenario_runs")  // run id → ScenarioRun JSON (scenarioruns.go)

	allBuckets = [][]byte{bMeta, bInstitutions, bPriceVersions, bKeys, bKeyIDs, bUsers, bUserKeys, bUserUAID, bUserIndex,
		bMembers, bMemberDBP, bMemberUser, bOrders, bOrderKeys, bOrderIndex, bTransactions, bCounts, bSubs,
		bSubsByInst, bSecrets, bEvents, bDeliveries, bDeliveryEvent, bOutbox, bDeliveryLog, bDeliveryTime, bSnapshots, bScenarioRuns}
)

// The buckets of user and order records in stores written before they were clustered (id →
// record). Open and RestoreSnapshot move their records (clustered.migrate).
var (
	bLegacyUsers  = []byte("users")
	bLegacyOrders = []byte("orders")
)

// Meta keys.
var (
	metaFixtures = []byte("fixtures_loaded") // present once a fixture set is wholly loaded
	metaToken    = []byte("sandbox_token")
	metaClock    = []byte("clock") // simulator.ClockState as JSON
)

// inst returns the institution id with its separator, the prefix of every tenant-scoped key.
func inst(id string) []byte { return appendInst(make([]byte, 0, len(id)+1), id) }

// appendInst appends inst(id) to dst: a hot read builds its key in room on the stack.
func appendInst(dst []byte, id string) []byte { return append(append(dst, id...), 0) }

// cat concatenates byte slices into a new slice.
func cat(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// timeKey encodes t as 8 big-endian bytes of UnixNano shifted so that times before 1970 still
// sort first.
//
// Instants outside simulator's storable range (which nothing stored has) clamp to the lowest or
// highest key, so a filter bound beyond it includes or excludes everything as it should:
// without the clamp, UnixNano wrapped year 3000 below 1970 and inverted the filter.
func timeKey(t time.Time) []byte { return appendTimeKey(make([]byte, 0, 8), t) }

// appendTimeKey appends timeKey(t) to dst: a page's bounds are made in one allocation.
func appendTimeKey(dst []byte, t time.Time) []byte {
	switch {
	case t.Before(simulator.FirstStorableTime):
		return binary.BigEndian.AppendUint64(dst, 0)
	case t.After(simulator.LastStorableTime):
		return binary.BigEndian.AppendUint64(dst, math.MaxUint64)
	}
	return binary.BigEndian.AppendUint64(dst, uint64(t.UnixNano())^(1<<63))
}

// timeFromKey decodes timeKey.
func timeFromKey(b []byte) time.Time {
	return time.Unix(0, int64(binary.BigEndian.Uint64(b)^(1<<63))).UTC()
}

func u64(n uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	return b[:]
}

// Index kinds of user_index and order_index keys.
const (
	kindAll      = 'A' // no filter
	kindProduct  = 'P' // + product byte
	kindKYC      = 'K' // + product byte + status byte
	kindUser     = 'U' // + user_account_id + 0 (orders)
	kindStatus   = 'S' // + status byte (orders)
	kindStatSide = 'X' // + status byte + side byte (orders)
	kindProdSide = 'Y' // + product byte + side byte (orders)

	sortCreated = 'c' // + timeKey
	sortUAID    = 'u' // + user_account_id + 0
)

// User index key: inst | kind | filter | sort | sortbytes | platform id.
// Value: userSummary (created timeKey, one status byte per product, user_account_id).
//
// Order index key: inst | kind | filter | 'c' | placed_at timeKey | order id.
// Value: orderSummary (product byte, side byte, status byte, user_account_id); in a store that
// covers orders (metaOrderItems), every index but the index of all orders keeps orderItemValue.
