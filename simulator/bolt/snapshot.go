package bolt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/bbolt"

	"github.com/partnersim/partnersim/simulator"
)

// SaveSnapshot writes a consistent copy of the whole store to path (a read transaction's view;
// writers are not blocked).
func (s *DB) SaveSnapshot(ctx context.Context, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	err := s.view(ctx, func(tx *bbolt.Tx) error { return tx.CopyFile(tmp, 0o600) })
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("snapshot: %w", err)
	}
	return os.Rename(tmp, path)
}

// RestoreSnapshot replaces the store's contents with a snapshot's, in one transaction.
func (s *DB) RestoreSnapshot(ctx context.Context, path string) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return simulator.Errorf(simulator.ENOTFOUND, "no snapshot named %s", filepath.Base(path[:len(path)-len(filepath.Ext(path))]))
	}
	src, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return fmt.Errorf("open snapshot: %w", err)
	}
	defer src.Close()
	return src.View(func(stx *bbolt.Tx) error {
		if err := checkFormat(stx.Bucket(bMeta), "snapshot "+filepath.Base(path)); err != nil {
			return simulator.Errorf(simulator.ECONFLICT, "%v", err)
		}
		return s.update(ctx, func(w *writeTx) error {
			if err := w.emptyAll(); err != nil {
				return err
			}
			for _, name := range allBuckets {
				sb := stx.Bucket(name)
				if sb == nil {
					continue
				}
				dst := w.Bucket(name)
				if err := sb.ForEach(func(k, v []byte) error { return dst.Put(k, v) }); err != nil {
					return err
				}
			}
			// A snapshot of a store written before user and order records were clustered.
			for _, c := range clusteredRecords {
				if sb := stx.Bucket(c.legacy); sb != nil {
					if err := c.migrate(w.Tx, sb); err != nil {
						return err
					}
				}
			}
			// A snapshot of a store written before the delivery log's index.
			if err := indexDeliveries(w.Tx); err != nil {
				return err
			}
			// A snapshot of a store without day counters, or without list items in its user
			// index, restores one without them.
			for _, mark := range newMarks {
				if m := stx.Bucket(bMeta); m == nil || m.Get(mark.key) == nil {
					if err := w.Bucket(bMeta).Delete(mark.key); err != nil {
						return err
					}
				}
			}
			w.enqueued++ // restored pending deliveries are due: wake the dispatcher
			return nil
		})
	})
}
