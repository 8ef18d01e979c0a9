package check_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator/openapi"
	"github.com/partnersim/partnersim/simulator/openapi/check"
)

// answer is what the fake implementation sends.
type answer struct {
	status  int
	headers map[string]string
	body    string
}

// exchange sends method path body to a server answering a, through a checking transport.
func exchange(t *testing.T, method, path, body string, a answer) error {
	t.Helper()
	doc, err := openapi.Partner([]string{"v1"})
	require.NoError(t, err)
	c, err := check.New(context.Background(), check.Doc{Name: "partner", Data: doc})
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "req_1")
		if a.body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		for k, v := range a.headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	}))
	defer srv.Close()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{Transport: c.Transport(nil), CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err == nil {
		res.Body.Close()
	}
	return err
}

const okPage = `{"items":[{"user_account_id":"u1","total_current_market_value":"10.00","accounts":[{"product":"crypto","current_market_value":"10.00","kyc_status":"pending"}]}],"total_records":1,"last_record_number":1,"per_page":25}`

func TestConformingExchangesPass(t *testing.T) {
	assert.NoError(t, exchange(t, "GET", "/v1/users/?per_page=25", "", answer{status: 200, body: okPage}))
	assert.NoError(t, exchange(t, "GET", "/v1/users/", "", answer{status: 401, headers: map[string]string{"WWW-Authenticate": "APIKey"}, body: `{"detail":"Not authenticated"}`}))
	assert.NoError(t, exchange(t, "POST", "/v1/sessions/revoke/", `{"user_account_id":"1","user_account_id_type":"core"}`, answer{status: 204}))
	assert.NoError(t, exchange(t, "GET", "/v1/users/?per_page=0", "", answer{status: 422,
		body: `{"detail":[{"type":"greater_than_equal","loc":["query","per_page"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}]}`}))
	assert.NoError(t, exchange(t, "GET", "/v1/users", "", answer{status: 307, headers: map[string]string{"Location": "http://h/v1/users/"}}), "the trailing-slash twin")
	assert.NoError(t, exchange(t, "GET", "/nowhere", "", answer{status: 404, body: `{"detail":"Not Found"}`}))
	assert.NoError(t, exchange(t, "PUT", "/v1/users/", "", answer{status: 405, headers: map[string]string{"Allow": "GET"}, body: `{"detail":"Method Not Allowed"}`}))
	// A JSON value followed by more text is not JSON: json.loads refuses it ("Extra data"),
	// although kin-openapi's decoder stops after the first value and finds it valid.
	assert.NoError(t, exchange(t, "POST", "/v1/sessions/revoke/", `{"user_account_id":"1","user_account_id_type":"core"}a`, answer{status: 422,
		body: `{"detail":[{"type":"json_invalid","loc":["body"],"msg":"JSON decode error","input":{},"ctx":{"error":"Extra data"}}]}`}),
		"a body with data after its JSON value")
	// Year 0000 is a date-time by RFC 3339 (and the document's format), but pydantic-core
	// refuses it: Python's datetime starts at year 1.
	assert.NoError(t, exchange(t, "GET", "/v1/orders/?placed_at_start=0000-01-01T00:00:00%2B00:00", "", answer{status: 422,
		body: `{"detail":[{"type":"datetime_parsing","loc":["query","placed_at_start"],"msg":"Input should be a valid datetime, year 0 is out of range","input":"0000-01-01T00:00:00+00:00","ctx":{"error":"year 0 is out of range"}}]}`}),
		"year 0")
	// A model's own validator (value_error): pydantic's ctx.error is then an object.
	assert.NoError(t, exchange(t, "GET", "/v1/orders/?placed_at_start=3000-01-01T00:00:00Z", "", answer{status: 422,
		body: `{"detail":[{"type":"value_error","loc":["query","placed_at_start"],"msg":"Value error, x","input":"3000-01-01T00:00:00Z","ctx":{"error":{}}}]}`}),
		"value_error")
}

// Each kind of disagreement fails, naming the operation, the status and the schema path.
func TestDisagreementsFail(t *testing.T) {
	cases := map[string]struct {
		method, path, body string
		a                  answer
		want               []string
	}{
		"undocumented field": {"GET", "/v1/users/", "", answer{status: 200, body: strings.Replace(okPage, `"per_page":25`, `"per_page":25,"next":"x"`, 1)},
			[]string{"getUserList_v1", "answered 200", `property "next" is unsupported`}},
		"missing field": {"GET", "/v1/users/", "", answer{status: 200, body: strings.Replace(okPage, `,"kyc_status":"pending"`, ``, 1)},
			[]string{"getUserList_v1", "/items/0/accounts/0", `kyc_status`}},
		"wrong enum": {"GET", "/v1/users/", "", answer{status: 200, body: strings.Replace(okPage, `"pending"`, `"waiting"`, 1)},
			[]string{"/items/0/accounts/0/kyc_status"}},
		"money with one place": {"GET", "/v1/users/", "", answer{status: 200, body: strings.Replace(okPage, `"10.00","accounts"`, `"10.0","accounts"`, 1)},
			[]string{"/items/0/total_current_market_value"}},
		"undocumented status": {"GET", "/v1/users/", "", answer{status: 409, body: `{"detail":"x"}`},
			[]string{"getUserList_v1", "answered 409", "status is not supported"}},
		"undocumented header": {"GET", "/v1/users/", "", answer{status: 200, headers: map[string]string{"X-Debug": "1"}, body: okPage},
			[]string{"header X-Debug is not documented for 200"}},
		"error without detail": {"GET", "/v1/users/x/?user_account_id_type=core", "", answer{status: 404, body: `{"error":"not found"}`},
			[]string{"getUserDetail_v1", "answered 404", "detail"}},
		"422 for a request the document accepts": {"GET", "/v1/users/?per_page=5", "", answer{status: 422,
			body: `{"detail":[{"type":"less_than_equal","loc":["query","per_page"],"msg":"m","input":"5","ctx":{"le":4}}]}`},
			[]string{"the document accepts this request but it was refused with 422"}},
		"redirect on an operation": {"GET", "/v1/users/", "", answer{status: 307, headers: map[string]string{"Location": "http://h/v1/users"}},
			[]string{"getUserList_v1", "status 307 is not documented"}},
		"redirect without Location": {"GET", "/v1/users", "", answer{status: 307},
			[]string{"components/responses/TrailingSlashRedirect", "Location"}},
		"unknown path answered 200": {"GET", "/v1/nowhere", "", answer{status: 200, body: `{}`},
			[]string{"no operation of partner has this path and method"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := exchange(t, tc.method, tc.path, tc.body, tc.a)
			var f *check.Failure
			require.True(t, errors.As(err, &f), "got %v", err)
			for _, w := range tc.want {
				assert.Contains(t, f.Error(), w)
			}
		})
	}
}

// A net/http server cannot send a body with 204; another implementation can.
func TestBodyOn204Fails(t *testing.T) {
	doc, err := openapi.Partner([]string{"v1"})
	require.NoError(t, err)
	c, err := check.New(context.Background(), check.Doc{Name: "partner", Data: doc})
	require.NoError(t, err)
	body := `{"user_account_id":"1","user_account_id_type":"core"}`
	req, err := http.NewRequest("POST", "http://sandbox.test/v1/sessions/revoke/", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res := &http.Response{StatusCode: 204, Header: http.Header{"X-Request-Id": {"req_1"}}}
	assert.NoError(t, c.Check(req, []byte(body), res, nil))
	err = c.Check(req, []byte(body), res, []byte(`{}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "revokeMemberSessions_v1")
	assert.Contains(t, err.Error(), "204 is documented without a body")
	checked, failed := c.Stats()
	assert.Equal(t, [2]int64{2, 1}, [2]int64{checked, failed})
}

// BenchmarkCheckUserListPage is the cost of checking one exchange: Get User List with a page of
// 25 users.
func BenchmarkCheckUserListPage(b *testing.B) {
	doc, err := openapi.Partner([]string{"v1"})
	require.NoError(b, err)
	c, err := check.New(context.Background(), check.Doc{Name: "partner", Data: doc})
	require.NoError(b, err)
	item := `{"user_account_id":"u1","total_current_market_value":"10.00","accounts":[{"product":"crypto","current_market_value":"10.00","kyc_status":"approved","kyc_approved_at":"2026-01-02T03:04:05Z"},{"product":"robo","current_market_value":"0.00","kyc_status":"pending"}]}`
	body := []byte(`{"items":[` + strings.Repeat(item+",", 24) + item + `],"total_records":100,"last_record_number":25,"per_page":25}`)
	req, err := http.NewRequest("GET", "http://sandbox.test/v1/users/?per_page=25", nil)
	require.NoError(b, err)
	res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"req_1"}}}
	for b.Loop() {
		if err := c.Check(req, nil, res, body); err != nil {
			b.Fatal(err)
		}
	}
}
