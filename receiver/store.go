package receiver

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"go.etcd.io/bbolt"
)

// Buckets, created at open. Sequence keys are 8-byte big-endian, so they sort in order.
var (
	bEvents   = []byte("events")   // event id → Record JSON (without the body): the dedupe key
	bBodies   = []byte("bodies")   // event id → body bytes exactly as received
	bQueue    = []byte("queue")    // seq → event id: acknowledged, not yet finished
	bDone     = []byte("done")     // seq → event id: records in the order they were finished
	bArrivals = []byte("arrivals") // seq → Arrival JSON: every delivery, newest last

	allBuckets = [][]byte{bEvents, bBodies, bQueue, bDone, bArrivals}
)

func seqKey(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }

// store is the receiver's bbolt file.
type store struct {
	db          *bbolt.DB
	maxArrivals uint64
}

func openStore(path string, maxArrivals int) (*store, error) {
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("receiver: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, b := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("receiver: create buckets in %s: %w", path, err)
	}
	return &store{db: db, maxArrivals: uint64(maxArrivals)}, nil
}

func (s *store) close() error { return s.db.Close() }

func putJSON(b *bbolt.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, data)
}

// putArrival appends a to the arrival log, setting its Seq, and drops the entry that falls
// out of the bounded window.
func (s *store) putArrival(tx *bbolt.Tx, a *Arrival) error {
	b := tx.Bucket(bArrivals)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	a.Seq = seq
	if seq > s.maxArrivals {
		if err := b.Delete(seqKey(seq - s.maxArrivals)); err != nil {
			return err
		}
	}
	return putJSON(b, seqKey(seq), a)
}

// recordArrival logs a delivery that stored nothing else.
func (s *store) recordArrival(a *Arrival) error {
	// Batch may run the function again; putArrival sets every field it writes.
	return s.db.Batch(func(tx *bbolt.Tx) error { return s.putArrival(tx, a) })
}

// accept stores a new event — its record, body, and a queue entry when rec is queued or a done
// entry otherwise — unless its event id is already stored, and logs the arrival; all in one
// transaction, so of concurrent deliveries of one event exactly one is accepted. a's verdict
// is set accordingly.
func (s *store) accept(rec Record, body []byte, a *Arrival) error {
	id := []byte(rec.EventID)
	// Batch coalesces concurrent deliveries into one commit and may run this function again
	// after a failed batch: it decides from the transaction alone and sets every field of a it
	// depends on.
	return s.db.Batch(func(tx *bbolt.Tx) error {
		events := tx.Bucket(bEvents)
		if events.Get(id) != nil {
			a.Verdict, a.Reason = VerdictDuplicate, "already received; not processed again"
			return s.putArrival(tx, a)
		}
		a.Verdict, a.Reason = VerdictAccepted, acceptReason(rec)
		if err := putJSON(events, id, rec); err != nil {
			return err
		}
		if err := tx.Bucket(bBodies).Put(id, body); err != nil {
			return err
		}
		log := bDone
		if rec.State == StateQueued {
			log = bQueue
		}
		if err := appendSeq(tx.Bucket(log), id); err != nil {
			return err
		}
		return s.putArrival(tx, a)
	})
}

func acceptReason(rec Record) string {
	if rec.State == StateQueued {
		return "queued for processing"
	}
	return "not processed: " + rec.Reason
}

func appendSeq(b *bbolt.Bucket, value []byte) error {
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	return b.Put(seqKey(seq), value)
}

// head returns the oldest queue entry.
func (s *store) head() (seq []byte, id string, ok bool, err error) {
	err = s.db.View(func(tx *bbolt.Tx) error {
		k, v := tx.Bucket(bQueue).Cursor().First()
		if k != nil {
			seq, id, ok = append([]byte(nil), k...), string(v), true
		}
		return nil
	})
	return seq, id, ok, err
}

// record reads one event's record, with its body when withBody.
func (s *store) record(id string, withBody bool) (Record, error) {
	var rec Record
	err := s.db.View(func(tx *bbolt.Tx) error {
		var err error
		rec, err = readRecord(tx, []byte(id), withBody)
		return err
	})
	return rec, err
}

func readRecord(tx *bbolt.Tx, id []byte, withBody bool) (Record, error) {
	var rec Record
	data := tx.Bucket(bEvents).Get(id)
	if data == nil {
		return rec, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, fmt.Errorf("receiver: decode record %s: %w", id, err)
	}
	if withBody {
		rec.Body = append(json.RawMessage(nil), tx.Bucket(bBodies).Get(id)...)
	}
	return rec, nil
}

// save writes rec (its body is kept apart and left alone); when finished, it also moves the
// event from the queue (entry seq) to the done log, in the same transaction.
func (s *store) save(rec Record, seq []byte, finished bool) error {
	rec.Body = nil
	return s.db.Update(func(tx *bbolt.Tx) error {
		if err := putJSON(tx.Bucket(bEvents), []byte(rec.EventID), rec); err != nil {
			return err
		}
		if !finished {
			return nil
		}
		if err := tx.Bucket(bQueue).Delete(seq); err != nil {
			return err
		}
		return appendSeq(tx.Bucket(bDone), []byte(rec.EventID))
	})
}

// dropQueued removes a queue entry whose record cannot be read, so it cannot wedge the queue.
func (s *store) dropQueued(seq []byte) error {
	return s.db.Update(func(tx *bbolt.Tx) error { return tx.Bucket(bQueue).Delete(seq) })
}

// arrivals lists the arrival log, oldest first, keeping those keep accepts.
func (s *store) arrivals(keep func(*Arrival) bool) ([]Arrival, error) {
	out := []Arrival{}
	err := s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bArrivals).ForEach(func(_, v []byte) error {
			var a Arrival
			if err := json.Unmarshal(v, &a); err != nil {
				return fmt.Errorf("receiver: decode arrival: %w", err)
			}
			if keep(&a) {
				out = append(out, a)
			}
			return nil
		})
	})
	return out, err
}

// records lists finished records in the order they finished, then queued ones in queue
// order, keeping those keep accepts; bodies included.
func (s *store) records(keep func(*Record) bool) ([]Record, error) {
	out := []Record{}
	err := s.db.View(func(tx *bbolt.Tx) error {
		for _, log := range [][]byte{bDone, bQueue} {
			err := tx.Bucket(log).ForEach(func(_, id []byte) error {
				rec, err := readRecord(tx, id, true)
				if err != nil {
					return err
				}
				if keep(&rec) {
					out = append(out, rec)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}
