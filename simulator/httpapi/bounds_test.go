package httpapi_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// D17: a body of many wrong items answers a 422 of at most 1,000 items in the usual shape, so
// a 1 MiB body can no longer answer a 100 MB error.
func TestValidationErrorCapped(t *testing.T) {
	a := MustServe(t)
	rules := strings.Repeat(`{"path":1},`, 50_000)
	r := a.control(t, "PUT", "/_sandbox/faults", `{"rules":[`+rules[:len(rules)-1]+`]}`)
	require.Equal(t, 422, r.Status, r.Body[:min(len(r.Body), 300)])
	assert.Equal(t, int64(1000), r.JSON("detail.#").Int())
	assert.Equal(t, `{"type":"string_type","loc":["body","rules",999,"path"],"msg":"Input should be a valid string","input":1}`,
		r.JSON("detail.999").Raw)
	assert.Less(t, len(r.Body), 200_000)
}

// D17: the journal keeps each path and query cut to 4 KiB, flagged as truncated, so a client
// without a key sending huge URLs cannot make the sandbox hold them.
func TestJournalEntryBounded(t *testing.T) {
	a := MustServe(t)
	long := strings.Repeat("x", 60_000)
	r := a.get(t, "/v1/users/?q="+long, keyAll)
	require.Equal(t, 200, r.Status)
	a.get(t, "/v1/users/"+long+"/", "") // no key: journaled all the same
	a.get(t, "/v1/users/?per_page=1", keyAll)

	j := a.mustControl(t, "GET", "/_sandbox/requests?limit=3", "")
	short, path, query := j.JSON("requests.0"), j.JSON("requests.1"), j.JSON("requests.2")
	assert.False(t, short.Get("truncated").Exists(), "a short request is not flagged: %s", short.Raw)
	assert.Equal(t, "per_page=1", short.Get("query").String())

	assert.True(t, path.Get("truncated").Bool(), "a long path is flagged")
	assert.Len(t, path.Get("path").String(), 4096)
	assert.True(t, strings.HasPrefix(path.Get("path").String(), "/v1/users/xxx"))

	assert.True(t, query.Get("truncated").Bool(), "a long query is flagged")
	assert.Len(t, query.Get("query").String(), 4096)
	assert.Equal(t, "/v1/users/", query.Get("path").String())
}
