package check

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/tidwall/gjson"
)

// kin-openapi's body decoders and format validators are process-wide registrations, read
// without a lock: they are replaced before anything can use them, and the checker is their one
// user here. Each gives kin-openapi's answer, faster where it can.
func init() {
	for _, ct := range []string{"application/json", "application/json-patch+json", "application/merge-patch+json", "application/ld+json"} {
		openapi3filter.RegisterBodyDecoder(ct, jsonBody)
	}
	slow := openapi3.SchemaStringFormats["date-time"]
	openapi3.DefineStringFormatValidator("date-time", openapi3.NewCallbackValidator(func(v string) error {
		if !dateTime(v) {
			return slow.Validate(v) // its error, as before
		}
		if dayInMonth(v) {
			return nil
		}
		_, err := time.Parse(time.DateOnly, v[:len(time.DateOnly)]) // its error, as before
		return err
	}))
}

// dayInMonth says whether the date that begins v, YYYY-MM-DD with month 01–12 and day 01–31
// (dateTime's), has that day in that month: what time.Parse adds to the regular expression.
func dayInMonth(v string) bool {
	year := int(v[0]-'0')*1000 + int(v[1]-'0')*100 + int(v[2]-'0')*10 + int(v[3]-'0')
	month, day := int(v[5]-'0')*10+int(v[6]-'0'), int(v[8]-'0')*10+int(v[9]-'0')
	switch month {
	case 4, 6, 9, 11:
		return day <= 30
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return day <= 29
		}
		return day <= 28
	}
	return true
}

// dateTime says whether v matches openapi3.FormatOfStringDateTime, kin-openapi's regular
// expression for format date-time, here without the regexp machine (two fifths of its time):
// YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM), month 01–12, day 01–31, hour 00–23, second 00–60.
func dateTime(v string) bool {
	n := len(v)
	if n < 20 || v[4] != '-' || v[7] != '-' || v[10] != 'T' || v[13] != ':' || v[16] != ':' {
		return false
	}
	for _, i := range []int{0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18} {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	two := func(i int) int { return int(v[i]-'0')*10 + int(v[i+1]-'0') }
	if m := two(5); m < 1 || m > 12 {
		return false
	}
	if d := two(8); d < 1 || d > 31 {
		return false
	}
	if two(11) > 23 || v[14] > '5' || two(17) > 60 {
		return false
	}
	rest := v[19:]
	if rest[0] == '.' {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 1 {
			return false
		}
		rest = rest[i:]
	}
	if rest == "Z" {
		return true
	}
	if len(rest) != 6 || (rest[0] != '+' && rest[0] != '-') || rest[3] != ':' {
		return false
	}
	for _, i := range []int{1, 2, 4, 5} {
		if rest[i] < '0' || rest[i] > '9' {
			return false
		}
	}
	return int(rest[1]-'0')*10+int(rest[2]-'0') <= 23 && rest[4] <= '5'
}

// jsonBody is kin-openapi's JSONBodyDecoder (encoding/json with UseNumber: objects as
// map[string]any, arrays as []any, numbers as json.Number), faster where it can be: a body of
// one valid JSON value, in ASCII, with no escape in its strings — what an API answers — is
// checked by gjson and built in one pass, in a third of encoding/json's time (a tenth of a check's).
// Any other body, and every error, is encoding/json's as before (a test compares both on
// every mutant of right answers, and a fuzz test on any input).
func jsonBody(body io.Reader, header http.Header, schema *openapi3.SchemaRef, enc openapi3filter.EncodingFn) (any, error) {
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	if v, ok := fastJSON(b); ok {
		return v, nil
	}
	return openapi3filter.JSONBodyDecoder(bytes.NewReader(b), header, schema, enc)
}

// fastJSON decodes b as encoding/json decodes it into an any with UseNumber, when b is one
// valid JSON value in ASCII without a backslash (its strings are then their bytes); ok false
// otherwise.
func fastJSON(b []byte) (v any, ok bool) {
	for _, c := range b {
		if c >= 0x80 || c == '\\' {
			return nil, false
		}
	}
	if !gjson.ValidBytes(b) {
		return nil, false
	}
	v, _ = build(string(b), 0) // one copy: the strings are slices of it
	return v, true
}

// build decodes the value at s[i:], which gjson found valid JSON in ASCII without escapes, in
// one pass; it returns the value and where it ends.
func build(s string, i int) (any, int) {
	i = skipSpace(s, i)
	switch s[i] {
	case '{':
		out := map[string]any{}
		i = skipSpace(s, i+1)
		if s[i] == '}' {
			return out, i + 1
		}
		for {
			i = skipSpace(s, i)
			end := i + 1 + strings.IndexByte(s[i+1:], '"')
			k := s[i+1 : end]
			i = skipSpace(s, end+1) + 1 // the colon
			out[k], i = build(s, i)
			i = skipSpace(s, i)
			if s[i] == '}' {
				return out, i + 1
			}
			i++ // the comma
		}
	case '[':
		out := []any{}
		i = skipSpace(s, i+1)
		if s[i] == ']' {
			return out, i + 1
		}
		for {
			var v any
			v, i = build(s, i)
			out = append(out, v)
			i = skipSpace(s, i)
			if s[i] == ']' {
				return out, i + 1
			}
			i++
		}
	case '"':
		end := i + 1 + strings.IndexByte(s[i+1:], '"')
		return s[i+1 : end], end + 1
	case 't':
		return true, i + 4
	case 'f':
		return false, i + 5
	case 'n':
		return nil, i + 4
	}
	j := i
	for j < len(s) && strings.IndexByte("+-.0123456789eE", s[j]) >= 0 {
		j++
	}
	return json.Number(s[i:j]), j
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}
