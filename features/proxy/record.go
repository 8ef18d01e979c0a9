package proxy

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"
)

// recorder keeps the users and orders the app was answered, by institution (one per key), to
// write them as a fixture set the sandbox loads (README.md's fixture format): ids kept, keys and
// secrets never — the set gets fresh sandbox keys of its own.
type recorder struct {
	mu    sync.Mutex
	start time.Time
	keys  []string                        // key hashes in the order first seen
	users map[string]map[string]*recUser  // key → user_account_id → user
	order map[string]map[string]*recOrder // key → order_id → order
}

type recUser struct {
	seq        int
	platformID string
	item       gjson.Result // the latest list item or detail
	terms      gjson.Result
}

type recOrder struct {
	seq  int
	item gjson.Result
}

func newRecorder(now time.Time) *recorder {
	return &recorder{start: now, users: map[string]map[string]*recUser{}, order: map[string]map[string]*recOrder{}}
}

// note keeps what an answer shows.
func (r *recorder) note(key string, rt route, j gjson.Result) {
	if r == nil || key == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.users[key] == nil {
		r.keys = append(r.keys, key)
		r.users[key], r.order[key] = map[string]*recUser{}, map[string]*recOrder{}
	}
	us, ords := r.users[key], r.order[key]
	switch rt {
	case userList, userDetail:
		for _, u := range users(rt, j) {
			id := u.Get("user_account_id").String()
			if id == "" {
				continue
			}
			ru := us[id]
			if ru == nil {
				ru = &recUser{seq: len(us)}
				us[id] = ru
			}
			ru.item = gjson.Parse(u.Raw)
			if rt == userDetail {
				ru.platformID = u.Get("identities.platform_user_identifier").String()
				ru.terms = gjson.Parse(u.Get("terms_and_conditions").Raw)
			}
		}
	case orderList:
		for _, o := range j.Get("items").Array() {
			id := o.Get("order_id").String()
			if id == "" {
				continue
			}
			ro := ords[id]
			if ro == nil {
				ro = &recOrder{seq: len(ords)}
				ords[id] = ro
			}
			ro.item = gjson.Parse(o.Raw)
		}
	}
}

// write writes the set into dir (created; files there are replaced).
func (r *recorder) write(dir string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	type obj = map[string]any
	var institutions, keys, users, transactions []obj
	prices := obj{"REC": "1.00"} // the recorded robo portfolio's one symbol
	at := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	for i, k := range r.keys {
		ins := fmt.Sprintf("ins_recorded_%d", i+1)
		institutions = append(institutions, obj{"institution_id": ins, "name": fmt.Sprintf("Recorded institution %d (%s)", i+1, k),
			"vendors": obj{"core": nil, "dbp": nil}, "created_at": at(r.start.Add(-24 * time.Hour))})
		keys = append(keys, obj{"key_id": fmt.Sprintf("key_recorded_%d", i+1), "institution_id": ins, "key": newKey(),
			"scopes":      []string{"read:user", "read:orders", "manage:sessions", "manage:webhooks"},
			"description": "a fresh key for the institution recorded from " + k + " (the recorded key is never written)", "created_at": at(r.start.Add(-24 * time.Hour))})
		platform := map[string]string{} // user_account_id → platform id
		ids := make([]string, 0, len(r.users[k]))
		for id := range r.users[k] {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, func(a, b string) int { return r.users[k][a].seq - r.users[k][b].seq })
		for _, id := range ids {
			u := r.users[k][id]
			pid := u.platformID
			if pid == "" {
				pid = fmt.Sprintf("usr_recorded_%d_%d", i+1, u.seq+1) // a list item does not show it
			}
			platform[id] = pid
			// created_at is not shown: the first seen is the newest (lists are newest first), one
			// second apart, and never after anything the user did that was seen.
			c := r.start.Add(-time.Hour - time.Duration(u.seq)*time.Second)
			for _, v := range []gjson.Result{u.terms.Get("accepted_at")} {
				if t, err := time.Parse(time.RFC3339Nano, v.String()); err == nil && t.Before(c) {
					c = t
				}
			}
			for _, a := range u.item.Get("accounts").Array() {
				if t, err := time.Parse(time.RFC3339Nano, a.Get("kyc_approved_at").String()); err == nil && t.Before(c) {
					c = t
				}
			}
			for _, ro := range r.order[k] {
				if ro.item.Get("user_account_id").String() != id {
					continue
				}
				if t, err := time.Parse(time.RFC3339Nano, ro.item.Get("placed_at").String()); err == nil && t.Before(c) {
					c = t
				}
			}
			created := c.UTC().Format(time.RFC3339Nano)
			var accounts []obj
			for _, a := range u.item.Get("accounts").Array() {
				acct := obj{"product": a.Get("product").String(), "kyc_status": a.Get("kyc_status").String(),
					"cash": a.Get("current_market_value").String(), "holdings": []obj{}} // the value kept as cash
				if a.Get("product").String() == "robo" {
					acct["portfolio"] = "recorded"
				}
				if v := a.Get("kyc_approved_at"); v.Exists() {
					acct["kyc_approved_at"] = v.String()
				}
				accounts = append(accounts, acct)
			}
			if accounts == nil {
				accounts = []obj{}
			}
			terms := obj{"accepted_at": created, "version": "recorded"}
			if u.terms.Get("accepted_at").Exists() {
				terms = obj{"accepted_at": u.terms.Get("accepted_at").String(), "version": u.terms.Get("version").String()}
			}
			users = append(users, obj{"institution_id": ins, "platform_id": pid, "user_account_id": id, "created_at": created,
				"sessions": 0, "terms_and_conditions": terms, "accounts": accounts})
		}
		oids := make([]string, 0, len(r.order[k]))
		for id := range r.order[k] {
			oids = append(oids, id)
		}
		slices.SortFunc(oids, func(a, b string) int { return r.order[k][a].seq - r.order[k][b].seq })
		for _, id := range oids {
			o := r.order[k][id].item
			pid, ok := platform[o.Get("user_account_id").String()]
			if !ok || o.Get("product").String() == "robo" {
				// Its user was never seen, so the set could not name it; or a robo order, one leg
				// of a deposit, withdrawal or rebalance the list does not group: left out.
				continue
			}
			ord := obj{"order_id": id, "side": o.Get("side").String(), "symbol": o.Get("symbol").String(), "quantity": o.Get("quantity").String(),
				"notional": o.Get("notional").String(), "fee": o.Get("fee").String(), "status": o.Get("status").String(),
				"placed_at": o.Get("placed_at").String(), "is_recurring_order": o.Get("is_recurring_order").Bool(),
				"by_notional": o.Get("quantity").String() == "0"}
			if v := o.Get("completed_at"); v.Exists() {
				ord["completed_at"] = v.String()
			}
			if v := o.Get("recurring_order_id"); v.Exists() {
				ord["recurring_order_id"] = v.String()
			}
			prices[o.Get("symbol").String()] = "1.00"
			t := obj{"transaction_id": "txn_recorded_" + strings.TrimPrefix(id, "ord_"), "institution_id": ins, "platform_id": pid,
				"product": o.Get("product").String(), "type": o.Get("side").String(), "status": o.Get("status").String(),
				"created_at": o.Get("placed_at").String(), "orders": []obj{ord}}
			if v := o.Get("completed_at"); v.Exists() {
				t["completed_at"] = v.String()
			}
			transactions = append(transactions, t)
		}
	}
	fees := obj{}
	for _, p := range []string{"securities", "robo", "crypto", "roth_ira"} {
		fees[p] = obj{"rate": "0", "minimum": "0.00"}
	}
	files := map[string]any{"institutions.json": institutions, "keys.json": keys, "users.json": users,
		"transactions.json": transactions, "prices.json": prices, "fees.json": fees,
		"portfolios.json": []obj{{"name": "recorded", "weights": []obj{{"symbol": "REC", "weight": "1"}}}}}
	for name, v := range files {
		if s, ok := v.([]obj); ok && s == nil {
			v = []obj{}
		}
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// newKey is a fresh sandbox key: sbx_ and 40 base62 characters (decisions D3).
func newKey() string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 40)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "sbx_" + string(b)
}
