package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// decodeJSON is kin-openapi's JSON decoding, which jsonBody stands in for.
func decodeJSON(b []byte) (any, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return v, d.Decode(&v)
}

// jsonBodyAgrees fails when jsonBody's fast path decodes b otherwise than encoding/json.
func jsonBodyAgrees(t *testing.T, b []byte) (fast bool) {
	t.Helper()
	got, ok := fastJSON(b)
	if !ok {
		return false
	}
	want, err := decodeJSON(b)
	if err != nil {
		t.Fatalf("%q: the fast path decoded what encoding/json refuses (%v)", b, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: the fast path decoded %#v, encoding/json %#v", b, got, want)
	}
	return true
}

// The fast path decodes every mutant of right answers (and the answers themselves) as
// encoding/json does, and leaves to it what it cannot read alike.
func TestJSONBodyDecodesAsEncodingJSON(t *testing.T) {
	fast := 0
	for _, body := range []string{
		`{"items":[{"user_account_id":"u1","total_current_market_value":"10.00","accounts":[{"product":"crypto","current_market_value":"10.00","kyc_status":"approved","kyc_approved_at":"2026-01-02T03:04:05Z"},{"product":"robo","current_market_value":"0.00","kyc_status":"pending"}]}],"total_records":1,"last_record_number":1,"per_page":25}`,
		`{"detail":[{"type":"greater_than_equal","loc":["query","per_page"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}]}`,
		`{"a":1E+2,"b":-0.0,"c":[],"d":{},"e":[[]],"f":null,"g":true,"h":false,"a":2}`,
	} {
		for _, m := range mutants(t, body) {
			if jsonBodyAgrees(t, []byte(m)) {
				fast++
			}
		}
	}
	for _, slow := range []string{`"caf\u00e9"`, `"café"`, `{"a":1} {"b":2}`, `{"a":1`, `{"a":"x\ty"}`, ``, ` `} {
		if _, ok := fastJSON([]byte(slow)); ok {
			t.Errorf("%q took the fast path", slow)
		}
	}
	if fast == 0 {
		t.Fatal("nothing took the fast path: the test compares nothing")
	}
}

func FuzzJSONBody(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e3,"x",null,true,false,{}]}`, `1e400`, `[]`, `"s"`, `-0`, ` 7 `, `{"a":1,"a":2}`, `{"a":1}x`, "\"\x01\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { jsonBodyAgrees(t, b) })
}

// dateTime accepts exactly what kin-openapi's regular expression for date-time accepts.
func FuzzDateTime(f *testing.F) {
	for _, s := range []string{"2026-01-02T03:04:05Z", "2026-12-31T23:59:60.123456+14:00", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00-00:00",
		"2026-01-32T00:00:00Z", "2026-01-02T24:00:00Z", "2026-01-02T03:60:05Z", "2026-01-02T03:04:61Z", "2026-01-02T03:04:05.Z",
		"2026-01-02T03:04:05+24:00", "2026-01-02T03:04:05+05:60", "2026-01-02T03:04:05", "2026-01-02 03:04:05Z", "2026-01-02T03:04:05Z\n", "x"} {
		f.Add(s)
	}
	re := regexp.MustCompile(openapi3.FormatOfStringDateTime)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := dateTime(s), re.MatchString(s); got != want {
			t.Fatalf("%q: dateTime says %v, the regular expression %v", s, got, want)
		}
	})
}

// Every one-byte change, insertion and cut of right date-times is judged as the regular
// expression judges it.
func TestDateTimeAnswersAsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(openapi3.FormatOfStringDateTime)
	bytes := "0123456789+-.:TZtz \n"
	n := 0
	for _, s := range []string{"2026-01-02T03:04:05Z", "1999-12-31T23:59:60.5-09:30", "2026-10-20T19:09:00.000001+00:00"} {
		var cases []string
		for i := range len(s) + 1 {
			for _, c := range bytes {
				if i < len(s) {
					cases = append(cases, s[:i]+string(c)+s[i+1:])
				}
				cases = append(cases, s[:i]+string(c)+s[i:])
			}
			cases = append(cases, s[:i])
		}
		for _, c := range cases {
			if got, want := dateTime(c), re.MatchString(c); got != want {
				t.Errorf("%q: dateTime says %v, the regular expression %v", c, got, want)
			}
			n++
		}
	}
	t.Logf("%d strings compared", n)
}

// dayInMonth answers as time.Parse for every day 01–31 of every month of years around the
// leap rules' edges.
func TestDayInMonthAnswersAsTimeParse(t *testing.T) {
	for _, y := range []int{0, 4, 100, 400, 1900, 1999, 2000, 2024, 2025, 2100, 9996, 9999} {
		for m := 1; m <= 12; m++ {
			for d := 1; d <= 31; d++ {
				v := fmt.Sprintf("%04d-%02d-%02dT00:00:00Z", y, m, d)
				_, err := time.Parse(time.DateOnly, v[:10])
				if got := dayInMonth(v); got != (err == nil) {
					t.Errorf("%s: dayInMonth says %v, time.Parse %v", v, got, err)
				}
			}
		}
	}
}
