package console

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/simulator"
	"github.com/partnersim/partnersim/simulator/httpapi/surface"
)

// Form fields are bounded here (decisions D17): a field out of bounds is refused with a message
// that says what to enter, before any service is called.

// text returns a trimmed field of at most max characters; required says it must not be empty.
func text(r *http.Request, name, label string, max int, required bool) (string, error) {
	v := strings.TrimSpace(r.PostForm.Get(name))
	switch {
	case required && v == "":
		return "", invalid("%s is required: fill it in and try again.", label)
	case utf8.RuneCountInString(v) > max:
		return "", invalid("%s is too long: use at most %d characters.", label, max)
	case !utf8.ValidString(v):
		return "", invalid("%s must be text (UTF-8).", label)
	}
	return v, nil
}

// boundedInt reads a whole number in [lo, hi]; empty means def.
func boundedInt(raw, label string, def, lo, hi int) (int, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < lo || n > hi {
		return 0, invalid("%s must be a whole number from %d to %d.", label, lo, hi)
	}
	return n, nil
}

// maxDecimal bounds amounts and prices a form may give.
var maxDecimal = decimal.New(1, 12)

// amount reads a decimal in (0 or more, when zeroOK) .. 10^12 with at most 8 decimals.
func amount(raw, label string, zeroOK bool) (decimal.Decimal, error) {
	raw = strings.TrimSpace(raw)
	d, err := decimal.NewFromString(raw)
	if len(raw) > 32 || err != nil || d.GreaterThan(maxDecimal) || d.Exponent() < -8 || d.IsNegative() || !zeroOK && d.IsZero() {
		lo := "greater than 0"
		if zeroOK {
			lo = "0 or more"
		}
		return decimal.Zero, invalid("%s must be a number %s and at most 1,000,000,000,000 with at most 8 decimals, like 100.00.", label, lo)
	}
	return d, nil
}

func oneOf[T ~string](raw, label string, allowed []T) (T, error) {
	for _, a := range allowed {
		if string(a) == raw {
			return a, nil
		}
	}
	names := make([]string, len(allowed))
	for i, a := range allowed {
		names[i] = string(a)
	}
	return "", invalid("%s must be one of %s.", label, strings.Join(names, ", "))
}

var symbolRE = regexp.MustCompile(`^[A-Z0-9][A-Z0-9.\-]{0,15}$`)

func symbol(raw string) (string, error) {
	s := strings.ToUpper(strings.TrimSpace(raw))
	if !symbolRE.MatchString(s) {
		return "", invalid("The symbol must be 1 to 16 letters, digits, '.' or '-', like AAPL or BTC.")
	}
	return s, nil
}

func pathTo(parts ...string) string {
	for i, p := range parts {
		if i%2 == 1 {
			parts[i] = url.PathEscape(p)
		}
	}
	return Prefix + strings.Join(parts, "")
}

func ok(format string, args ...any) *flash {
	return &flash{Kind: "ok", Message: fmt.Sprintf(format, args...)}
}

func (c *Console) createInstitution(r *http.Request) (string, *flash, error) {
	name, err := text(r, "name", "The name", 200, true)
	if err != nil {
		return "", nil, err
	}
	var v simulator.Vendors
	for field, dst := range map[string]**string{"core": &v.Core, "dbp": &v.DBP} {
		s, err := text(r, field, "The "+field+" vendor", 100, false)
		if err != nil {
			return "", nil, err
		}
		if s != "" {
			*dst = &s
		}
	}
	in, err := c.cfg.Tenants.CreateInstitution(r.Context(), name, v)
	if err != nil {
		return "", nil, err
	}
	return pathTo("institutions/", in.ID), ok("Created %s (%s).", in.Name, in.ID), nil
}

func (c *Console) issueKey(r *http.Request) (string, *flash, error) {
	var scopes []simulator.Scope
	for _, s := range r.PostForm["scope"] {
		sc, err := oneOf(s, "A scope", simulator.Scopes)
		if err != nil {
			return "", nil, err
		}
		if !slices.Contains(scopes, sc) {
			scopes = append(scopes, sc)
		}
	}
	if len(scopes) == 0 {
		return "", nil, invalid("Tick at least one scope for the key.")
	}
	desc := strings.TrimSpace(r.PostForm.Get("description"))
	if utf8.RuneCountInString(desc) > surface.MaxKeyDescription {
		return "", nil, invalid("A key's description has at most %d characters.", surface.MaxKeyDescription)
	}
	k, plain, err := c.cfg.Tenants.IssueKey(r.Context(), r.PathValue("id"), scopes, desc)
	if err != nil {
		return "", nil, err
	}
	f := ok("Issued key %s. Copy it now: it is shown only this once.", k.ID)
	f.Secret = plain
	return "", f, nil
}

func (c *Console) revokeKey(r *http.Request) (string, *flash, error) {
	if err := c.cfg.Tenants.RevokeKey(r.Context(), r.PathValue("id")); err != nil {
		return "", nil, err
	}
	return "", ok("Revoked key %s: it is refused with 401 from now on.", r.PathValue("id")), nil
}

func (c *Console) setPrice(r *http.Request) (string, *flash, error) {
	sym, err := symbol(r.PostForm.Get("symbol"))
	if err != nil {
		return "", nil, err
	}
	p, err := amount(r.PostForm.Get("price"), "The price", false)
	if err != nil {
		return "", nil, err
	}
	if _, err := c.cfg.Tenants.SetPrices(r.Context(), r.PathValue("id"), map[string]decimal.Decimal{sym: p}); err != nil {
		return "", nil, err
	}
	return "", ok("%s is now %s.", sym, p.StringFixed(2)), nil
}

func (c *Console) rotateSecret(r *http.Request) (string, *flash, error) {
	overlap, err := boundedInt(r.PostForm.Get("overlap_seconds"), "The overlap", 0, 0, surface.MaxOverlapSeconds)
	if err != nil {
		return "", nil, err
	}
	sec, err := c.cfg.Tenants.RotateSecret(r.Context(), r.PathValue("id"), time.Duration(overlap)*time.Second)
	if err != nil {
		return "", nil, err
	}
	f := ok("Rotated the signing secret; the previous one also signs for %d s. Copy the new one now: it is shown only this once.", overlap)
	f.Secret = sec
	return "", f, nil
}

func (c *Console) createUser(r *http.Request) (string, *flash, error) {
	inst := r.PathValue("id")
	var req simulator.UserRequest
	var err error
	if req.UserAccountID, err = text(r, "user_account_id", "The user account id", 200, true); err != nil {
		return "", nil, err
	}
	if req.Sessions, err = boundedInt(r.PostForm.Get("sessions"), "Live sessions", 0, 0, surface.MaxSessions); err != nil {
		return "", nil, err
	}
	for _, p := range simulator.Products {
		if r.PostForm.Get("product_"+string(p)) == "" {
			continue
		}
		a := simulator.AccountRequest{Product: p}
		if a.KYCStatus, err = oneOf(r.PostForm.Get("kyc_"+string(p)), "The KYC status", simulator.KYCStatuses); err != nil {
			return "", nil, err
		}
		cash := r.PostForm.Get("cash_" + string(p))
		if strings.TrimSpace(cash) == "" {
			cash = "0"
		}
		if a.Cash, err = amount(cash, "The "+string(p)+" cash", true); err != nil {
			return "", nil, err
		}
		if p == simulator.ProductRobo {
			if a.Portfolio, err = text(r, "portfolio", "The portfolio", 64, true); err != nil {
				return "", nil, err
			}
		}
		req.Accounts = append(req.Accounts, a)
	}
	if len(req.Accounts) == 0 {
		return "", nil, invalid("Tick at least one product account for the user.")
	}
	u := simulator.NewUser(inst, req, c.cfg.Clock.Now())
	if err := c.cfg.Tenants.CreateUser(r.Context(), u); err != nil {
		return "", nil, err
	}
	return pathTo("users/", u.PlatformID), ok("Created user %s (%s).", u.UserAccountID, u.PlatformID), nil
}

func (c *Console) createMember(r *http.Request) (string, *flash, error) {
	m := &simulator.Member{InstitutionID: r.PathValue("id")}
	var err error
	if m.CoreID, err = text(r, "core_id", "The core id", 200, true); err != nil {
		return "", nil, err
	}
	if m.CoreIDType, err = oneOf(r.PostForm.Get("core_id_type"), "The core id type", []string{simulator.CoreIDMemberNumber, simulator.CoreIDCIF}); err != nil {
		return "", nil, err
	}
	dbp, err := text(r, "dbp_id", "The dbp id", 200, false)
	if err != nil {
		return "", nil, err
	}
	if dbp != "" {
		m.DBPID = &dbp
	}
	ids, err := text(r, "user_ids", "The platform user ids", 10000, false)
	if err != nil {
		return "", nil, err
	}
	m.UserIDs = []string{}
	for _, id := range strings.Split(ids, ",") {
		if id = strings.TrimSpace(id); id != "" {
			m.UserIDs = append(m.UserIDs, id)
		}
	}
	if len(m.UserIDs) > 100 {
		return "", nil, invalid("A member names at most 100 platform user ids.")
	}
	if err := c.cfg.Tenants.CreateMember(r.Context(), m); err != nil {
		return "", nil, err
	}
	return "", ok("Created member %s (%s).", m.CoreID, m.CoreIDType), nil
}

// eventFlash links an action's event to its deliveries.
func eventFlash(f *flash, ev *simulator.Event) *flash {
	if ev != nil {
		f.Message += " Event " + ev.ID + " was emitted."
		f.Link, f.LinkText = Prefix+"deliveries?event_id="+url.QueryEscape(ev.ID), "See its deliveries"
	}
	return f
}

func (c *Console) moveKYC(r *http.Request) (string, *flash, error) {
	p, err := oneOf(r.PostForm.Get("product"), "The product", simulator.Products)
	if err != nil {
		return "", nil, err
	}
	to, err := oneOf(r.PostForm.Get("status"), "The KYC status", simulator.KYCStatuses)
	if err != nil {
		return "", nil, err
	}
	move, err := c.cfg.Trading.TransitionKYC(r.Context(), r.PathValue("pid"), p, to)
	if err != nil {
		return "", nil, err
	}
	ev := move.Event
	f := ok("%s KYC is now %s.", p, to)
	if ev == nil && !simulator.KYCDelivered(to) {
		f.Message += " A move to pending is intermediate: no event is delivered."
	}
	return "", eventFlash(f, ev), nil
}

func (c *Console) placeOrder(r *http.Request) (string, *flash, error) {
	req := simulator.OrderRequest{}
	var err error
	if req.PlatformID, err = text(r, "platform_id", "The user", 200, true); err != nil {
		return "", nil, err
	}
	if req.Product, err = oneOf(r.PostForm.Get("product"), "The product", simulator.Products); err != nil {
		return "", nil, err
	}
	if req.Side, err = oneOf(r.PostForm.Get("side"), "The side", []simulator.Side{simulator.SideBuy, simulator.SideSell}); err != nil {
		return "", nil, err
	}
	if req.Symbol, err = symbol(r.PostForm.Get("symbol")); err != nil {
		return "", nil, err
	}
	n, err := amount(r.PostForm.Get("amount"), "The amount", false)
	if err != nil {
		return "", nil, err
	}
	switch r.PostForm.Get("by") {
	case "notional":
		req.Notional = &n
	case "quantity":
		req.Quantity = &n
	default:
		return "", nil, invalid("Choose whether the amount is dollars (notional) or shares (quantity).")
	}
	t, _, err := c.cfg.Trading.PlaceOrder(r.Context(), req)
	if err != nil {
		return "", nil, err
	}
	what := "$" + simulator.FormatMoney(n) + " of " + req.Symbol
	if req.Quantity != nil {
		what = n.String() + " " + req.Symbol
		if req.Product != simulator.ProductCrypto {
			what = n.String() + " shares of " + req.Symbol
		}
	}
	f := ok("Placed a %s of %s: transaction %s is %s.", req.Side, what, t.ID, t.Status)
	f.Link, f.LinkText = pathTo("transactions/", t.ID), "Open the transaction"
	return "", f, nil
}

func (c *Console) placeRobo(r *http.Request) (string, *flash, error) {
	pid, err := text(r, "platform_id", "The user", 200, true)
	if err != nil {
		return "", nil, err
	}
	typ, err := oneOf(r.PostForm.Get("type"), "The type", []simulator.TransactionType{simulator.TxnDeposit, simulator.TxnWithdrawal, simulator.TxnRebalance})
	if err != nil {
		return "", nil, err
	}
	amt := decimal.Zero
	if typ != simulator.TxnRebalance {
		if amt, err = amount(r.PostForm.Get("amount"), "The amount", false); err != nil {
			return "", nil, err
		}
	}
	t, orders, err := c.cfg.Trading.PlaceRobo(r.Context(), pid, typ, amt)
	if err != nil {
		return "", nil, err
	}
	f := ok("Placed a robo %s: transaction %s with %d order(s) is %s.", typ, t.ID, len(orders), t.Status)
	f.Link, f.LinkText = pathTo("transactions/", t.ID), "Open the transaction"
	return "", f, nil
}

func (c *Console) fill(r *http.Request) (string, *flash, error) {
	prices := map[string]decimal.Decimal{}
	for k, vs := range r.PostForm {
		sym, isPrice := strings.CutPrefix(k, "price_")
		if !isPrice || len(vs) == 0 || strings.TrimSpace(vs[0]) == "" {
			continue
		}
		if len(prices) >= 64 {
			return "", nil, invalid("Give at most 64 prices.")
		}
		p, err := amount(vs[0], "The price of "+sym, false)
		if err != nil {
			return "", nil, err
		}
		prices[sym] = p
	}
	t, _, ev, err := c.cfg.Trading.FillTransaction(r.Context(), r.PathValue("id"), prices)
	if err != nil {
		return "", nil, err
	}
	return "", eventFlash(ok("Filled transaction %s: %s.", t.ID, t.Status), ev), nil
}

func (c *Console) end(to simulator.OrderStatus) func(r *http.Request) (string, *flash, error) {
	return func(r *http.Request) (string, *flash, error) {
		t, _, err := c.cfg.Trading.EndTransaction(r.Context(), r.PathValue("id"), to)
		if err != nil {
			return "", nil, err
		}
		return "", ok("Transaction %s is %s (no event is delivered for it).", t.ID, t.Status), nil
	}
}

// resend sends an event again to every enabled subscription of its type (decisions D8); the
// page it came from stays, filters and all.
func (c *Console) resend(r *http.Request) (string, *flash, error) {
	id := r.PathValue("id")
	ds, err := c.cfg.Deliveries.Redeliver(r.Context(), id)
	if err != nil {
		return "", nil, err
	}
	return "", ok("Resending event %s to %d subscription(s).", id, len(ds)), nil
}

// redeliver sends one delivery's event again, to that delivery's subscription only (as
// Stripe's dashboard resends an event to one endpoint); the page it came from stays.
func (c *Console) redeliver(r *http.Request) (string, *flash, error) {
	d, err := c.cfg.Deliveries.RedeliverDelivery(r.Context(), r.PathValue("id"))
	if err != nil {
		return "", nil, err
	}
	return "", ok("Redelivering event %s to its subscription only (%s), as delivery %s.", d.EventID, d.URL, d.ID), nil
}

func (c *Console) advance(r *http.Request) (string, *flash, error) {
	secs, err := boundedInt(r.PostForm.Get("seconds"), "The seconds", 0, 0, surface.MaxAdvanceSeconds)
	if err != nil {
		return "", nil, err
	}
	if n := strings.TrimSpace(r.PostForm.Get("amount")); n != "" {
		unit, err := oneOf(r.PostForm.Get("unit"), "The unit", []string{"seconds", "minutes", "hours", "days"})
		if err != nil {
			return "", nil, err
		}
		mult := map[string]int{"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400}[unit]
		k, err := boundedInt(n, "The amount", 0, 0, surface.MaxAdvanceSeconds/mult)
		if err != nil {
			return "", nil, err
		}
		secs = k * mult
	}
	if secs == 0 {
		return "", nil, invalid("Advance by at least one second: pick a preset or enter an amount.")
	}
	adv, err := c.cfg.Sandbox.AdvanceClock(r.Context(), "", time.Duration(secs)*time.Second)
	if err != nil {
		return "", nil, err
	}
	return "", ok("Advanced the virtual clock by %s: it is now %s. The advance played %d delivery attempt(s) and %d scenario step(s) due on the way.",
		time.Duration(secs)*time.Second, timestamp(adv.Now), len(adv.Attempts), len(adv.Steps)), nil
}

func (c *Console) runScenario(r *http.Request) (string, *flash, error) {
	inst, err := text(r, "institution_id", "The institution", 200, false)
	if err != nil {
		return "", nil, err
	}
	run, err := c.cfg.Scenarios.RunScenario(r.Context(), r.PathValue("name"), inst)
	if err != nil {
		return "", nil, err
	}
	return pathTo("scenarios/runs/", run.RunID), ok("Started %s (run %s).", run.Scenario, run.RunID), nil
}

var faultMethods = []string{"", "GET", "POST", "PUT", "DELETE"}

// maxFaultRules bounds the fault rules the console keeps.
const maxFaultRules = 100

func (c *Console) addFault(r *http.Request) (string, *flash, error) {
	var fr surface.FaultRule
	var err error
	if fr.Method, err = oneOf(r.PostForm.Get("method"), "The method", faultMethods); err != nil {
		return "", nil, err
	}
	if fr.Path, err = text(r, "path", "The path", 500, true); err != nil {
		return "", nil, err
	}
	if !strings.HasPrefix(fr.Path, "/") {
		return "", nil, invalid("The path starts with '/', like /v1/orders/ or /v1/users/:user_account_id/.")
	}
	if fr.Status, err = boundedInt(r.PostForm.Get("status"), "The status", 0, 0, 599); err != nil {
		return "", nil, err
	}
	if fr.Status != 0 && fr.Status < 100 {
		return "", nil, invalid("The status is an HTTP status from 100 to 599, or empty for latency only.")
	}
	if fr.LatencyMS, err = boundedInt(r.PostForm.Get("latency_ms"), "The latency", 0, 0, surface.MaxFaultLatencyMS); err != nil {
		return "", nil, err
	}
	if fr.Status == 0 && fr.LatencyMS == 0 {
		return "", nil, invalid("Give a status, a latency or both: a rule with neither does nothing.")
	}
	prob := "1"
	if p := strings.TrimSpace(r.PostForm.Get("probability")); p != "" {
		prob = p
	}
	d, err := amount(prob, "The probability", true)
	if err != nil || d.GreaterThan(decimal.NewFromInt(1)) {
		return "", nil, invalid("The probability is a number from 0 to 1, like 0.5.")
	}
	fr.Probability = d.InexactFloat64()
	rules := c.cfg.Traffic.Faults()
	if len(rules) >= maxFaultRules {
		return "", nil, invalid("There are %d rules already: remove some first.", maxFaultRules)
	}
	c.cfg.Traffic.SetFaults(append(rules, fr))
	return "", ok("Added a fault rule on %s.", fr.Path), nil
}

func (c *Console) clearFaults(*http.Request) (string, *flash, error) {
	c.cfg.Traffic.SetFaults(nil)
	return "", ok("Removed every fault rule."), nil
}

func (c *Console) removeFault(r *http.Request) (string, *flash, error) {
	rules := c.cfg.Traffic.Faults()
	i, err := strconv.Atoi(r.PathValue("i"))
	if err != nil || i < 0 || i >= len(rules) {
		return "", nil, invalid("That rule is no longer there: reload the page.")
	}
	c.cfg.Traffic.SetFaults(slices.Delete(rules, i, i+1))
	return "", ok("Removed the rule on %s.", rules[i].Path), nil
}

func (c *Console) setRateLimit(r *http.Request) (string, *flash, error) {
	rps, err := amount(r.PostForm.Get("requests_per_second"), "Requests a second", true)
	if err != nil || rps.GreaterThan(decimal.NewFromInt(surface.MaxRateLimit)) {
		return "", nil, invalid("Requests a second is a number from 0 (off) to %d.", surface.MaxRateLimit)
	}
	burst, err := boundedInt(r.PostForm.Get("burst"), "The burst", 1, 1, surface.MaxRateLimit)
	if err != nil {
		return "", nil, err
	}
	c.cfg.Traffic.SetRateLimit(rps.InexactFloat64(), burst)
	if rps.IsZero() {
		return "", ok("Rate limiting is off."), nil
	}
	return "", ok("Each key may now make %s requests a second (burst %d); beyond that: 429 with Retry-After.", rps, burst), nil
}

func (c *Console) setDNS(r *http.Request) (string, *flash, error) {
	host, err := text(r, "host", "The host", 253, true)
	if err != nil {
		return "", nil, err
	}
	raw, err := text(r, "ips", "The addresses", 2000, false)
	if err != nil {
		return "", nil, err
	}
	ips := []string{}
	for _, ip := range strings.Split(raw, ",") {
		if ip = strings.TrimSpace(ip); ip != "" {
			ips = append(ips, ip)
		}
	}
	if len(ips) > 16 {
		return "", nil, invalid("Give at most 16 addresses.")
	}
	if _, err := c.cfg.Sandbox.SetDNS(r.Context(), map[string][]string{host: ips}); err != nil {
		return "", nil, err
	}
	if len(ips) == 0 {
		return "", ok("Removed the override of %s.", host), nil
	}
	return "", ok("%s now resolves to %s for callbacks.", host, strings.Join(ips, ", ")), nil
}

func (c *Console) snapshot(r *http.Request) (string, *flash, error) {
	name := strings.TrimSpace(r.PostForm.Get("name"))
	if !surface.ValidSnapshotName(name) {
		return "", nil, invalid("A snapshot name is 1 to 64 letters, digits, '-' or '_', like before-test.")
	}
	switch r.PostForm.Get("op") {
	case "save":
		if err := c.cfg.Sandbox.SaveSnapshot(r.Context(), name); err != nil {
			return "", nil, err
		}
		return "", ok("Saved snapshot %s.", name), nil
	case "restore":
		if err := c.cfg.Sandbox.RestoreSnapshot(r.Context(), name); err != nil {
			return "", nil, err
		}
		return "", ok("Restored snapshot %s.", name), nil
	}
	return "", nil, invalid("Choose save or restore.")
}

func (c *Console) reset(r *http.Request) (string, *flash, error) {
	if r.PostForm.Get("confirm") != "yes" {
		return "", nil, invalid("Tick the box to confirm: a reset replaces everything with the fixtures.")
	}
	if err := c.cfg.Sandbox.Reset(r.Context()); err != nil {
		return "", nil, err
	}
	return "", ok("The sandbox is back to its fixtures; the request journal is empty."), nil
}
