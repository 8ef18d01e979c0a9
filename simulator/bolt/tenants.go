package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// Authenticate returns the live key whose plaintext hashes to a stored key; an unknown or
// revoked key is EUNAUTHORIZED "Invalid API key".
//
// Every request authenticates, so a plaintext found before is answered from keyMemos — its
// hash and key, one lookup and no lock — while the keys cache has not been cleared since
// (readCache.generation). Otherwise the plaintext is hashed (HashKey: a SHA-256, or the hash
// remembered) and its key read from the keys cache, or from the store in a read transaction
// (bbolt's transaction start takes a lock shared by all readers).
func (s *DB) Authenticate(ctx context.Context, plaintext string) (*simulator.APIKey, error) {
	keys := s.keyCache
	gen := keys.generation() // before the key is read: a clearing after it makes the memo stale
	memo, known := s.keyMemos.get(plaintext)
	if known && memo.gen == gen {
		return liveKey(memo.key)
	}
	hash := memo.hash
	if !known {
		hash = simulator.HashKey(plaintext)
	}
	var k *simulator.APIKey
	if v, ok := keys.peek(hash); ok {
		k = v.(*simulator.APIKey)
	} else {
		err := s.view(ctx, func(tx *bbolt.Tx) error {
			v, err := keys.get(tx, hash, func() (any, error) {
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
		if simulator.IsNotFound(err) {
			return nil, simulator.Errorf(simulator.EUNAUTHORIZED, "Invalid API key")
		} else if err != nil {
			return nil, err
		}
	}
	s.keyMemos.put(plaintext, keyMemo{hash: hash, key: k, gen: gen})
	return liveKey(k)
}

// liveKey is k, or EUNAUTHORIZED "Invalid API key" when it is revoked.
func liveKey(k *simulator.APIKey) (*simulator.APIKey, error) {
	if k.RevokedAt != nil {
		return nil, simulator.Errorf(simulator.EUNAUTHORIZED, "Invalid API key")
	}
	return k, nil
}

// keyMemo is what Authenticate found for a plaintext: its hash and its stored key, as the keys
// cache held it at generation gen.
type keyMemo struct {
	hash string
	key  *simulator.APIKey
	gen  uint64
}

// keyMemos remembers, by plaintext, the keys Authenticate found (keyMemo). A hash is a pure
// function of its plaintext, and a key is used only while the keys cache is at the generation
// it was found at. It is read without a lock, from a map replaced whole when an entry is added
// or renewed: only plaintexts of stored keys are kept (an unknown one is hashed again on each
// ask, as it is then looked up in a transaction anyway), so it changes about once a key
// and a write of the keys. At most keyHashMax entries, then it starts again empty.
type keyMemos struct {
	mu sync.Mutex // held by writers
	m  atomic.Pointer[map[string]keyMemo]
}

const keyHashMax = 1024

func (c *keyMemos) get(plaintext string) (keyMemo, bool) {
	if m := c.m.Load(); m != nil {
		memo, ok := (*m)[plaintext]
		return memo, ok
	}
	return keyMemo{}, false
}

func (c *keyMemos) put(plaintext string, memo keyMemo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var next map[string]keyMemo
	if m := c.m.Load(); m != nil && len(*m) < keyHashMax {
		if old, ok := (*m)[plaintext]; ok && old == memo {
			return
		}
		next = maps.Clone(*m)
	}
	if next == nil {
		next = map[string]keyMemo{}
	}
	next[strings.Clone(plaintext)] = memo
	c.m.Store(&next)
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
