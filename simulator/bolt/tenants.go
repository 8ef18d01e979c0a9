package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"sync"

	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// Authenticate returns the live key whose plaintext hashes to a stored key; an unknown or
// revoked key is EUNAUTHORIZED "Invalid API key".
func (s *DB) Authenticate(ctx context.Context, plaintext string) (*simulator.APIKey, error) {
	var k *simulator.APIKey
	hash := s.keyHashes.hash(plaintext)
	// A cached key needs no read transaction (every request authenticates; bbolt's
	// transaction start takes a lock shared by all readers). The cache is cleared when a write
	// to keys commits, as for a cached read inside a transaction.
	if v, ok := s.caches[string(bKeys)].peek(hash); ok {
		if k = v.(*simulator.APIKey); k.RevokedAt != nil {
			return nil, simulator.Errorf(simulator.EUNAUTHORIZED, "Invalid API key")
		}
		return k, nil
	}
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		v, err := s.caches[string(bKeys)].get(tx, hash, func() (any, error) {
			var k simulator.APIKey
			if err := getRecord(tx, bKeys, []byte(hash), &k, "Invalid API key"); err != nil {
				return nil, err
			}
			return &k, nil
		})
		if err == nil {
			k = v.(*simulator.APIKey)
		}
		return err
	})
	if simulator.IsNotFound(err) || err == nil && k.RevokedAt != nil {
		return nil, simulator.Errorf(simulator.EUNAUTHORIZED, "Invalid API key")
	} else if err != nil {
		return nil, err
	}
	return k, nil
}

// keyHashes remembers the hashes of the plaintexts it was asked about: HashKey is a SHA-256 and
// every request authenticates. A hash is a pure function of its plaintext, so nothing here is
// ever stale; at most keyHashMax entries, then it starts again empty.
type keyHashes struct {
	mu sync.RWMutex
	m  map[string]string
}

const keyHashMax = 1024

func (c *keyHashes) hash(plaintext string) string {
	c.mu.RLock()
	h, ok := c.m[plaintext]
	c.mu.RUnlock()
	if ok {
		return h
	}
	h = simulator.HashKey(plaintext)
	c.mu.Lock()
	if c.m == nil || len(c.m) >= keyHashMax {
		c.m = map[string]string{}
	}
	c.m[strings.Clone(plaintext)] = h
	c.mu.Unlock()
	return h
}

// putInstitution writes an institution and keeps the version of its prices (priceVersion).
// A build's or a load's writer registers it for valuing its users (writeTx.pricing); any other
// forgets what it knew of it.
func (w *writeTx) putInstitution(in *simulator.Institution) error {
	version, changed, err := w.nextPriceVersion(in)
	if err != nil {
		return err
	}
	if changed {
		if err := w.put(bPriceVersions, []byte(in.ID), binary.AppendUvarint(nil, version)); err != nil {
			return err
		}
	}
	if w.Tx == nil || w.bulk != nil {
		if w.prices != nil {
			w.prices[in.ID] = &pricedInstitution{in, newPriceTable(in.Prices), version, nil}
		}
	} else {
		delete(w.prices, in.ID)
	}
	return w.putRecord(bInstitutions, []byte(in.ID), in)
}

// putKey stores a key by its hash.
func (w *writeTx) putKey(k *simulator.APIKey) error {
	if err := w.put(bKeyIDs, []byte(k.ID), []byte(k.Hash)); err != nil {
		return err
	}
	return w.putRecord(bKeys, []byte(k.Hash), k)
}

// memberKey appends to dst the key in user_keys of a member_user entry (metaUsersByID): the
// user's platform id, a 0, the institution with its separator (in) and the member's core id —
// after the user's own key and before any other's (ids never contain NUL).
func memberKey(dst []byte, pid string, in []byte, core string) []byte {
	return append(append(append(append(dst, pid...), 0), in...), core...)
}

// putMember stores a member and its dbp and per-user indexes (and, where the store keeps
// them, the per-user entries beside each user in user_keys).
func (w *writeTx) putMember(m *simulator.Member) error {
	in := inst(m.InstitutionID)
	if m.DBPID != nil {
		if err := w.put(bMemberDBP, cat(in, []byte(*m.DBPID)), []byte(m.CoreID)); err != nil {
			return err
		}
	}
	ref, beside := encodeMemberRef(m), w.keeps(metaUsersByID)
	for _, pid := range m.UserIDs {
		if err := w.put(bMemberUser, cat(in, []byte(pid), []byte{0}, []byte(m.CoreID)), ref); err != nil {
			return err
		}
		if beside {
			if err := w.put(bUserKeys, memberKey(nil, pid, in, m.CoreID), ref); err != nil {
				return err
			}
		}
	}
	return w.putRecord(bMembers, cat(in, []byte(m.CoreID)), m)
}

// putTransaction stores a transaction and its orders.
func (w *writeTx) putTransaction(t *simulator.Transaction, orders []*simulator.Order) error {
	for _, o := range orders {
		if err := w.putOrder(nil, o); err != nil {
			return err
		}
	}
	return w.putRecord(bTransactions, []byte(t.ID), t)
}

// Institutions lists every institution with its user count.
func (s *DB) Institutions(ctx context.Context) ([]*simulator.Institution, []int, error) {
	var (
		list   []*simulator.Institution
		counts []int
	)
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		return eachJSON(tx.Bucket(bInstitutions), func(_ []byte, in *simulator.Institution) error {
			list = append(list, in)
			counts = append(counts, countOf(tx, bUserIndex, cat(inst(in.ID), []byte{kindAll, sortCreated})))
			return nil
		})
	})
	return list, counts, err
}

// Keys lists the keys of an institution (hashes and prefixes only; plaintexts are never
// stored); ENOTFOUND when the institution is unknown.
func (s *DB) Keys(ctx context.Context, instID string) ([]*simulator.APIKey, error) {
	var list []*simulator.APIKey
	err := s.view(ctx, func(tx *bbolt.Tx) error {
		if _, err := s.readInstitution(tx, instID); err != nil {
			return err
		}
		return eachJSON(tx.Bucket(bKeys), func(_ []byte, k *simulator.APIKey) error {
			if k.InstitutionID == instID {
				list = append(list, k)
			}
			return nil
		})
	})
	slices.SortFunc(list, func(a, b *simulator.APIKey) int { return bytes.Compare([]byte(a.ID), []byte(b.ID)) })
	return list, err
}
