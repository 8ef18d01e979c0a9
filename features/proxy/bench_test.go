package proxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/partnersim/partnersim/features/proxy"
)

// BenchmarkForward is one GET of a 25-user page through the proxy, checks included (no
// document: kin-openapi's cost is openapi/check's), against a server answering fixed bytes.
func BenchmarkForward(b *testing.B) {
	item := `{"user_account_id":"HFCU-1","total_current_market_value":"12.50","accounts":[{"product":"crypto","current_market_value":"12.50","kyc_status":"approved","kyc_approved_at":"2025-01-01T00:00:00Z"}]}`
	page := `{"items":[` + strings.Repeat(item+",", 24) + item + `],"total_records":100,"last_record_number":25,"per_page":25}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "r")
		io.WriteString(w, page)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	p, err := proxy.New(proxy.Config{Upstream: u, Loopback: true})
	if err != nil {
		b.Fatal(err)
	}
	front := httptest.NewServer(p.API())
	defer front.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest(http.MethodGet, front.URL+"/v1/users/?per_page=25", nil)
		req.Header.Set("x-api-key", "k")
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	b.StopTimer()
	p.Close()
}
