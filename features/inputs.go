package features

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/cucumber/godog"
	"github.com/tidwall/gjson"
)

// An input is a value of the deployment that a data-driven scenario needs and cannot discover
// from the partner API alone: a member's ids, a key of another institution. A partner gives it
// with --var NAME=VALUE (Options.Vars); with a control plane the scenario makes it itself, so
// the same scenario runs against a sandbox and against a real deployment. A scenario names
// what it needs with the step `Given the inputs "a, b"`; without an input and without a
// control plane it is skipped, saying which input it lacked.
type Input struct {
	Name string
	// Doc says what the value must be, for the skip reason, the README and --help.
	Doc string
	// make creates the value through the control plane, binding it (and any companion
	// variables) in the scenario.
	make func(w *world) error
}

// Inputs are every input a scenario may name, in the order the README lists them.
var Inputs = []Input{
	{Name: "user_id", Doc: "the platform id of a user the key can see, with a funded approved account", make: makeUser},
	{Name: "unfunded_user_id", Doc: "the platform id of a user the key can see with no funded account (no cash, no holdings)", make: makeUnfundedUser},
	{Name: "other_institution_key", Doc: "a key with every scope of a second institution, which must not see the first's data", make: makeOtherInstitution},
	{Name: "core_member_id", Doc: "the core id of a member whose accounts have user records (its sessions are revoked)", make: makeMember},
	{Name: "dbp_member_id", Doc: "the dbp id of a member whose accounts have user records (its sessions are revoked)", make: makeMember},
	{Name: "robo_transaction_id", Doc: "the id of a robo deposit, withdrawal or rebalance the key can see", make: makeRoboTransaction},
	{Name: "vendorless_key", Doc: "a key with every scope of an institution with neither a core vendor nor a digital banking platform", make: makeVendorless},
}

func inputNamed(name string) (Input, bool) {
	i := slices.IndexFunc(Inputs, func(in Input) bool { return in.Name == name })
	if i < 0 {
		return Input{}, false
	}
	return Inputs[i], true
}

// InputSkipReason is the skip reason of a scenario that lacked the input.
func InputSkipReason(name string) string {
	in, _ := inputNamed(name)
	return fmt.Sprintf("input %s not given (--var %s=…: %s)", name, name, in.Doc)
}

// needInputs binds each named input: the --var given, else one the control plane makes, else
// the scenario is skipped naming the first input it lacks.
func (w *world) needInputs(names string) error {
	for _, n := range splitList(unq(names)) {
		in, ok := inputNamed(n)
		if !ok {
			return fmt.Errorf("unknown input %q (features/inputs.go lists them)", n)
		}
		if _, ok := w.vars[n]; ok {
			continue
		}
		if !w.run.sandbox() {
			w.skip = InputSkipReason(n)
			return godog.ErrSkip
		}
		if err := in.make(w); err != nil {
			return fmt.Errorf("making the input %s through the control plane: %w", n, err)
		}
		if _, ok := w.vars[n]; !ok {
			return fmt.Errorf("making the input %s through the control plane bound no value", n)
		}
	}
	return nil
}

// makeUser makes a user with a funded approved securities account holding shares.
func makeUser(w *world) error {
	if err := w.createUser("input-user", "", 1, []account{{Product: "securities", KYC: "approved", Cash: "250.00", Holdings: "AAPL 1.5"}}); err != nil {
		return err
	}
	w.vars["user_id"] = w.vars["input-user"]
	return nil
}

// makeUnfundedUser makes a user whose only account is pending and holds nothing.
func makeUnfundedUser(w *world) error {
	if err := w.createUser("input-unfunded", "", 0, []account{{Product: "roth_ira", KYC: "pending"}}); err != nil {
		return err
	}
	w.vars["unfunded_user_id"] = w.vars["input-unfunded"]
	return nil
}

// makeOtherInstitution makes a second institution and binds its key.
func makeOtherInstitution(w *world) error {
	in, err := w.createInstitution("other", map[string]any{"core": "symitar", "dbp": "q2"})
	if err != nil {
		return err
	}
	w.vars["other_institution_key"] = in.Key
	return nil
}

// makeMember makes a user with two live sessions and a member naming it with a core id and a
// dbp id.
func makeMember(w *world) error {
	if _, ok := w.vars["core_member_id"]; ok {
		return nil
	}
	if err := w.createUser("input-member", "", 2, []account{{Product: "crypto", KYC: "approved", Cash: "10.00"}}); err != nil {
		return err
	}
	core, dbp := "M-"+randomToken(4), "D-"+randomToken(4)
	if err := w.givenMember("member_number", core, dbp, "input-member"); err != nil {
		return err
	}
	w.vars["core_member_id"], w.vars["dbp_member_id"] = core, dbp
	return nil
}

// makeRoboTransaction makes a user with a funded robo account and a filled robo deposit.
func makeRoboTransaction(w *world) error {
	if err := w.createUser("input-robo", "", 0, []account{{Product: "robo", KYC: "approved", Cash: "500.00"}}); err != nil {
		return err
	}
	if err := w.placeRobo("input-robo", "deposit", "300.00", "input-deposit"); err != nil {
		return err
	}
	if err := w.endTransaction("input-deposit", "fills"); err != nil {
		return err
	}
	w.vars["robo_transaction_id"] = w.vars["input-deposit"]
	return nil
}

// makeVendorless makes an institution with neither vendor and binds its key.
func makeVendorless(w *world) error {
	in, err := w.createInstitution("vendorless", map[string]any{"core": nil, "dbp": nil})
	if err != nil {
		return err
	}
	w.vars["vendorless_key"] = in.Key
	return nil
}

// VarsHelp describes every input for --var's help.
func VarsHelp() string {
	var parts []string
	for _, in := range Inputs {
		parts = append(parts, in.Name+" ("+in.Doc+")")
	}
	return strings.Join(parts, "; ")
}

// inputSteps are the steps of data-driven scenarios: inputs, keys given as values, responses
// compared with each other, and the institution's signing secret.
func (w *world) inputSteps(sc *godog.ScenarioContext) {
	sc.Step(`^the inputs? `+q+`$`, w.needInputs)
	sc.Step(`^I use the API key `+q+`$`, w.useLiteralKey)
	sc.Step(`^I remember the response as `+q+`$`, w.rememberResponse)
	sc.Step(`^the response is the same as `+q+`$`, w.sameResponse)
	sc.Step(`^my institution has its signing secret$`, w.haveSecret)
	sc.Step(`^the response body writes the number `+q+` at `+q+`$`, w.writesNumber)
	sc.Step(`^its signing secret matches `+q+`$`, w.secretMatches)
	sc.Step(`^the transaction is one order, or one leg per symbol sharing placed_at, and completed exactly when every leg is$`, w.transactionLaw)
}

// useLiteralKey makes later requests use a key given as a value ("{vendorless_key}").
func (w *world) useLiteralKey(key string) error {
	k, err := w.expand(unq(key))
	if err != nil {
		return err
	}
	w.key = k
	return nil
}

func (w *world) rememberResponse(name string) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	if w.remembered == nil {
		w.remembered = map[string]*response{}
	}
	w.remembered[unq(name)] = r
	return nil
}

// sameResponse: the current response has the status and the body of the remembered one, the
// ids the two requests named aside (the last path segment of each, or its query's
// user_account_id): "exactly as if it did not exist" (decisions D3) compares an existing id
// of another institution with one that exists nowhere.
func (w *world) sameResponse(name string) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	was, ok := w.remembered[unq(name)]
	if !ok {
		return fmt.Errorf("no response remembered as %q", unq(name))
	}
	norm := func(res *response) []byte {
		b := res.Body
		for _, id := range requestIDs(res) {
			b = bytes.ReplaceAll(b, []byte(id), []byte("<id>"))
		}
		return b
	}
	if r.Status != was.Status || !bytes.Equal(norm(r), norm(was)) {
		return fmt.Errorf("expected the same answer as to %s %s (%d %s), got %s", was.Method, was.URL, was.Status, truncate(string(was.Body), 300), r)
	}
	return nil
}

// requestIDs are the ids a request named: its last path segment and, for a body-less request,
// nothing more; a revoke's body id is in the response's request, which is not kept, so its
// callers compare detail sentences that do not repeat the id.
func requestIDs(r *response) []string {
	u, err := url.Parse(r.URL)
	if err != nil {
		return nil
	}
	seg := strings.Trim(u.Path, "/")
	if i := strings.LastIndex(seg, "/"); i >= 0 {
		seg = seg[i+1:]
	}
	seg, _ = url.PathUnescape(seg)
	if len(seg) < 3 {
		return nil
	}
	return []string{seg}
}

// haveSecret makes sure the scenario knows its institution's signing secret: with a control
// plane the institution's first subscribe must issue it; without one it is the secret given by
// --signing-secret (the deployment's institution issued it long ago).
func (w *world) haveSecret() error {
	in, err := w.institution()
	if err != nil {
		return err
	}
	if in.Secret != "" {
		return nil
	}
	if !w.run.sandbox() {
		if w.run.opts.SigningSecret == "" {
			w.skip = "the institution's signing secret was not given (--signing-secret)"
			return godog.ErrSkip
		}
		in.Secret = w.run.opts.SigningSecret
		return nil
	}
	res, err := w.createSubscription(w.run.opts.BaseURL, "https://93.184.216.34/partnersim-contract/"+randomToken(4), "kyc", nil)
	if err != nil {
		return err
	}
	if s := res.json().Get("signing_secret"); res.Status != http.StatusCreated || s.Type != gjson.String || s.Str == "" {
		return fmt.Errorf("expected the institution's first subscribe to answer 201 with its signing_secret, got %s", res)
	}
	w.resp = nil
	return nil
}

func (w *world) secretMatches(pattern string) error {
	in, err := w.institution()
	if err != nil {
		return err
	}
	re, err := regexp.Compile(unq(pattern))
	if err != nil {
		return err
	}
	if !re.MatchString(in.Secret) {
		// The secret itself stays out of the report: its length and prefix say enough.
		return fmt.Errorf("expected the signing secret to match %s, got %d characters (whsec_ prefix: %t)", unq(pattern), len(in.Secret), strings.HasPrefix(in.Secret, "whsec_"))
	}
	return nil
}

// transactionLaw checks the current Get Transaction answer against decisions D7: a buy or a
// sell is one order of that side; a robo deposit, withdrawal or rebalance is one or more legs
// of the robo product sharing placed_at; every leg is of the transaction's product; the
// transaction is completed exactly when every leg is, and carries completed_at exactly then.
func (w *world) transactionLaw() error {
	r, err := w.last()
	if err != nil {
		return err
	}
	t := r.json()
	orders := t.Get("orders").Array()
	typ, product, status := t.Get("type").String(), t.Get("product").String(), t.Get("status").String()
	if len(orders) == 0 {
		return fmt.Errorf("expected the transaction to list its orders, got %s", r)
	}
	switch typ {
	case "buy", "sell":
		if len(orders) != 1 || orders[0].Get("side").String() != typ {
			return fmt.Errorf("expected a %s to be one order of that side, got %d orders: %s", typ, len(orders), truncate(t.Get("orders").Raw, 300))
		}
	case "deposit", "withdrawal", "rebalance":
		if product != "robo" {
			return fmt.Errorf("expected a %s to be of the robo product, got %q", typ, product)
		}
		for _, o := range orders[1:] {
			if o.Get("placed_at").String() != orders[0].Get("placed_at").String() {
				return fmt.Errorf("expected every leg of a %s to share placed_at, got %s and %s", typ, orders[0].Get("placed_at").Str, o.Get("placed_at").Str)
			}
		}
	default:
		return fmt.Errorf("expected type buy, sell, deposit, withdrawal or rebalance, got %q", typ)
	}
	all := true
	for _, o := range orders {
		if o.Get("product").String() != product {
			return fmt.Errorf("expected every order of a %s transaction to be of that product, got %s", product, o.Raw)
		}
		all = all && o.Get("status").String() == "completed"
	}
	if (status == "completed") != all {
		return fmt.Errorf("expected the transaction completed exactly when every leg is, got status %s and legs %s", status, truncate(t.Get("orders.#.status").Raw, 200))
	}
	if t.Get("completed_at").Exists() != (status == "completed") {
		return fmt.Errorf("expected completed_at exactly when completed, got status %s and completed_at %s", status, orAbsent(t.Get("completed_at")))
	}
	return nil
}

// writesNumber checks the JSON text of a value: an integer beyond 64 bits must be written as
// the integer it is, not as a float or a string (decisions D6: Python's unbounded int).
func (w *world) writesNumber(number, path string) error {
	r, err := w.last()
	if err != nil {
		return err
	}
	if got := r.json().Get(unq(path)); got.Type != gjson.Number || got.Raw != unq(number) {
		return fmt.Errorf("expected %s to be written as the number %s, got %s", unq(path), unq(number), orAbsent(got))
	}
	return nil
}
