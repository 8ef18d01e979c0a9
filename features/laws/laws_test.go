package laws

import (
	"net/url"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

func TestUserTotal(t *testing.T) {
	ok := gjson.Parse(`{"user_account_id":"u","total_current_market_value":"10.05","accounts":[{"product":"crypto","current_market_value":"10.00"},{"product":"robo","current_market_value":"0.05"}]}`)
	if err := UserTotal(ok); err != nil {
		t.Error(err)
	}
	cent := gjson.Parse(strings.Replace(ok.Raw, `"10.05"`, `"10.06"`, 1))
	if err := UserTotal(cent); err == nil || !strings.Contains(err.Error(), "10.05") {
		t.Errorf("a total one cent off: %v", err)
	}
}

func TestApprovedAt(t *testing.T) {
	for raw, good := range map[string]bool{
		`{"accounts":[{"kyc_status":"approved","kyc_approved_at":"2025-01-01T00:00:00Z"}]}`: true,
		`{"accounts":[{"kyc_status":"approved"}]}`:                                          false,
		`{"accounts":[{"kyc_status":"pending","kyc_approved_at":"2025-01-01T00:00:00Z"}]}`:  false,
		`{"accounts":[{"kyc_status":"pending"}]}`:                                           true,
	} {
		if err := ApprovedAt(gjson.Parse(raw)); (err == nil) != good {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

func TestFilters(t *testing.T) {
	u := gjson.Parse(`{"user_account_id":"u1","accounts":[{"product":"crypto","kyc_status":"approved"}]}`)
	for q, good := range map[string]bool{
		"product=crypto": true, "product=robo": false, "crypto_kyc_status=approved": true,
		"crypto_kyc_status=pending": false, "robo_kyc_status=pending": false, "user_account_id=u2": false, "": true,
	} {
		v, _ := url.ParseQuery(q)
		if err := UserHonours(v, u); (err == nil) != good {
			t.Errorf("users %s: %v", q, err)
		}
	}
	o := gjson.Parse(`{"order_id":"o1","user_account_id":"u1","product":"crypto","side":"buy","status":"pending","placed_at":"2025-06-01T00:00:00Z"}`)
	for q, good := range map[string]bool{
		"side=buy": true, "side=sell": false, "status=failed": false,
		"placed_at_start=2025-06-01": true, "placed_at_end=2025-06-01": false, "placed_at_end=1748736001": true,
		"placed_at_start=2025-06-01T02:00:01%2B02:00": false,
	} {
		v, _ := url.ParseQuery(q)
		if err := OrderHonours(v, o); (err == nil) != good {
			t.Errorf("orders %s: %v", q, err)
		}
	}
}

func TestSorted(t *testing.T) {
	items := gjson.Parse(`[{"placed_at":"2025-02-01T00:00:00Z"},{"placed_at":"2025-01-01T00:00:00Z"}]`).Array()
	if err := Sorted("orders", url.Values{}, items); err != nil {
		t.Error(err)
	}
	if err := Sorted("orders", url.Values{"sort_order": {"asc"}}, items); err == nil {
		t.Error("asc accepted a descending page")
	}
	users := gjson.Parse(`[{"user_account_id":"a"},{"user_account_id":"b"}]`).Array()
	if err := Sorted("users", url.Values{"sort_key": {"user_account_id"}, "sort_order": {"desc"}}, users); err == nil {
		t.Error("desc accepted an ascending page")
	}
}

func page(t *testing.T, query, body string) Page {
	t.Helper()
	q, _ := url.ParseQuery(query)
	p, err := ReadPage(q, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWalk(t *testing.T) {
	p1 := page(t, "per_page=2", `{"items":[{"id":"a"},{"id":"b"}],"total_records":3,"last_record_number":2}`)
	p2 := page(t, "per_page=2&last_record_number=2", `{"items":[{"id":"c"}],"total_records":3,"last_record_number":3}`)
	if err := Walk("id", []Page{p1, p2}); err != nil {
		t.Error(err)
	}
	dup := page(t, "per_page=2&last_record_number=2", `{"items":[{"id":"b"}],"total_records":3,"last_record_number":3}`)
	if err := Walk("id", []Page{p1, dup}); err == nil || !strings.Contains(err.Error(), "once") {
		t.Errorf("a repeated record: %v", err)
	}
	short := page(t, "per_page=2&last_record_number=2", `{"items":[],"total_records":3,"last_record_number":2}`)
	if err := Walk("id", []Page{p1, short}); err == nil || !strings.Contains(err.Error(), "hold total_records") {
		t.Errorf("a gap: %v", err)
	}
	moved := page(t, "per_page=2&last_record_number=2", `{"items":[{"id":"c"}],"total_records":4,"last_record_number":3}`)
	if err := Walk("id", []Page{p1, moved}); err == nil || !strings.Contains(err.Error(), "stay") {
		t.Errorf("a moving total: %v", err)
	}
	huge := page(t, "per_page=5&last_record_number=100000000000000000000000", `{"items":[],"total_records":3,"last_record_number":9223372036854775807}`)
	if err := PageCursor(huge); err != nil {
		t.Errorf("a cursor beyond 64 bits is not judged: %v", err)
	}
	cursor := page(t, "per_page=2&last_record_number=2", `{"items":[{"id":"c"}],"total_records":3,"last_record_number":4}`)
	if err := Walk("id", []Page{p1, cursor}); err == nil {
		t.Error("a cursor that miscounts accepted")
	}
}

func TestReverseDetailListedForeign(t *testing.T) {
	if err := Reverse([]string{"c", "b", "a"}, []string{"a", "b", "c"}); err != nil {
		t.Error(err)
	}
	if err := Reverse([]string{"c", "a", "b"}, []string{"a", "b", "c"}); err == nil {
		t.Error("a wrong reverse accepted")
	}
	item := gjson.Parse(`{"user_account_id":"u","total_current_market_value":"1.00","accounts":[{"a":1,"b":"x"}]}`)
	if err := DetailMatchesItem(item, gjson.Parse(`{"total_current_market_value":"1.00","accounts":[{"b":"x","a":1}]}`)); err != nil {
		t.Error(err)
	}
	if err := DetailMatchesItem(item, gjson.Parse(`{"total_current_market_value":"1.01","accounts":[{"b":"x","a":1}]}`)); err == nil {
		t.Error("a different total accepted")
	}
	list := gjson.Parse(`{"subscriptions":[{"subscription_id":"s1"}]}`)
	if Listed(list, []string{"s1"}) != nil || Listed(list, []string{"s2"}) == nil {
		t.Error("Listed")
	}
	if Foreign(404, nil) != nil || Foreign(200, nil) == nil {
		t.Error("Foreign")
	}
}
