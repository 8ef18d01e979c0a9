package bolt

import (
	"fmt"
	"strconv"

	"go.etcd.io/bbolt"
)

// newMarks are the marks of what a store keeps since a version of the format (since), set on a
// store created or emptied since (markNew); a store written before lacks them and is read as
// before. Format 6 came with two: user_values (a user's account values kept at a price version)
// and order_plain (covered order values note strings that need no JSON escaping); format 7 with
// minute_counters (the whole lists count their entries per minute: days.go).
var newMarks = []struct {
	key   []byte
	since int
}{{metaDays, 1}, {metaUserItems, 2}, {metaOrderItems, 3}, {metaHours, 4}, {metaUsersByID, 5}, {metaUserValues, 6}, {metaOrderPlain, 6}, {metaMinutes, 7}}

// storeFormat is the format of the stores this code creates: the format of newMarks' latest
// mark (decisions D17). A store keeps the format it was created or emptied with (metaFormat),
// and one of a later format is refused (checkFormat): this code would write to it without
// keeping what that format keeps — an order written without the list item or the hour counter
// its readers trust — and the later code would read wrong pages from it. A store from before the
// format was kept has none, and is read as its marks say.
const storeFormat = 7

// metaFormat keeps a store's format, in decimal.
var metaFormat = []byte("format")

// markNew marks a store created or emptied: it keeps everything newMarks names.
func markNew(tx *bbolt.Tx) error {
	meta := tx.Bucket(bMeta)
	for _, mark := range newMarks {
		if err := meta.Put(mark.key, []byte("1")); err != nil {
			return err
		}
	}
	return meta.Put(metaFormat, []byte(strconv.Itoa(storeFormat)))
}

// checkFormat refuses the store (or snapshot) named what, whose meta bucket is meta, when a
// later partnersim wrote it.
func checkFormat(meta *bbolt.Bucket, what string) error {
	if meta == nil {
		return nil
	}
	v := meta.Get(metaFormat)
	if v == nil {
		return nil
	}
	if n, err := strconv.Atoi(string(v)); err != nil || n > storeFormat {
		return fmt.Errorf("%s was written by a newer partnersim (store format %q; this one reads formats up to %d): run that version or a later one, or start from a new store (delete the file, or pass --db with another)", what, v, storeFormat)
	}
	return nil
}
