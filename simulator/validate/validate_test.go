package validate_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/simulator/validate"
)

// body renders c.Err() the way the HTTP layer sends it: the 422 JSON, or
// "400" for ErrBodyParse, or "ok" when nothing failed.
func body(tb testing.TB, c *validate.Collector) string {
	tb.Helper()
	err := c.Err()
	if err == nil {
		return "ok"
	}
	if errors.Is(err, validate.ErrBodyParse) {
		return "400"
	}
	var errs validate.Errors
	if !errors.As(err, &errs) {
		tb.Fatalf("Err() = %T %v, want validate.Errors", err, err)
	}
	b, merr := errs.MarshalJSON()
	if merr != nil {
		tb.Fatalf("MarshalJSON: %v", merr)
	}
	if !json.Valid(b) {
		tb.Fatalf("MarshalJSON produced invalid JSON: %s", b)
	}
	return string(b)
}

func query(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

const ct = "application/json"

// Each row: where the expected body comes from, what the handler does, and
// FastAPI's answer. "ref" is docs/reference/pydantic-errors.md; "probe" is
// pydantic 2.13.4 / pydantic-core 2.46.4 called as FastAPI calls it.
var cases = []struct {
	name string
	run  func(c *validate.Collector)
	want string
}{
	// --- query and path parameters ---
	{
		// ref §3 greater_than_equal row; fastapi tests/test_tutorial/test_query_param_models/test_tutorial001.py
		"query ge", func(c *validate.Collector) {
			c.Query(query("per_page", "0")).Int("per_page", 25, validate.Ge(1), validate.Le(100))
		},
		`{"detail":[{"type":"greater_than_equal","loc":["query","per_page"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}]}`,
	},
	{
		// ref §3 less_than_equal row
		"query le", func(c *validate.Collector) {
			c.Query(query("per_page", "101")).Int("per_page", 25, validate.Ge(1), validate.Le(100))
		},
		`{"detail":[{"type":"less_than_equal","loc":["query","per_page"],"msg":"Input should be less than or equal to 100","input":"101","ctx":{"le":100}}]}`,
	},
	{
		// ref §3 int_parsing row ("abc")
		"query int_parsing", func(c *validate.Collector) {
			c.Query(query("per_page", "abc")).Int("per_page", 25, validate.Ge(1), validate.Le(100))
		},
		`{"detail":[{"type":"int_parsing","loc":["query","per_page"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"abc"}]}`,
	},
	{
		// ref §3 int_parsing row: a query string "2.5" gives the same error
		"query 2.5", func(c *validate.Collector) {
			c.Query(query("per_page", "2.5")).Int("per_page", 25, validate.Ge(1), validate.Le(100))
		},
		`{"detail":[{"type":"int_parsing","loc":["query","per_page"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"2.5"}]}`,
	},
	{
		// pydantic-core tests/validators/test_int.py: ('1.', Err) — pydantic-core rejects "5."
		"query 5.", func(c *validate.Collector) {
			c.Query(query("per_page", "5.")).Int("per_page", 25)
		},
		`{"detail":[{"type":"int_parsing","loc":["query","per_page"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"5."}]}`,
	},
	{
		// pydantic-core src/input/shared.rs str_as_int: huge ints parse, then fail le with the raw input
		"query huge int", func(c *validate.Collector) {
			c.Query(query("per_page", "99999999999999999999")).Int("per_page", 25, validate.Ge(1), validate.Le(100))
		},
		`{"detail":[{"type":"less_than_equal","loc":["query","per_page"],"msg":"Input should be less than or equal to 100","input":"99999999999999999999","ctx":{"le":100}}]}`,
	},
	{
		// pydantic-core tests/validators/test_int.py test_too_long
		"query int too long", func(c *validate.Collector) {
			c.Query(query("n", strings.Repeat("1", 4301))).Int("n", 0)
		},
		`{"detail":[{"type":"int_parsing_size","loc":["query","n"],"msg":"Unable to parse input string as an integer, exceeded maximum size","input":"` + strings.Repeat("1", 4301) + `"}]}`,
	},
	{
		// ref §2 query row: missing required param, input null; fastapi tests/test_dependency_overrides.py
		"query missing required", func(c *validate.Collector) {
			c.Query(query()).Enum("user_account_id_type", true, "", "platform", "core", "dbp")
		},
		`{"detail":[{"type":"missing","loc":["query","user_account_id_type"],"msg":"Field required","input":null}]}`,
	},
	{
		// ref §3 enum row: expected is the members' reprs joined with ", " and " or "
		"query enum", func(c *validate.Collector) {
			c.Query(query("user_account_id_type", "member")).Enum("user_account_id_type", true, "", "platform", "core", "dbp")
		},
		`{"detail":[{"type":"enum","loc":["query","user_account_id_type"],"msg":"Input should be 'platform', 'core' or 'dbp'","input":"member","ctx":{"expected":"'platform', 'core' or 'dbp'"}}]}`,
	},
	{
		// pydantic-core src/validators/literal.rs expected_repr_name: one value, two values
		"enum one and two values", func(c *validate.Collector) {
			q := c.Query(query("a", "x", "b", "x"))
			q.Enum("a", true, "", "desc")
			q.Enum("b", false, "desc", "asc", "desc")
		},
		`{"detail":[{"type":"enum","loc":["query","a"],"msg":"Input should be 'desc'","input":"x","ctx":{"expected":"'desc'"}},{"type":"enum","loc":["query","b"],"msg":"Input should be 'asc' or 'desc'","input":"x","ctx":{"expected":"'asc' or 'desc'"}}]}`,
	},
	{
		// ref §3 Literal row; fastapi tests/test_tutorial/test_query_param_models/test_tutorial001.py
		"query literal", func(c *validate.Collector) {
			c.Query(query("order_by", "invalid")).Literal("order_by", false, "created_at", "created_at", "updated_at")
		},
		`{"detail":[{"type":"literal_error","loc":["query","order_by"],"msg":"Input should be 'created_at' or 'updated_at'","input":"invalid","ctx":{"expected":"'created_at' or 'updated_at'"}}]}`,
	},
	{
		// Starlette QueryParams.get: the last value of a repeated name wins
		"query last value wins", func(c *validate.Collector) {
			c.Query(query("per_page", "5", "per_page", "0")).Int("per_page", 25, validate.Ge(1))
		},
		`{"detail":[{"type":"greater_than_equal","loc":["query","per_page"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}]}`,
	},
	{
		// ref §3 bool_parsing row; fastapi tests/test_path.py (path bool "foobar")
		"bool_parsing", func(c *validate.Collector) {
			c.Params("path", func(string) (string, bool) { return "foobar", true }).Bool("item_id", false)
		},
		`{"detail":[{"type":"bool_parsing","loc":["path","item_id"],"msg":"Input should be a valid boolean, unable to interpret input","input":"foobar"}]}`,
	},
	{
		// ref §4: "not a date" → invalid character in year; FastAPI test_tutorial/test_encoder/test_tutorial001.py
		"datetime not a date", func(c *validate.Collector) {
			c.Query(query("created_at_start", "not a date")).DateTime("created_at_start")
		},
		`{"detail":[{"type":"datetime_from_date_parsing","loc":["query","created_at_start"],"msg":"Input should be a valid datetime or date, invalid character in year","input":"not a date","ctx":{"error":"invalid character in year"}}]}`,
	},
	{
		// ref §4 observed cases
		"datetime observed cases", func(c *validate.Collector) {
			q := c.Query(query("a", "2024-13-01", "b", "2024-01-01T25:00:00", "c", "2024-02-30T00:00:00Z", "d", ""))
			q.DateTime("a")
			q.DateTime("b")
			q.DateTime("c")
			q.DateTime("d")
		},
		`{"detail":[` +
			`{"type":"datetime_from_date_parsing","loc":["query","a"],"msg":"Input should be a valid datetime or date, month value is outside expected range of 1-12","input":"2024-13-01","ctx":{"error":"month value is outside expected range of 1-12"}},` +
			`{"type":"datetime_from_date_parsing","loc":["query","b"],"msg":"Input should be a valid datetime or date, unexpected extra characters at the end of the input","input":"2024-01-01T25:00:00","ctx":{"error":"unexpected extra characters at the end of the input"}},` +
			`{"type":"datetime_from_date_parsing","loc":["query","c"],"msg":"Input should be a valid datetime or date, day value is outside expected range","input":"2024-02-30T00:00:00Z","ctx":{"error":"day value is outside expected range"}},` +
			`{"type":"datetime_from_date_parsing","loc":["query","d"],"msg":"Input should be a valid datetime or date, input is too short","input":"","ctx":{"error":"input is too short"}}]}`,
	},
	{
		// ref §3 datetime_parsing row: core tests/validators/test_datetime.py (1.25e101)
		"datetime numeric out of range", func(c *validate.Collector) {
			c.Body(ct, []byte(`{"timestamp":1.25e101}`)).DateTime("timestamp")
		},
		`{"detail":[{"type":"datetime_parsing","loc":["body","timestamp"],"msg":"Input should be a valid datetime, dates after 9999 are not supported as unix timestamps","input":1.25e+101,"ctx":{"error":"dates after 9999 are not supported as unix timestamps"}}]}`,
	},
	{
		// probe: year 0 parses in speedate, then Python's datetime rejects it
		"datetime year 0", func(c *validate.Collector) {
			c.Query(query("t", "0000-01-01T00:00:00")).DateTime("t")
		},
		`{"detail":[{"type":"datetime_parsing","loc":["query","t"],"msg":"Input should be a valid datetime, year 0 is out of range","input":"0000-01-01T00:00:00","ctx":{"error":"year 0 is out of range"}}]}`,
	},
	{
		// pydantic-core src/input/datetime.rs nan_check
		"datetime NaN", func(c *validate.Collector) {
			c.Body(ct, []byte(`{"t":NaN}`)).DateTime("t")
		},
		`{"detail":[{"type":"datetime_parsing","loc":["body","t"],"msg":"Input should be a valid datetime, NaN values not permitted","input":null,"ctx":{"error":"NaN values not permitted"}}]}`,
	},
	{
		// core tests/validators/test_datetime.py: true/null/list are datetime_type
		"datetime_type", func(c *validate.Collector) {
			b := c.Body(ct, []byte(`{"a":true,"b":null,"c":[1]}`))
			b.DateTime("a")
			b.DateTime("b")
			b.DateTime("c")
		},
		`{"detail":[{"type":"datetime_type","loc":["body","a"],"msg":"Input should be a valid datetime","input":true},{"type":"datetime_type","loc":["body","b"],"msg":"Input should be a valid datetime","input":null},{"type":"datetime_type","loc":["body","c"],"msg":"Input should be a valid datetime","input":[1]}]}`,
	},
	{
		// ref §3 value_error row; fastapi tests/test_tutorial/test_query_params_str_validations (AfterValidator)
		"hand-built value_error", func(c *validate.Collector) {
			c.Add(validate.ValueError(validate.Loc{"query", "id"}, "wtf-yes", "Invalid ID format, it must start with 'isbn-' or 'imdb-'"))
		},
		`{"detail":[{"type":"value_error","loc":["query","id"],"msg":"Value error, Invalid ID format, it must start with 'isbn-' or 'imdb-'","input":"wtf-yes","ctx":{"error":{}}}]}`,
	},

	// --- body handling (fastapi tests/test_tutorial/test_body/test_tutorial001*.py) ---
	{
		// test_post_with_only_name: missing echoes the whole body object
		"body field missing", func(c *validate.Collector) {
			b := c.Body(ct, []byte(`{"name": "Foo"}`))
			b.Str("name")
			b.Decimal("price")
		},
		`{"detail":[{"type":"missing","loc":["body","price"],"msg":"Field required","input":{"name":"Foo"}}]}`,
	},
	{
		// test_post_with_no_data
		"body empty object", func(c *validate.Collector) {
			b := c.Body(ct, []byte(`{}`))
			b.Str("name")
			b.Decimal("price")
		},
		`{"detail":[{"type":"missing","loc":["body","name"],"msg":"Field required","input":{}},{"type":"missing","loc":["body","price"],"msg":"Field required","input":{}}]}`,
	},
	{
		// test_post_with_none: JSON null body
		"body null", func(c *validate.Collector) {
			c.Body(ct, []byte(`null`)).Str("name")
		},
		`{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`,
	},
	{
		// ref §3 body missing row: no bytes at all
		"body empty", func(c *validate.Collector) {
			c.Body("", nil).Str("name")
		},
		`{"detail":[{"type":"missing","loc":["body"],"msg":"Field required","input":null}]}`,
	},
	{
		// test_post_broken_body, with loc ["body"] instead of ["body", 1] (decisions D4)
		"body broken json", func(c *validate.Collector) {
			c.Body(ct, []byte(`{some broken json}`)).Str("name")
		},
		`{"detail":[{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting property name enclosed in double quotes"}}]}`,
	},
	{
		// test_post_form_for_json: a form body is not JSON, the raw text is the input
		"body form", func(c *validate.Collector) {
			c.Body("application/x-www-form-urlencoded", []byte(`name=Foo&price=50.5`)).Str("name")
		},
		`{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"name=Foo&price=50.5"}]}`,
	},
	{
		// test_wrong_headers: text/plain
		"body text/plain", func(c *validate.Collector) {
			c.Body("text/plain", []byte(`{"name": "Foo", "price": 50.5}`)).Str("name")
		},
		`{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"{\"name\": \"Foo\", \"price\": 50.5}"}]}`,
	},
	{
		// test_wrong_headers: application/geo+json-seq and application/not-really-json are not JSON
		"body not-really-json", func(c *validate.Collector) {
			c.Body("application/not-really-json", []byte(`{"name": "Foo", "price": 50.5}`)).Str("name")
		},
		`{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"{\"name\": \"Foo\", \"price\": 50.5}"}]}`,
	},
	{
		// ref §3 model_attributes_type row: a JSON string body
		"body json string", func(c *validate.Collector) {
			c.Body(ct, []byte(`"hello"`)).Str("name")
		},
		`{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"hello"}]}`,
	},
	{
		// ref §2: a body that is not a JSON object (array) → model_attributes_type at ["body"]
		"body json array", func(c *validate.Collector) {
			c.Body(ct, []byte(`[1, 2.0]`)).Str("name")
		},
		`{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":[1,2.0]}]}`,
	},
	{
		// ref §3 string_type row; null for a required str is string_type, not missing
		"string_type", func(c *validate.Collector) {
			b := c.Body(ct, []byte(`{"user_account_id":123,"user_account_id_type":null}`))
			b.Str("user_account_id")
			b.Str("user_account_id_type")
		},
		`{"detail":[{"type":"string_type","loc":["body","user_account_id"],"msg":"Input should be a valid string","input":123},{"type":"string_type","loc":["body","user_account_id_type"],"msg":"Input should be a valid string","input":null}]}`,
	},
	{
		// ref §3 int_from_float and int_type rows
		"int_from_float and int_type", func(c *validate.Collector) {
			b := c.Body(ct, []byte(`{"a":1.5,"b":[1],"c":"7","d":2.0,"e":true}`))
			b.Int("a")
			b.Int("b")
			if b.Int("c") != 7 || b.Int("d") != 2 || b.Int("e") != 1 {
				panic("lax int conversions")
			}
		},
		`{"detail":[{"type":"int_from_float","loc":["body","a"],"msg":"Input should be a valid integer, got a number with a fractional part","input":1.5},{"type":"int_type","loc":["body","b"],"msg":"Input should be a valid integer","input":[1]}]}`,
	},
	{
		// ref §3 bool_type row
		"bool_type", func(c *validate.Collector) {
			c.Body(ct, []byte(`{"flag":[true]}`)).Bool("flag")
		},
		`{"detail":[{"type":"bool_type","loc":["body","flag"],"msg":"Input should be a valid boolean","input":[true]}]}`,
	},
	{
		// ref §3 dict_type row
		"dict_type", func(c *validate.Collector) {
			c.Body(ct, []byte(`{"metadata":"x"}`)).Dict("metadata")
		},
		`{"detail":[{"type":"dict_type","loc":["body","metadata"],"msg":"Input should be a valid dictionary","input":"x"}]}`,
	},
	{
		// ref §2 nested rows: ["body","address","city"] and list indexes; missing echoes the enclosing object
		"nested locations", func(c *validate.Collector) {
			b := c.Body(ct, []byte(`{"address":{"zip":"1"},"items":[{"sku":"a"},{"qty":1}],"vendors":"x"}`))
			b.Object("address").Str("city")
			b.List("items").Each(func(i int, v validate.Value) { v.Object().Str("sku") })
			b.Object("vendors").NullableStr("core")
		},
		`{"detail":[{"type":"missing","loc":["body","address","city"],"msg":"Field required","input":{"zip":"1"}},{"type":"missing","loc":["body","items",1,"sku"],"msg":"Field required","input":{"qty":1}},{"type":"model_attributes_type","loc":["body","vendors"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"x"}]}`,
	},
	{
		// pydantic list validation reports every bad item; list_type for a non-list
		"str list", func(c *validate.Collector) {
			b := c.Body(ct, []byte(`{"scopes":["read:user",7,null],"ids":"x"}`))
			b.StrList("scopes")
			b.StrList("ids")
		},
		`{"detail":[{"type":"string_type","loc":["body","scopes",1],"msg":"Input should be a valid string","input":7},{"type":"string_type","loc":["body","scopes",2],"msg":"Input should be a valid string","input":null},{"type":"list_type","loc":["body","ids"],"msg":"Input should be a valid list","input":"x"}]}`,
	},
	{
		// probe: decimal_parsing, decimal_type, finite_number
		"decimal errors", func(c *validate.Collector) {
			b := c.Body(ct, []byte(`{"a":"abc","b":true,"c":"NaN","d":"-1"}`))
			b.Decimal("a")
			b.Decimal("b")
			b.Decimal("c")
			b.Decimal("d", validate.Gt(0))
		},
		`{"detail":[{"type":"decimal_parsing","loc":["body","a"],"msg":"Input should be a valid decimal","input":"abc"},{"type":"decimal_type","loc":["body","b"],"msg":"Decimal input should be an integer, float, string or Decimal object","input":true},{"type":"finite_number","loc":["body","c"],"msg":"Input should be a finite number","input":"NaN"},{"type":"greater_than","loc":["body","d"],"msg":"Input should be greater than 0","input":"-1","ctx":{"gt":0}}]}`,
	},
	{
		// probe: dict[str, Decimal] entries are located by key
		"decimal map", func(c *validate.Collector) {
			c.BodyValue(ct, []byte(`{"AAPL":"190.12","BTC":"x"}`)).DecimalMap()
		},
		`{"detail":[{"type":"decimal_parsing","loc":["body","BTC"],"msg":"Input should be a valid decimal","input":"x"}]}`,
	},
	{
		// pydantic HttpUrl docstring (pydantic/networks.py) and pydantic-core tests/validators/test_url.py
		"url errors", func(c *validate.Collector) {
			b := c.Body(ct, []byte(`{"a":"not a url","b":"ftp://invalid.url","c":"http://","d":"https://example com","e":"http://example.com:65536","f":123}`))
			for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
				b.URL(k)
			}
		},
		`{"detail":[` +
			`{"type":"url_parsing","loc":["body","a"],"msg":"Input should be a valid URL, relative URL without a base","input":"not a url","ctx":{"error":"relative URL without a base"}},` +
			`{"type":"url_scheme","loc":["body","b"],"msg":"URL scheme should be 'http' or 'https'","input":"ftp://invalid.url","ctx":{"expected_schemes":"'http' or 'https'"}},` +
			`{"type":"url_parsing","loc":["body","c"],"msg":"Input should be a valid URL, empty host","input":"http://","ctx":{"error":"empty host"}},` +
			`{"type":"url_parsing","loc":["body","d"],"msg":"Input should be a valid URL, invalid international domain name","input":"https://example com","ctx":{"error":"invalid international domain name"}},` +
			`{"type":"url_parsing","loc":["body","e"],"msg":"Input should be a valid URL, invalid port number","input":"http://example.com:65536","ctx":{"error":"invalid port number"}},` +
			`{"type":"url_type","loc":["body","f"],"msg":"URL input should be a string or URL","input":123}]}`,
	},
	{
		// pydantic-core tests/validators/test_url.py test_max_length, with HttpUrl's max_length=2083
		"url too long", func(c *validate.Collector) {
			u := "https://example.com/" + strings.Repeat("a", 2064)
			c.Body(ct, []byte(`{"url":"`+u+`"}`)).URL("url")
		},
		`{"detail":[{"type":"url_too_long","loc":["body","url"],"msg":"URL should have at most 2083 characters","input":"https://example.com/` + strings.Repeat("a", 2064) + `","ctx":{"max_length":2083}}]}`,
	},

	// --- CPython json decoder messages (Modules/_json.c, Lib/json/decoder.py) ---
	{"json Expecting value", func(c *validate.Collector) { c.Body(ct, []byte(`hello`)) },
		`{"detail":[{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting value"}}]}`},
	{"json whitespace only", func(c *validate.Collector) { c.Body(ct, []byte(" \n")) },
		`{"detail":[{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting value"}}]}`},
	{"json Expecting ':' delimiter", func(c *validate.Collector) { c.Body(ct, []byte(`{"a" 1}`)) },
		`{"detail":[{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting ':' delimiter"}}]}`},
	{"json Expecting ',' delimiter", func(c *validate.Collector) { c.Body(ct, []byte(`{"a":1 "b":2}`)) },
		`{"detail":[{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting ',' delimiter"}}]}`},
	{"json Extra data", func(c *validate.Collector) { c.Body(ct, []byte(`{"a":1} x`)) },
		`{"detail":[{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Extra data"}}]}`},
	{"json Unterminated string", func(c *validate.Collector) { c.Body(ct, []byte(`{"a":"abc`)) },
		`{"detail":[{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Unterminated string starting at"}}]}`},
	{"json Invalid control character", func(c *validate.Collector) { c.Body(ct, []byte("{\"a\":\"x\ny\"}")) },
		`{"detail":[{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Invalid control character at"}}]}`},
	{"json Invalid escape", func(c *validate.Collector) { c.Body(ct, []byte(`{"a":"\x"}`)) },
		`{"detail":[{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Invalid \\escape"}}]}`},
	{"json Invalid uXXXX escape", func(c *validate.Collector) { c.Body(ct, []byte(`{"a":"\u12g4"}`)) },
		`{"detail":[{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Invalid \\uXXXX escape"}}]}`},
	{"json trailing comma object (CPython 3.13)", func(c *validate.Collector) { c.Body(ct, []byte(`{"a":1,}`)) },
		`{"detail":[{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Illegal trailing comma before end of object"}}]}`},
	{"json trailing comma array (CPython 3.13)", func(c *validate.Collector) { c.Body(ct, []byte(`[1,]`)) },
		`{"detail":[{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Illegal trailing comma before end of array"}}]}`},
	{
		// FastAPI parses the body before validating parameters: json_invalid is the only item
		"json_invalid hides parameter errors", func(c *validate.Collector) {
			c.Query(query("per_page", "0")).Int("per_page", 25, validate.Ge(1))
			c.Body(ct, []byte(`{`)).Str("x")
		},
		`{"detail":[{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting property name enclosed in double quotes"}}]}`,
	},
	{
		// fastapi/routing.py: any other exception from json.loads → 400 (here: bytes not UTF-8)
		"undecodable body", func(c *validate.Collector) {
			c.Query(query("per_page", "0")).Int("per_page", 25, validate.Ge(1))
			c.Body(ct, []byte{'"', 0x80, '"'}).Str("x")
		},
		"400",
	},
	{
		// json.loads: a 4301-digit integer is a ValueError, not a JSONDecodeError
		"json int too long", func(c *validate.Collector) { c.Body(ct, []byte(`[1`+strings.Repeat("0", 4300)+`]`)) },
		"400",
	},
	{
		// fastapi/dependencies/utils.py: path, then query, then body errors, in call order
		"item order", func(c *validate.Collector) {
			c.Params("path", func(string) (string, bool) { return "x", true }).Int("item_id", 0)
			c.Query(query("per_page", "0")).Int("per_page", 25, validate.Ge(1))
			c.Body(ct, []byte(`{}`)).Str("name")
		},
		`{"detail":[{"type":"int_parsing","loc":["path","item_id"],"msg":"Input should be a valid integer, unable to parse string as an integer","input":"x"},{"type":"greater_than_equal","loc":["query","per_page"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}},{"type":"missing","loc":["body","name"],"msg":"Field required","input":{}}]}`,
	},

	// --- rendering like json.dumps(ensure_ascii=False, separators=(",", ":")) ---
	{
		// floats as Python repr, ints of any size, raw non-ASCII, <>& and U+2028 unescaped,
		// control characters escaped; duplicate keys: last value, first position (Python dict)
		"rendering", func(c *validate.Collector) {
			c.Body(ct, []byte(`[1.0,1e16,1e15,1e-05,0.0001,0.1,-0.0,123456789012345678901234567890,-0,1E400,NaN,`+
				`"é<>&\u2028\u0001\t\u007f\ud83d\ude00",{"b":1,"a":2,"b":3}]`))
		},
		`{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":[1.0,1e+16,1000000000000000.0,1e-05,0.0001,0.1,-0.0,123456789012345678901234567890,0,null,null,"é<>&` + "\u2028" + `\u0001\t` + "\x7f" + `😀",{"b":3,"a":2}]}]}`,
	},
	{
		// a lone surrogate: FastAPI would fail to encode it (500); the sandbox renders it null
		// (decisions D19), as every value it cannot render
		"lone surrogate", func(c *validate.Collector) { c.Body(ct, []byte(`"\ud800"`)) },
		`{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":null}]}`,
	},
	{
		// every validator but str's refuses a str holding a lone surrogate (pydantic-core
		// cannot make it Rust's UTF-8: string_unicode); a Decimal reports decimal_parsing; a
		// key with a surrogate makes its object unrenderable
		"lone surrogate in fields", func(c *validate.Collector) {
			b := c.Body(ct, []byte(`{"s":"a\ud800","e":"\udfff","u":"https://1.2.3.4/\ud800","n":"1\ud800","d":"\ud800","l":[{"\ud800":1},"\ud83d\ude00",1]}`))
			b.Str("s")
			b.Enum("e", "kyc")
			b.URL("u")
			b.Int("n")
			b.Decimal("d")
			b.Object("l")
		},
		`{"detail":[{"type":"string_unicode","loc":["body","e"],"msg":"Input should be a valid string, unable to parse raw data as a unicode string","input":null},` +
			`{"type":"string_unicode","loc":["body","u"],"msg":"Input should be a valid string, unable to parse raw data as a unicode string","input":null},` +
			`{"type":"string_unicode","loc":["body","n"],"msg":"Input should be a valid string, unable to parse raw data as a unicode string","input":null},` +
			`{"type":"decimal_parsing","loc":["body","d"],"msg":"Input should be a valid decimal","input":null},` +
			`{"type":"model_attributes_type","loc":["body","l"],"msg":"Input should be a valid dictionary or object to extract fields from","input":[null,"😀",1]}]}`,
	},
	{
		// bytes that are not UTF-8 (a body of another content type) cannot be rendered either
		"undecodable bytes", func(c *validate.Collector) { c.Body("text/plain", []byte("a\xffb")).Str("x") },
		`{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":null}]}`,
	},
	{
		// json.detect_encoding: UTF-8 with BOM, UTF-16 and UTF-32 bodies are decoded
		"utf-16 body", func(c *validate.Collector) {
			c.Body(ct, []byte{0xFF, 0xFE, '{', 0, '}', 0}).Str("name")
		},
		`{"detail":[{"type":"missing","loc":["body","name"],"msg":"Field required","input":{}}]}`,
	},

	// --- no errors ---
	{
		// ref §4: "2024-01-01 10:00" and "2026-01-31" are accepted
		"valid inputs", func(c *validate.Collector) {
			q := c.Query(query("a", "2024-01-01 10:00", "b", "2026-01-31", "per_page", " 42 "))
			q.DateTime("a")
			q.DateTime("b")
			q.Int("per_page", 25, validate.Ge(1), validate.Le(100))
			b := c.Body("Application/JSON; charset=utf-8", []byte(`{"url":"https://hooks.example.com/x","amount":"10.50"}`))
			b.URL("url")
			b.Decimal("amount")
		},
		"ok",
	},
}

func TestCases(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := validate.New()
			tc.run(c)
			if got := body(t, c); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestContentTypes(t *testing.T) {
	// fastapi/routing.py before 0.132: no content type, application/json and
	// application/*+json (any case, any parameters) are parsed as JSON.
	raw := []byte(`{"name":"Foo"}`)
	for _, ctype := range []string{"", "application/json", "application/geo+json", "APPLICATION/JSON",
		"application/json; charset=latin-1", " application/vnd.api+json ;x=y", "application/+json"} {
		c := validate.New()
		if got := c.Body(ctype, raw).Str("name"); got != "Foo" || c.Err() != nil {
			t.Errorf("content type %q: got %q, %v; want Foo, nil", ctype, got, c.Err())
		}
	}
	for _, ctype := range []string{"text/plain", "application/geo+json-seq", "application/not-really-json",
		"application", "application/json/x", " ", "multipart/form-data; boundary=x", "json"} {
		c := validate.New()
		c.Body(ctype, raw).Str("name")
		want := `{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"{\"name\":\"Foo\"}"}]}`
		if got := body(t, c); got != want {
			t.Errorf("content type %q:\ngot  %s\nwant %s", ctype, got, want)
		}
	}
}

func TestValues(t *testing.T) {
	c := validate.New()
	q := c.Query(query("start", "2024-01-01T10:00:00+02:00", "end", "2026-01-31", "n", "1_000", "on", "Yes"))
	start, ok := q.DateTime("start")
	if !ok || !start.Equal(time.Date(2024, 1, 1, 8, 0, 0, 0, time.UTC)) || start.Location() != time.UTC {
		t.Errorf("start = %v, %v; want 2024-01-01T08:00:00Z", start, ok)
	}
	end, _ := q.DateTime("end")
	if !end.Equal(time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("end = %v, want midnight UTC", end)
	}
	if n := q.Int("n", 0); n != 1000 {
		t.Errorf("n = %d, want 1000", n)
	}
	if !q.Bool("on", false) {
		t.Errorf("on = false, want true")
	}
	if _, ok := q.Str("absent"); ok {
		t.Errorf("absent param reported present")
	}
	if got := q.Enum("sort_order", false, "desc", "asc", "desc"); got != "desc" {
		t.Errorf("default enum = %q", got)
	}

	b := c.Body("", []byte(`{"url":"HTTP://Example.COM:80/a/../b?q=1#f","amount":"1e3","opt":null,"dbp":null,"when":1700000000}`))
	raw, u := b.URL("url")
	if raw != "HTTP://Example.COM:80/a/../b?q=1#f" || u == nil || u.String() != "http://example.com/b?q=1#f" {
		t.Errorf("URL = %q, %v", raw, u)
	}
	if d := b.Decimal("amount"); !d.Equal(decimal.NewFromInt(1000)) {
		t.Errorf("amount = %s", d)
	}
	if _, ok := b.OptStr("opt"); ok {
		t.Errorf("null optional reported ok")
	}
	if _, ok := b.OptStr("absent"); ok {
		t.Errorf("absent optional reported ok")
	}
	if _, ok := b.NullableStr("dbp"); ok {
		t.Errorf("null nullable reported ok")
	}
	if w := b.DateTime("when"); !w.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("when = %v", w)
	}
	if err := c.Err(); err != nil {
		t.Fatalf("Err() = %v", err)
	}

	c = validate.New()
	o := c.Body(ct, []byte(`{"price":{"VTI":"250.10"}}`))
	if o.Field("price").Kind() != validate.KindObject {
		t.Errorf("body: kind=%v", o.Field("price").Kind())
	}
	if m := o.DecimalMap("price", validate.Gt(0)); len(m) != 1 || m["VTI"].String() != "250.1" {
		t.Errorf("price map = %v", m)
	}

	c = validate.New()
	if n := c.Query(query("big", "99999999999999999999")).Int("big", 0, validate.Ge(0)); n != math.MaxInt {
		t.Errorf("big = %d, want saturation at MaxInt", n)
	}
}

func TestErrors(t *testing.T) {
	e := validate.Errors{
		validate.NewItem("missing", validate.Loc{"body", "items", 0, "sku"}, "Field required", nil),
		validate.NewItem("custom", validate.Loc{"query", "q"}, "Bad", map[string]any{"b": 1.5, "a": []any{"x"}},
			validate.CtxPair{Key: "limit", Value: 3}),
	}
	b, _ := e.MarshalJSON()
	want := `{"detail":[{"type":"missing","loc":["body","items",0,"sku"],"msg":"Field required","input":null},{"type":"custom","loc":["query","q"],"msg":"Bad","input":{"a":["x"],"b":1.5},"ctx":{"limit":3}}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if got := e.Error(); got != "2 validation errors: body.items.0.sku: Field required [type=missing]; query.q: Bad [type=custom]" {
		t.Errorf("Error() = %q", got)
	}
	var target validate.Errors
	if !errors.As(error(e), &target) || len(target) != 2 {
		t.Errorf("errors.As failed")
	}
	if c := validate.New(); c.Err() != nil {
		t.Errorf("empty collector: %v", c.Err())
	}
}

func TestParseQuery(t *testing.T) {
	// urllib.parse.parse_qsl(keep_blank_values=True) as Starlette uses it.
	for raw, want := range map[string]url.Values{
		"a=1&a=2&b=":        {"a": {"1", "2"}, "b": {""}},
		"a=1;b=2":           {"a": {"1;b=2"}},
		"x=%zz&y=a+b%20c":   {"x": {"%zz"}, "y": {"a b c"}},
		"flag&&=v":          {"flag": {""}, "": {"v"}},
		"n=%C3%A9%FF":       {"n": {"é\uFFFD"}},
		"t=%E2%82x":         {"t": {"\uFFFDx"}}, // one U+FFFD per maximal subpart, as CPython
		"s=%ED%A0%80":       {"s": {"\uFFFD\uFFFD\uFFFD"}},
		"k=\xe9":            {"k": {"é"}},
		"":                  {},
		"per_page=%2B5&q=1": {"per_page": {"+5"}, "q": {"1"}},
	} {
		got := validate.ParseQuery(raw)
		if !equalValues(got, want) {
			t.Errorf("ParseQuery(%q) = %v, want %v", raw, got, want)
		}
	}
}

// A plain query (ASCII, nothing to unquote) is parsed without copying its names and values:
// it is on every request.
func TestParseQueryPlainDoesNotCopy(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() { validate.ParseQuery("user_account_id_type=platform&per_page=25") })
	if allocs > 4 {
		t.Errorf("ParseQuery of a plain query: %v allocations, want the map and its value slices only (≤ 4)", allocs)
	}
}

// QueryValue gives a name the value ParseQuery gives it last, on random queries of the bytes
// that matter: separators, escapes (well and badly formed), '+', latin-1 bytes, and names that
// are the asked-for one only once unquoted.
func TestQueryValueMatchesParseQuery(t *testing.T) {
	pieces := []string{"a", "b", "=", "&", "&&", "+", "%61", "%2B", "%zz", "%", "%C3%A9", "\xe9", "\xff", ";", "a+b", "a%20b", "type", "platform"}
	names := []string{"a", "b", "a b", "a+b", "é", "type", "x"}
	r := rand.New(rand.NewPCG(34, 1))
	for range 20000 {
		var q strings.Builder
		for range r.IntN(12) {
			q.WriteString(pieces[r.IntN(len(pieces))])
		}
		raw, all := q.String(), validate.ParseQuery(q.String())
		for _, name := range names {
			got, ok := validate.QueryValue(raw, name)
			vs, want := all[name], ""
			if len(vs) > 0 {
				want = vs[len(vs)-1]
			}
			if ok != (len(vs) > 0) || got != want {
				t.Fatalf("QueryValue(%q, %q) = %q, %v; ParseQuery gives %q", raw, name, got, ok, vs)
			}
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { validate.QueryValue("per_page=25&user_account_id_type=platform", "user_account_id_type") }); allocs != 0 {
		t.Errorf("QueryValue of a plain query: %v allocations, want none", allocs)
	}
}

func equalValues(a, b url.Values) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w := b[k]
		if len(v) != len(w) {
			return false
		}
		for i := range v {
			if v[i] != w[i] {
				return false
			}
		}
	}
	return true
}

func TestInvalidUTF8Input(t *testing.T) {
	// Starlette decodes with errors='replace': CPython replaces each maximal
	// invalid subpart with one U+FFFD.
	raw, _ := validate.NewItem("x", validate.Loc{"query", "q"}, "m", "a\xe2\x82b\xed\xa0\x80").MarshalJSON()
	if want := "{\"type\":\"x\",\"loc\":[\"query\",\"q\"],\"msg\":\"m\",\"input\":\"a\uFFFDb\uFFFD\uFFFD\uFFFD\"}"; string(raw) != want {
		t.Errorf("got %s, want %s", raw, want)
	}
}

func TestItemJSON(t *testing.T) {
	// Python's json.dumps leaves <, > and & alone; so must MarshalJSON.
	raw, _ := validate.NewItem("x", validate.Loc{"body"}, "m", "<&>").MarshalJSON()
	if want := `{"type":"x","loc":["body"],"msg":"m","input":"<&>"}`; string(raw) != want {
		t.Errorf("MarshalJSON = %s, want %s", raw, want)
	}
}
