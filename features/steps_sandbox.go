package features

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cucumber/godog"
	"github.com/tidwall/gjson"
)

// sandboxSteps set up data. With a control plane they create it in the scenario's own
// institution (decisions D9); the few that also make sense against a real deployment read what
// the flags named instead (an existing user, keys lacking a scope).
func (w *world) sandboxSteps(sc *godog.ScenarioContext) {
	sc.Step(`^an institution with core vendor `+q+` and dbp vendor `+q+`$`, w.givenInstitution)
	sc.Step(`^another institution `+q+`$`, w.givenOtherInstitution)
	sc.Step(`^I act as `+q+`$`, w.actAs)
	sc.Step(`^I act as my institution$`, w.actAsMine)

	sc.Step(`^a key `+q+` with scopes `+q+`$`, w.givenKeyScopes)
	sc.Step(`^the sandbox issues (\d+) keys with scopes `+q+`$`, w.issueKeys)
	sc.Step(`^the deployment is a sandbox$`, w.isSandbox)
	sc.Step(`^every key issued is sbx_ and 40 base62 characters, and authenticates on `+q+`$`, w.issuedKeysWork)
	sc.Step(`^a key `+q+` without the `+q+` scope$`, w.givenKeyWithout)
	sc.Step(`^I use the key `+q+`$`, w.useKey)
	sc.Step(`^the key `+q+` is revoked$`, w.revokeKey)

	sc.Step(`^a user `+q+`$`, w.givenUser)
	sc.Step(`^a user `+q+` whose user_account_id is the text `+q+`$`, w.givenUserText)
	sc.Step(`^an existing user `+q+`$`, w.givenExistingUser)
	sc.Step(`^a user `+q+` with (\d+) live sessions?$`, w.givenUserSessions)
	sc.Step(`^a user `+q+` with accounts:$`, w.givenUserAccounts)
	sc.Step(`^these users:$`, w.givenUsers)
	sc.Step(`^a member with `+q+` id `+q+` and dbp id `+q+` naming `+q+`$`, w.givenMember)
	sc.Step(`^the prices are:$`, w.givenPrices)

	sc.Step(`^the `+q+` account of `+q+` moves to `+q+`$`, w.moveKYC)
	sc.Step(`^`+q+` (buys|sells) `+q+` of `+q+` in `+q+` as `+q+`$`, w.placeNotional)
	sc.Step(`^`+q+` (buys|sells) (\d+(?:\.\d+)?) shares of `+q+` in `+q+` as `+q+`$`, w.placeQuantity)
	sc.Step(`^`+q+` buys `+q+` of `+q+` in `+q+` as the recurring order `+q+` as `+q+`$`, w.placeRecurring)
	sc.Step(`^`+q+` makes a robo (deposit|withdrawal|rebalance) of `+q+` as `+q+`$`, w.placeRobo)
	sc.Step(`^the transaction of `+q+` (fills|is canceled|fails)$`, w.endTransaction)
	sc.Step(`^the transaction of `+q+` fills at `+q+`$`, w.fillAt)
	sc.Step(`^these orders of `+q+`:$`, w.givenOrders)

	sc.Step(`^the virtual clock advances (\d+) seconds$`, w.advanceClock)
	sc.Step(`^the first retry of a delivery would have come due$`, w.firstRetryDue)
	sc.Step(`^a callback host `+q+` resolving to `+q+`$`, w.givenHost)
	sc.Step(`^the callback host `+q+` now resolves to `+q+`$`, w.givenHost)
	sc.Step(`^the signing secret is rotated with an overlap of (\d+) seconds$`, w.rotateSecret)
	sc.Step(`^the sandbox shows `+q+` with (\d+) live sessions?$`, w.liveSessions)
	sc.Step(`^the sandbox lists the delivery of the event to `+q+` as `+q+` with (\d+) attempts?$`, w.sandboxDelivery)
	sc.Step(`^the sandbox lists the delivery of the event to `+q+` as `+q+` with at least (\d+) attempts?$`, w.sandboxDeliveryAtLeast)
	sc.Step(`^the sandbox redelivers the event$`, w.redeliver)
	sc.Step(`^my institution is deleted$`, w.deleteInstitution)
	sc.Step(`^the sandbox lists no delivery of the event, nor any of my institution$`, w.noSandboxDelivery)
	sc.Step(`^I try to move the `+q+` account of `+q+` to `+q+`$`, w.tryKYC)
	sc.Step(`^every KYC move answers as the transition table says:$`, w.kycTable)
	sc.Step(`^I (POST|PUT) the control plane `+q+` with JSON:$`, w.controlCallJSON)
	sc.Step(`^I (GET|POST|PUT|DELETE) the control plane `+q+` without a sandbox token$`, w.controlNoToken)
	sc.Step(`^I (GET|POST|PUT|DELETE) the control plane `+q+` with the sandbox token `+q+`$`, w.controlWithToken)
	sc.Step(`^the key `+q+` matches `+q+`$`, w.keyMatches)
}

func vendor(v string) any {
	if v == "" || v == "none" {
		return nil
	}
	return v
}

func (w *world) givenInstitution(core, dbp string) error {
	if w.insts[""] != nil {
		return errors.New("the scenario's institution already exists: put this step first")
	}
	_, err := w.createInstitution("", map[string]any{"core": vendor(unq(core)), "dbp": vendor(unq(dbp))})
	return err
}

func (w *world) givenOtherInstitution(name string) error {
	n := unq(name)
	if _, ok := w.insts[n]; ok {
		return fmt.Errorf("institution %q already exists", n)
	}
	in, err := w.createInstitution(n, map[string]any{"core": "symitar", "dbp": "q2"})
	if err != nil {
		return err
	}
	w.keys[n] = in.Key
	return nil
}

func (w *world) actAs(name string) error {
	n := unq(name)
	in, ok := w.insts[n]
	if !ok {
		return fmt.Errorf("no institution %q in this scenario", n)
	}
	w.active, w.key = n, in.Key
	return nil
}

func (w *world) actAsMine() error {
	w.active, w.key = "", ""
	return nil
}

// issueNamedKey issues a key to the active institution and names it.
func (w *world) issueNamedKey(name string, scopes []string) error {
	in, err := w.institution()
	if err != nil {
		return err
	}
	k, id, err := w.issueKey(in.ID, scopes)
	if err != nil {
		return err
	}
	w.keys[name], w.keyIDs[name] = k, id
	return nil
}

// issueKeys issues n keys named issued-1… issued-n: enough that together they draw every
// base62 character, including the ends of each range (0, 9, a, z, A, Z), many times over.
//
// Without a control plane the keys are those the run was given: the API key and each key
// lacking a scope (--key-without), when the deployment is a sandbox.
func (w *world) issueKeys(n, scopes string) error {
	if !w.run.sandbox() {
		if err := w.isSandbox(); err != nil {
			return err
		}
		given := []string{w.run.opts.APIKey}
		for _, scope := range AllScopes {
			if k := w.run.opts.KeysWithout[scope]; k != "" && !slices.Contains(given, k) {
				given = append(given, k)
			}
		}
		for i, k := range given {
			w.keys["issued-"+strconv.Itoa(i+1)] = k
		}
		return nil
	}
	count, _ := strconv.Atoi(n)
	for i := 1; i <= count; i++ {
		if err := w.issueNamedKey("issued-"+strconv.Itoa(i), splitList(unq(scopes))); err != nil {
			return err
		}
	}
	return nil
}

// sandboxKey is decisions D3's form of a sandbox key.
const sandboxKey = `^sbx_[0-9A-Za-z]{40}$`

// issuedKeysWork checks every key issueKeys issued: its form (decisions D3, as keyMatches
// checks one key) and that it authenticates a GET of path (200).
func (w *world) issuedKeysWork(path string) error {
	for i := 1; ; i++ {
		name := "issued-" + strconv.Itoa(i)
		k, ok := w.keys[name]
		if !ok {
			if i == 1 {
				return errors.New("no keys were issued in this scenario")
			}
			return nil
		}
		if err := w.keyMatches(name, sandboxKey); err != nil {
			return err
		}
		r, err := w.do(http.MethodGet, unq(path), nil, "", authLiteral, k)
		if err != nil {
			return err
		}
		// It authenticates: 200, or 403 for a given key that lacks the path's scope; never 401.
		if r.Status != http.StatusOK && r.Status != http.StatusForbidden {
			return fmt.Errorf("issued key %q: expected it to authenticate on %s (200, or 403 for a missing scope), got %s", k, unq(path), r)
		}
	}
}

func (w *world) givenKeyScopes(name, scopes string) error {
	return w.issueNamedKey(unq(name), splitList(unq(scopes)))
}

// givenKeyWithout issues a key with every scope but one; without a control plane it is the
// key given for that scope (--key-without scope=key).
func (w *world) givenKeyWithout(name, scope string) error {
	scope = unq(scope)
	if !w.run.sandbox() {
		k := w.run.opts.KeysWithout[scope]
		if k == "" {
			w.skip = "no key lacking " + scope + " was given (--key-without " + scope + "=KEY)"
			return godog.ErrSkip
		}
		w.keys[unq(name)] = k
		return nil
	}
	var scopes []string
	for _, s := range AllScopes {
		if s != scope {
			scopes = append(scopes, s)
		}
	}
	return w.issueNamedKey(unq(name), scopes)
}

func (w *world) useKey(name string) error {
	k, ok := w.keys[unq(name)]
	if !ok {
		return fmt.Errorf("no key named %q in this scenario", unq(name))
	}
	w.key = k
	return nil
}

func (w *world) revokeKey(name string) error {
	id := w.keyIDs[unq(name)]
	if id == "" {
		return fmt.Errorf("no key named %q was issued in this scenario", unq(name))
	}
	_, err := w.control(http.MethodDelete, "/_sandbox/keys/"+url.PathEscape(id), nil, 0)
	return err
}

// account is one row of an accounts table.
type account struct {
	Product, KYC, Cash, Holdings, ApprovedAt string
}

func (a account) body() map[string]any {
	m := map[string]any{"product": a.Product, "kyc_status": a.KYC}
	if a.Cash != "" {
		m["cash"] = a.Cash
	}
	hs := []map[string]any{}
	for _, h := range splitList(strings.ReplaceAll(a.Holdings, ";", ",")) {
		sym, qty, ok := strings.Cut(strings.TrimSpace(h), " ")
		if !ok {
			continue
		}
		hs = append(hs, map[string]any{"symbol": sym, "quantity": strings.TrimSpace(qty)})
	}
	if len(hs) > 0 {
		m["holdings"] = hs
	}
	if a.ApprovedAt != "" {
		m["kyc_approved_at"] = a.ApprovedAt
	}
	return m
}

// createUser creates a user in the active institution; alias is its user_account_id and
// names its variables: {alias} is the platform id.
func (w *world) createUser(alias, createdAt string, sessions int, accts []account) error {
	in, err := w.institution()
	if err != nil {
		return err
	}
	if !w.run.sandbox() {
		return errors.New("creating users needs the control plane: tag the scenario @sandbox")
	}
	as := []map[string]any{}
	for _, a := range accts {
		as = append(as, a.body())
	}
	body := map[string]any{"user_account_id": alias, "accounts": as, "sessions": sessions,
		"terms_and_conditions": map[string]any{"accepted_at": "2025-12-01T09:30:00Z", "version": "2025-11"}}
	if createdAt != "" {
		body["created_at"] = createdAt
	}
	r, err := w.control(http.MethodPost, "/_sandbox/institutions/"+url.PathEscape(in.ID)+"/users", body, http.StatusCreated)
	if err != nil {
		return err
	}
	if err := answered(r, "platform_id"); err != nil {
		return err
	}
	w.vars[alias] = r.Get("platform_id").String()
	w.vars[alias+".user_account_id"] = alias
	return nil
}

func (w *world) givenUser(alias string) error {
	return w.createUser(unq(alias), "", 0, []account{{Product: "crypto", KYC: "approved", Cash: "100.00"}})
}

// givenUserText creates a user whose user_account_id is the text (the inside of a JSON string
// literal, so any character can be named), remembered as {alias.user_account_id}.
func (w *world) givenUserText(alias, text string) error {
	s, err := w.textArg(text)
	if err != nil {
		return err
	}
	if err := w.createUser(s, "", 0, []account{{Product: "crypto", KYC: "approved", Cash: "100.00"}}); err != nil {
		return err
	}
	w.vars[unq(alias)] = w.vars[s]
	w.vars[unq(alias)+".user_account_id"] = s
	return nil
}

func (w *world) givenUserSessions(alias, n string) error {
	s, _ := strconv.Atoi(n)
	return w.createUser(unq(alias), "", s, []account{{Product: "crypto", KYC: "approved", Cash: "100.00"}})
}

// givenExistingUser creates a user with a funded approved crypto account, or, without a
// control plane, names the user given by --var user_id.
func (w *world) givenExistingUser(alias string) error {
	a := unq(alias)
	if w.run.sandbox() {
		if pid, ok := w.vars["law-02"]; ok { // the deployment's data step made users: take one named by a member
			w.vars[a], w.vars[a+".user_account_id"] = pid, "law-02"
			return nil
		}
		return w.givenUser(alias)
	}
	id := w.run.opts.Vars["user_id"]
	if id == "" {
		w.skip = InputSkipReason("user_id")
		return godog.ErrSkip
	}
	r, err := w.do(http.MethodGet, "/users/"+url.PathEscape(id)+"/?user_account_id_type=platform", nil, "", authKey)
	if err != nil {
		return err
	}
	if r.Status != http.StatusOK {
		return fmt.Errorf("expected the user given by --var user_id to exist, got %s", r)
	}
	w.vars[a] = id
	w.vars[a+".user_account_id"] = r.json().Get("user_account_id").String()
	w.resp = nil
	return nil
}

func tableRows(t *godog.Table) ([]map[string]string, error) {
	if t == nil || len(t.Rows) == 0 {
		return nil, errors.New("expected a table with a header row")
	}
	var head []string
	for _, c := range t.Rows[0].Cells {
		head = append(head, strings.TrimSpace(c.Value))
	}
	var out []map[string]string
	for _, r := range t.Rows[1:] {
		m := map[string]string{}
		for i, c := range r.Cells {
			if i < len(head) {
				m[head[i]] = strings.TrimSpace(c.Value)
			}
		}
		out = append(out, m)
	}
	return out, nil
}

func rowAccount(r map[string]string) account {
	return account{Product: r["product"], KYC: r["kyc_status"], Cash: r["cash"], Holdings: r["holdings"], ApprovedAt: r["kyc_approved_at"]}
}

func (w *world) givenUserAccounts(alias string, t *godog.Table) error {
	rows, err := tableRows(t)
	if err != nil {
		return err
	}
	var accts []account
	for _, r := range rows {
		accts = append(accts, rowAccount(r))
	}
	return w.createUser(unq(alias), "", 0, accts)
}

// givenUsers creates users from a table (user_account_id, created_at, and optionally product,
// kyc_status, cash); consecutive rows with the same user_account_id add accounts.
func (w *world) givenUsers(t *godog.Table) error {
	rows, err := tableRows(t)
	if err != nil {
		return err
	}
	for i := 0; i < len(rows); {
		id := rows[i]["user_account_id"]
		created := rows[i]["created_at"]
		var accts []account
		j := i
		for ; j < len(rows) && rows[j]["user_account_id"] == id; j++ {
			if rows[j]["product"] != "" {
				accts = append(accts, rowAccount(rows[j]))
			}
		}
		if err := w.createUser(id, created, 0, accts); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// givenMember adds a member: `a member with "member_number" id "M-1" and dbp id "D-1" naming
// "alice, usr_missing"` (aliases become platform ids; other names are used as they are).
func (w *world) givenMember(coreType, coreID, dbpID, names string) error {
	in, err := w.institution()
	if err != nil {
		return err
	}
	var ids []string
	for _, n := range splitList(unq(names)) {
		if pid, ok := w.vars[n]; ok {
			ids = append(ids, pid)
		} else {
			ids = append(ids, n)
		}
	}
	body := map[string]any{"core_id": unq(coreID), "core_id_type": unq(coreType), "dbp_id": vendor(unq(dbpID)), "user_ids": ids}
	_, err = w.control(http.MethodPost, "/_sandbox/institutions/"+url.PathEscape(in.ID)+"/members", body, http.StatusCreated)
	return err
}

func (w *world) givenPrices(t *godog.Table) error {
	rows, err := tableRows(t)
	if err != nil {
		return err
	}
	in, err := w.institution()
	if err != nil {
		return err
	}
	prices := map[string]string{}
	for _, r := range rows {
		prices[r["symbol"]] = r["price"]
	}
	_, err = w.control(http.MethodPut, "/_sandbox/institutions/"+url.PathEscape(in.ID)+"/prices", prices, http.StatusOK)
	return err
}

func (w *world) platformID(alias string) (string, error) {
	pid, ok := w.vars[unq(alias)]
	if !ok {
		return "", fmt.Errorf("no user %q in this scenario", unq(alias))
	}
	return pid, nil
}

func (w *world) moveKYC(product, alias, status string) error {
	pid, err := w.platformID(alias)
	if err != nil {
		return err
	}
	_, err = w.control(http.MethodPost, "/_sandbox/users/"+url.PathEscape(pid)+"/kyc", map[string]any{"product": unq(product), "status": unq(status)}, http.StatusOK)
	return err
}

// placeOrder places one order; {as} is its order id and {as.transaction_id} its transaction.
func (w *world) placeOrder(alias, verb, symbol, product, as string, amount map[string]any) error {
	pid, err := w.platformID(alias)
	if err != nil {
		return err
	}
	side := "buy"
	if verb == "sells" {
		side = "sell"
	}
	body := map[string]any{"platform_id": pid, "product": unq(product), "side": side, "symbol": unq(symbol)}
	for k, v := range amount {
		body[k] = v
	}
	r, err := w.control(http.MethodPost, "/_sandbox/orders", body, http.StatusCreated)
	if err != nil {
		return err
	}
	if err := answered(r, "order_id", "transaction_id"); err != nil {
		return err
	}
	name := unq(as)
	w.vars[name] = r.Get("order_id").String()
	w.vars[name+".transaction_id"] = r.Get("transaction_id").String()
	// Orders placed one after another must not share a placed_at (the filters on placed_at
	// are checked at order boundaries): let the wall clock move past this one.
	time.Sleep(2 * time.Millisecond)
	return nil
}

func (w *world) placeNotional(alias, verb, notional, symbol, product, as string) error {
	return w.placeOrder(alias, verb, symbol, product, as, map[string]any{"notional": unq(notional)})
}

func (w *world) placeQuantity(alias, verb, qty, symbol, product, as string) error {
	return w.placeOrder(alias, verb, symbol, product, as, map[string]any{"quantity": qty})
}

func (w *world) placeRecurring(alias, notional, symbol, product, recurring, as string) error {
	return w.placeOrder(alias, "buys", symbol, product, as, map[string]any{"notional": unq(notional), "recurring_order_id": unq(recurring)})
}

func (w *world) placeRobo(alias, typ, amount, as string) error {
	pid, err := w.platformID(alias)
	if err != nil {
		return err
	}
	r, err := w.control(http.MethodPost, "/_sandbox/transactions", map[string]any{"platform_id": pid, "product": "robo", "type": typ, "amount": unq(amount)}, http.StatusCreated)
	if err != nil {
		return err
	}
	if err := answered(r, "transaction_id"); err != nil {
		return err
	}
	name, id := unq(as), r.Get("transaction_id").String()
	w.vars[name], w.vars[name+".transaction_id"] = id, id
	w.vars[name+".legs"] = strconv.Itoa(len(r.Get("orders").Array()))
	return nil
}

func (w *world) txnOf(as string) (string, error) {
	id, ok := w.vars[unq(as)+".transaction_id"]
	if !ok {
		return "", fmt.Errorf("no order or transaction %q in this scenario", unq(as))
	}
	return id, nil
}

func (w *world) endTransaction(as, how string) error {
	id, err := w.txnOf(as)
	if err != nil {
		return err
	}
	op := map[string]string{"fills": "fill", "is canceled": "cancel", "fails": "fail"}[how]
	_, err = w.control(http.MethodPost, "/_sandbox/transactions/"+url.PathEscape(id)+"/"+op, map[string]any{}, http.StatusOK)
	return err
}

func (w *world) fillAt(as, price string) error {
	id, err := w.txnOf(as)
	if err != nil {
		return err
	}
	_, err = w.control(http.MethodPost, "/_sandbox/transactions/"+url.PathEscape(id)+"/fill", map[string]any{"price": unq(price)}, http.StatusOK)
	return err
}

// givenOrders places orders from a table (as, product, side, symbol, notional or quantity,
// outcome: pending, filled, canceled or failed), one after another.
func (w *world) givenOrders(alias string, t *godog.Table) error {
	rows, err := tableRows(t)
	if err != nil {
		return err
	}
	for _, r := range rows {
		verb := "buys"
		if r["side"] == "sell" {
			verb = "sells"
		}
		amount := map[string]any{}
		if r["notional"] != "" {
			amount["notional"] = r["notional"]
		} else {
			amount["quantity"] = r["quantity"]
		}
		if err := w.placeOrder(alias, verb, r["symbol"], r["product"], r["as"], amount); err != nil {
			return err
		}
		switch r["outcome"] {
		case "", "pending":
		case "filled":
			err = w.endTransaction(r["as"], "fills")
		case "canceled":
			err = w.endTransaction(r["as"], "is canceled")
		case "failed":
			err = w.endTransaction(r["as"], "fails")
		default:
			err = fmt.Errorf("unknown outcome %q", r["outcome"])
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// advanceClock moves the scenario's institution's virtual clock (decisions D9), never the
// process-wide one: a process-wide jump makes every concurrent scenario's retries fall due at
// once (an event retried after a stalled attempt arrived twice where a scenario counted one).
func (w *world) advanceClock(secs string) error {
	n, _ := strconv.Atoi(secs)
	if _, err := w.institution(); err != nil {
		return err
	}
	_, err := w.advance(int64(n))
	return err
}

// firstRetryDue lets the time of a first retry pass (decisions D8: 5 s after the attempt): an
// hour on the virtual clock where the control plane has one; elsewhere the deployment's clock
// is the wall clock, which nothing can move, so the step waits 6 s of it.
func (w *world) firstRetryDue() error {
	if w.run.can("virtual_clock") {
		return w.advanceClock("3600")
	}
	t := time.NewTimer(6 * time.Second)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}

// givenHost makes a host name unique to the scenario ({name} is it) resolve to the addresses.
func (w *world) givenHost(name, addrs string) error {
	n := unq(name)
	host, ok := w.vars[n]
	if !ok {
		host = "h" + randomToken(6) + ".contract.partnersim.test"
		w.vars[n] = host
		w.dnsHosts = append(w.dnsHosts, host)
	}
	_, err := w.control(http.MethodPut, "/_sandbox/dns", map[string]any{host: splitList(unq(addrs))}, http.StatusOK)
	return err
}

func (w *world) rotateSecret(overlap string) error {
	in, err := w.institution()
	if err != nil {
		return err
	}
	n, _ := strconv.Atoi(overlap)
	r, err := w.control(http.MethodPost, "/_sandbox/institutions/"+url.PathEscape(in.ID)+"/signing-secret/rotate", map[string]any{"overlap_seconds": n}, http.StatusOK)
	if err != nil {
		return err
	}
	if err := answered(r, "signing_secret"); err != nil {
		return err
	}
	in.OldSecret, in.Secret = in.Secret, r.Get("signing_secret").String()
	return nil
}

func (w *world) liveSessions(alias, n string) error {
	pid, err := w.platformID(alias)
	if err != nil {
		return err
	}
	r, err := w.control(http.MethodGet, "/_sandbox/users/"+url.PathEscape(pid), nil, http.StatusOK)
	if err != nil {
		return err
	}
	if got := r.Get("live_sessions"); got.Raw != n {
		return fmt.Errorf("expected %s live sessions, got %s (%s)", n, orAbsent(got), truncate(r.Raw, 300))
	}
	return nil
}

// sandboxDelivery checks the control plane's record of the current event's delivery to a
// receiver's subscription: its status and number of attempts, polled until they match.
func (w *world) sandboxDelivery(recv, status, attempts string) error {
	return w.sandboxDeliveryCheck(recv, status, attempts, false)
}

func (w *world) sandboxDeliveryAtLeast(recv, status, attempts string) error {
	return w.sandboxDeliveryCheck(recv, status, attempts, true)
}

func (w *world) sandboxDeliveryCheck(recv, status, attempts string, atLeast bool) error {
	if w.event == nil {
		return errors.New("no delivery was received yet")
	}
	eventID := gjson.GetBytes(w.event.Body, "event_id").String()
	r, ok := w.receivers[unq(recv)]
	if !ok {
		return fmt.Errorf("no receiver %q", unq(recv))
	}
	want, _ := strconv.Atoi(attempts)
	deadline := time.Now().Add(w.run.opts.Wait)
	var last string
	for {
		res, err := w.control(http.MethodGet, "/_sandbox/deliveries?event_id="+url.QueryEscape(eventID), nil, http.StatusOK)
		if err != nil {
			return err
		}
		for _, d := range res.Get("deliveries").Array() {
			if !slices.Contains(r.subs, d.Get("subscription_id").String()) {
				continue
			}
			last = d.Raw
			n := len(d.Get("attempts").Array())
			if d.Get("status").String() == unq(status) && (n == want || atLeast && n > want) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("expected the sandbox to list the delivery of %s to %s as %s with %d attempts, got %s", eventID, unq(recv), unq(status), want, orNone(last))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// deleteInstitution deletes the scenario's institution through the control plane (decisions
// D9): 204, with everything of it.
func (w *world) deleteInstitution() error {
	in, err := w.institution()
	if err != nil {
		return err
	}
	_, err = w.control(http.MethodDelete, "/_sandbox/institutions/"+url.PathEscape(in.ID), nil, http.StatusNoContent)
	return err
}

// noSandboxDelivery checks that the control plane lists no delivery of the current event, nor
// any of the scenario's institution (the two filters walk different indexes).
func (w *world) noSandboxDelivery() error {
	if w.event == nil {
		return errors.New("no delivery was received yet")
	}
	in, err := w.institution()
	if err != nil {
		return err
	}
	eventID := gjson.GetBytes(w.event.Body, "event_id").String()
	for _, q := range []string{"event_id=" + url.QueryEscape(eventID), "institution_id=" + url.QueryEscape(in.ID)} {
		res, err := w.control(http.MethodGet, "/_sandbox/deliveries?"+q, nil, http.StatusOK)
		if err != nil {
			return err
		}
		if ds := res.Get("deliveries").Array(); len(ds) > 0 {
			return fmt.Errorf("decisions D9: a deleted institution's deliveries are deleted with it; GET /_sandbox/deliveries?%s still lists %d: %s", q, len(ds), truncate(ds[0].Raw, 400))
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "no delivery"
	}
	return truncate(s, 600)
}

func (w *world) redeliver() error {
	if w.event == nil {
		return errors.New("no delivery was received yet")
	}
	id := gjson.GetBytes(w.event.Body, "event_id").String()
	_, err := w.control(http.MethodPost, "/_sandbox/events/"+url.PathEscape(id)+"/redeliver", nil, 0)
	return err
}

// isSandbox skips the scenario unless the deployment is a sandbox: it has a control plane, or
// the key the run was given is a sandbox key (sbx_, decisions D3).
func (w *world) isSandbox() error {
	if w.run.sandbox() || strings.HasPrefix(w.run.opts.APIKey, "sbx_") {
		return nil
	}
	w.skip = "the deployment is not a sandbox (the key given by --api-key is not sbx_…)"
	return godog.ErrSkip
}

// kycTable checks the whole KYC transition table (decisions D9): for every state of the table's
// first column, an account in that state may move to exactly the states its row allows (200)
// and to no other, the same state included (409). Each move starts from a fresh user.
func (w *world) kycTable(t *godog.Table) error {
	rows, err := tableRows(t)
	if err != nil {
		return err
	}
	var states []string
	allowed := map[string][]string{}
	for _, r := range rows {
		states = append(states, r["from"])
		allowed[r["from"]] = splitList(strings.ReplaceAll(r["to"], "none", ""))
	}
	var wrong []string
	for i, from := range states {
		for _, to := range states {
			alias := fmt.Sprintf("kyc-%d-%s", i, to)
			if err := w.createUser(alias, "", 0, []account{{Product: "crypto", KYC: from, Cash: "0.00"}}); err != nil {
				return err
			}
			if err := w.tryKYC("crypto", alias, to); err != nil {
				return err
			}
			want := http.StatusConflict
			if slices.Contains(allowed[from], to) {
				want = http.StatusOK
			}
			if w.resp.Status != want {
				wrong = append(wrong, fmt.Sprintf("%s → %s answered %d, want %d", from, to, w.resp.Status, want))
			}
		}
	}
	if len(wrong) > 0 {
		return fmt.Errorf("expected the KYC transition table, got %d moves wrong: %s", len(wrong), strings.Join(wrong, "; "))
	}
	return nil
}
