package bolt

import (
	"bytes"
	"context"

	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// deleteBatch bounds the keys one transaction of DeleteInstitution removes: a tenant of a
// large fixture set (100,000 users, 1,000,000 orders) is removed in many short transactions
// instead of one whose dirty pages would all be held in memory until it commits.
const deleteBatch = 20_000

// DeleteInstitution removes an institution and everything of it: its keys, signing secrets,
// subscriptions and their pending deliveries (first, in one transaction, so the tenant stops
// answering and nothing more is sent for it), then its users, members, orders, transactions,
// index entries and counters, events and deliveries with their logs, in transactions of at
// most deleteBatch keys each, and last the institution itself, in a transaction that first
// removes what a control-plane write made meanwhile (a key, a subscription, an event) and
// leaves the institution when there was such a thing to remove. It is ENOTFOUND when the
// institution does not exist. An interrupted delete leaves the institution listed; deleting it
// again finishes the work. Once the institution is gone, its own virtual clock goes too.
func (s *DB) DeleteInstitution(ctx context.Context, id string) error {
	if err := s.deleteInstitution(ctx, id, deleteBatch); err != nil {
		return err
	}
	s.Clock.ForgetInstitution(id)
	return nil
}

// deleteInstitution is DeleteInstitution in transactions of at most batch keys.
func (s *DB) deleteInstitution(ctx context.Context, id string, batch int) error {
	d, err := s.startDelete(ctx, id)
	if err != nil {
		return err
	}
	for {
		if done, err := d.step(ctx, batch); err != nil || done {
			return err
		}
	}
}

// tenantDelete is a DeleteInstitution under way: the institution's events still to delete.
type tenantDelete struct {
	s      *DB
	id     string
	events [][]byte
}

// startDelete removes what lets the institution be reached or sent to, in one transaction,
// then lists its events (a read transaction).
func (s *DB) startDelete(ctx context.Context, id string) (*tenantDelete, error) {
	err := s.update(ctx, func(w *writeTx) error {
		if _, err := getInstitution(w.Tx, id); err != nil {
			return err
		}
		return w.deleteAccess(id)
	})
	if err != nil {
		return nil, err
	}
	d := &tenantDelete{s: s, id: id}
	err = s.view(ctx, func(tx *bbolt.Tx) (err error) {
		d.events, err = tenantEvents(tx, id)
		return err
	})
	return d, err
}

// tenantEvents lists the ids of an institution's events. Events carry their institution in
// their JSON: a walk of the whole bucket.
func tenantEvents(tx *bbolt.Tx, id string) ([][]byte, error) {
	var events [][]byte
	needle := []byte(`"institution_id":"` + id + `"`)
	err := tx.Bucket(bEvents).ForEach(func(k, v []byte) error {
		if !bytes.Contains(v, needle) {
			return nil
		}
		var e simulator.Event
		if err := decodeRecord(v, &e); err != nil {
			return err
		}
		if e.InstitutionID == id {
			events = append(events, bytes.Clone(k))
		}
		return nil
	})
	return events, err
}

// step runs one transaction of at most batch keys and reports whether the delete is done.
//
// A write may run twice (DB.update): each transaction starts from the events left after the
// last one that committed, and what it leaves counts only once it has committed. A rerun that
// started from the list its rolled-back run had emptied left the events and their deliveries
// behind, listed in the delivery log after the institution was gone.
func (d *tenantDelete) step(ctx context.Context, batch int) (bool, error) {
	var (
		left [][]byte
		done bool
	)
	err := d.s.update(ctx, func(w *writeTx) error {
		done = false
		budget := batch
		var err error
		if left, err = w.deleteEvents(d.events, &budget); err != nil || budget == 0 {
			return err
		}
		if err := w.deleteTenantRecords(inst(d.id), &budget); err != nil || budget == 0 {
			return err
		}
		// Nothing listed is left. The control plane reaches a tenant by its ids, not its
		// revoked keys: a write of it between this delete's transactions may have issued a
		// key, made a subscription or emitted an event. This transaction finds them again
		// and removes the institution only when there is none.
		if err := w.deleteAccess(d.id); err != nil {
			return err
		}
		if left, err = tenantEvents(w.Tx, d.id); err != nil || len(left) > 0 {
			return err
		}
		done = true
		if err := w.del(bPriceVersions, []byte(d.id)); err != nil {
			return err
		}
		return w.del(bInstitutions, []byte(d.id))
	})
	if err == nil {
		d.events = left
	}
	return done, err
}

// deleteTenantRecords removes up to *budget keys of an institution's users, members, orders,
// transactions, index entries and counters (in the prefix in), lowering the budget by what it
// removed.
func (w *writeTx) deleteTenantRecords(in []byte, budget *int) error {
	for _, c := range clusteredRecords {
		if err := w.deleteClustered(c, in, budget); err != nil || *budget == 0 {
			return err
		}
	}
	// A member_user entry's twin beside its user in user_keys (metaUsersByID; absent in a
	// store written before).
	twin := func(k []byte) error {
		pid, core, _ := bytes.Cut(k[len(in):], []byte{0})
		return w.del(bUserKeys, memberKey(nil, string(pid), in, string(core)))
	}
	for _, b := range [][]byte{bUserUAID, bUserIndex, bMembers, bMemberDBP, bMemberUser, bOrderIndex} {
		var each func([]byte) error
		if bytes.Equal(b, bMemberUser) {
			each = twin
		}
		if err := w.deletePrefix(b, in, budget, each); err != nil || *budget == 0 {
			return err
		}
	}
	for _, b := range [][]byte{bUserIndex, bOrderIndex} {
		for _, p := range append(timeCountPrefixes(b, in), countKey(b, in)) {
			if err := w.deletePrefix(bCounts, p, budget, nil); err != nil || *budget == 0 {
				return err
			}
		}
	}
	return nil
}

// del removes a key, marking the bucket's read cache stale at commit.
func (w *writeTx) del(bucket, key []byte) error {
	if _, cached := w.db.caches[string(bucket)]; cached {
		if w.written == nil {
			w.written = map[string]bool{}
		}
		w.written[string(bucket)] = true
	}
	return w.Bucket(bucket).Delete(key)
}

// deleteAccess removes what lets an institution be reached or be sent to: its keys, signing
// secrets and subscriptions, and its pending deliveries' outbox entries.
func (w *writeTx) deleteAccess(id string) error {
	var hashes, keyIDs [][]byte
	err := eachJSON(w.Bucket(bKeys), func(k []byte, key *simulator.APIKey) error {
		if key.InstitutionID == id {
			hashes, keyIDs = append(hashes, bytes.Clone(k)), append(keyIDs, []byte(key.ID))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := range hashes {
		if err := w.del(bKeys, hashes[i]); err != nil {
			return err
		}
		if err := w.del(bKeyIDs, keyIDs[i]); err != nil {
			return err
		}
	}
	if err := w.del(bSecrets, []byte(id)); err != nil {
		return err
	}
	in := inst(id)
	subs := map[string]bool{}
	unlimited := -1
	err = w.deletePrefix(bSubsByInst, in, &unlimited, func(k []byte) error {
		sub := k[len(in)+8:]
		subs[string(sub)] = true
		return w.del(bSubs, sub)
	})
	if err != nil || len(subs) == 0 {
		return err
	}
	var pending [][]byte
	err = w.Bucket(bOutbox).ForEach(func(k, v []byte) error {
		if subs[string(v)] {
			pending = append(pending, bytes.Clone(k))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range pending {
		if err := w.del(bOutbox, k); err != nil {
			return err
		}
	}
	return nil
}

// deletePrefix removes up to *budget keys (-1: no limit) of bucket under prefix, calling each
// (when given) with every key before it goes; it lowers the budget by what it removed.
func (w *writeTx) deletePrefix(bucket, prefix []byte, budget *int, each func(k []byte) error) error {
	var keys [][]byte
	c := w.Bucket(bucket).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(keys) != *budget; k, _ = c.Next() {
		keys = append(keys, bytes.Clone(k))
	}
	for _, k := range keys {
		if each != nil {
			if err := each(k); err != nil {
				return err
			}
		}
		if err := w.del(bucket, k); err != nil {
			return err
		}
	}
	if *budget > 0 {
		*budget -= len(keys)
	}
	return nil
}

// deleteClustered removes an institution's user or order records with their by-id keys (and,
// for orders, their transactions).
func (w *writeTx) deleteClustered(c clustered, in []byte, budget *int) error {
	records := w.Bucket(c.records)
	return w.deletePrefix(c.records, in, budget, func(k []byte) error {
		id := k[len(in)+8:]
		if bytes.Equal(c.records, bOrders) {
			var o simulator.Order
			if err := decodeRecord(records.Get(k), &o); err != nil {
				return err
			}
			if err := w.del(bTransactions, []byte(o.TransactionID)); err != nil {
				return err
			}
		}
		return w.del(c.keys, id)
	})
}

// deleteEvents removes events (and their deliveries) from the front of ids within the budget,
// and returns the ids left.
func (w *writeTx) deleteEvents(ids [][]byte, budget *int) ([][]byte, error) {
	for len(ids) > 0 && *budget > 0 {
		id := ids[0]
		prefix := cat(id, []byte{0})
		err := w.deletePrefix(bDeliveryEvent, prefix, budget, func(k []byte) error {
			return w.deleteDelivery(k[len(prefix):])
		})
		if err != nil {
			return nil, err
		}
		if *budget == 0 {
			return ids, nil // the event's deliveries go on in the next transaction
		}
		if err := w.del(bEvents, id); err != nil {
			return nil, err
		}
		*budget--
		ids = ids[1:]
	}
	return ids, nil
}

// deleteDelivery removes a delivery's record, its entry in the delivery log's index and its
// log, walked as followLog reads it.
func (w *writeTx) deleteDelivery(id []byte) error {
	var d simulator.Delivery
	if err := getRecord(w.Tx, bDeliveries, id, &d, "delivery not found"); err != nil {
		if simulator.IsNotFound(err) {
			return nil
		}
		return err
	}
	log := w.Bucket(bDeliveryLog)
	for d.Status == simulator.DeliveryPending {
		key := logKey(d.NextAttemptAt, d.ID)
		raw := log.Get(key)
		if raw == nil {
			break
		}
		var st deliveryStep
		if err := decodeStep(raw, &st); err != nil {
			return err
		}
		if err := w.del(bDeliveryLog, key); err != nil {
			return err
		}
		if st.Status == simulator.DeliveryPending && !st.NextAttemptAt.After(d.NextAttemptAt) {
			break // a damaged chain: what follows cannot be reached
		}
		d.SetState(st.DeliveryState)
	}
	if err := w.del(bDeliveryTime, deliveryTimeKey(&d)); err != nil {
		return err
	}
	return w.del(bDeliveries, id)
}
