package validate_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/partnersim/partnersim/simulator/validate"
)

// checkShape asserts that err is nil, ErrBodyParse, or Errors rendering as
// {"detail":[{"type":..,"loc":[..],"msg":..,"input":..(,"ctx":{..})}, ...]}
// with the keys in that order.
func checkShape(t *testing.T, err error) {
	t.Helper()
	if err == nil || errors.Is(err, validate.ErrBodyParse) {
		return
	}
	var errs validate.Errors
	if !errors.As(err, &errs) {
		t.Fatalf("Err() = %T, want Errors", err)
	}
	if len(errs) == 0 {
		t.Fatalf("Err() returned empty Errors")
	}
	_ = errs.Error()
	b, merr := errs.MarshalJSON()
	if merr != nil {
		t.Fatalf("MarshalJSON: %v", merr)
	}
	if err := shape(b); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
}

func shape(b []byte) error {
	if !json.Valid(b) {
		return errors.New("invalid JSON")
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	expect := func(want any) error {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		if tok != want {
			return fmt.Errorf("token %v, want %v", tok, want)
		}
		return nil
	}
	for _, w := range []any{json.Delim('{'), "detail", json.Delim('[')} {
		if err := expect(w); err != nil {
			return err
		}
	}
	for d.More() {
		if err := expect(json.Delim('{')); err != nil {
			return err
		}
		var item struct {
			Type  string          `json:"type"`
			Loc   []any           `json:"loc"`
			Msg   string          `json:"msg"`
			Input json.RawMessage `json:"input"`
			Ctx   json.RawMessage `json:"ctx"`
		}
		keys := []string{}
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return err
			}
			ks, _ := k.(string)
			keys = append(keys, ks)
			var raw json.RawMessage
			if err := d.Decode(&raw); err != nil {
				return err
			}
			switch ks {
			case "type":
				err = json.Unmarshal(raw, &item.Type)
			case "loc":
				err = json.Unmarshal(raw, &item.Loc)
			case "msg":
				err = json.Unmarshal(raw, &item.Msg)
			case "input":
				item.Input = raw
			case "ctx":
				var ctx map[string]any
				err = json.Unmarshal(raw, &ctx)
			}
			if err != nil {
				return fmt.Errorf("key %s: %v", ks, err)
			}
		}
		if err := expect(json.Delim('}')); err != nil {
			return err
		}
		order := fmt.Sprint(keys)
		if order != "[type loc msg input]" && order != "[type loc msg input ctx]" {
			return fmt.Errorf("keys %s", order)
		}
		if item.Type == "" || item.Msg == "" || len(item.Loc) == 0 {
			return fmt.Errorf("empty type, msg or loc")
		}
		switch item.Loc[0] {
		case "body", "query", "path":
		default:
			return fmt.Errorf("loc starts with %v", item.Loc[0])
		}
		for _, e := range item.Loc[1:] {
			switch e.(type) {
			case string, float64:
			default:
				return fmt.Errorf("loc element %T", e)
			}
		}
	}
	for _, w := range []any{json.Delim(']'), json.Delim('}')} {
		if err := expect(w); err != nil {
			return err
		}
	}
	if _, err := d.Token(); err != io.EOF {
		return errors.New("trailing data")
	}
	return nil
}

// FuzzBody feeds arbitrary bodies and content types through the body
// accessors a control-plane handler would use.
func FuzzBody(f *testing.F) {
	f.Add("application/json", []byte(`{"user_account_id":"u1","user_account_id_type":"core"}`))
	f.Add("", []byte(`{"url":"https://x.org","event_type":"kyc","amount":"1.5","n":3,"t":"2024-01-01"}`))
	f.Add("text/plain", []byte("hello"))
	f.Add("application/json", []byte(`{"accounts":[{"product":"crypto","cash":"1e3","holdings":[{"symbol":"B","quantity":"x"}]}]}`))
	f.Add("application/json", []byte("\xff\xfe{\x00}\x00"))
	f.Add("application/json", []byte(`[1,2,{"a":NaN}]`))
	f.Fuzz(fuzzBody)
}

func fuzzBody(t *testing.T, ctype string, raw []byte) {
	c := validate.New()
	b := c.Body(ctype, raw)
	b.Str("user_account_id")
	b.Enum("user_account_id_type", "platform", "core", "dbp")
	b.OptStr("recurring_order_id")
	b.URL("url")
	b.Decimal("amount", validate.Gt(0))
	b.OptDecimal("quantity")
	b.Int("n", validate.Ge(1), validate.Le(100))
	b.OptInt("m")
	b.Bool("flag")
	b.DateTime("t")
	b.OptDateTime("u")
	b.StrList("scopes")
	b.Literal("side", "buy", "sell")
	v := b.Object("vendors")
	v.NullableStr("core")
	b.Dict("meta").Keys()
	b.List("accounts").Each(func(i int, a validate.Value) {
		o := a.Object()
		o.Enum("product", "crypto", "securities")
		o.Decimal("cash")
		if l, ok := o.OptList("holdings"); ok {
			l.Each(func(_ int, h validate.Value) { h.Object().Decimal("quantity") })
		}
	})
	checkShape(t, c.Err())

	c2 := validate.New()
	c2.BodyValue(ctype, raw).DecimalMap(validate.Gt(0))
	checkShape(t, c2.Err())
}

// FuzzQuery feeds arbitrary raw query strings through ParseQuery and the
// parameter validators of the list endpoints.
func FuzzQuery(f *testing.F) {
	f.Add("per_page=0&last_record_number=-1&sort_order=up")
	f.Add("created_at_start=2024-13-01&created_at_end=1700000000.5&user_account_id_type=core")
	f.Add("per_page=%2B1_0&flag=yes&amount=1e3")
	f.Add("a=%zz;b=\xff&per_page=99999999999999999999")
	f.Fuzz(fuzzQuery)
}

func fuzzQuery(t *testing.T, raw string) {
	c := validate.New()
	c.PathStr("user_account_id", raw)
	q := c.Query(validate.ParseQuery(raw))
	q.Enum("user_account_id_type", true, "", "platform", "core", "dbp")
	q.Str("user_account_id")
	q.Int("per_page", 25, validate.Ge(1), validate.Le(100))
	q.Int("last_record_number", 0, validate.Ge(0))
	q.Enum("sort_order", false, "desc", "asc", "desc")
	q.Literal("sort_key", false, "created_at", "created_at", "user_account_id")
	q.DateTime("created_at_start")
	q.DateTime("created_at_end")
	q.Bool("flag", false)
	q.Decimal("amount")
	q.OptInt("page")
	checkShape(t, c.Err())
}
