package validate_test

import (
	"strings"
	"testing"
	"time"

	"github.com/partnersim/partnersim/simulator/validate"
)

// A query string's decoding must cost time linear in its length (D17): a 300 KB value once
// took 18 s (a minute on a busy machine) because every decoded byte re-read the rest of the
// pending run. Linear decoding takes milliseconds, even under the race detector, so the
// 2-second bound separates the two by orders of magnitude on any machine.
func TestParseQueryLinear(t *testing.T) {
	raw := "q=" + strings.Repeat("a", 300_000) + "%C3%A9"
	start := time.Now()
	got := validate.ParseQuery(raw).Get("q")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("ParseQuery of a 300 KB value took %v, want well under 2 s (linear)", d)
	}
	if len(got) != 300_002 || !strings.HasSuffix(got, "é") {
		t.Fatalf("decoded value: len %d, want 300002 ending in é", len(got))
	}
}

// A 422 lists at most MaxItems items (D17), however many inputs are wrong, and the collector
// keeps no more than that while it validates.
func TestErrorsCapped(t *testing.T) {
	c := validate.New()
	for i := 0; i < 5*validate.MaxItems; i++ {
		c.Add(validate.NewItem("string_type", validate.Loc{"body", i}, "Input should be a valid string", i))
	}
	errs, ok := c.Err().(validate.Errors)
	if !ok {
		t.Fatalf("Err() = %T, want validate.Errors", c.Err())
	}
	if len(errs) != validate.MaxItems || validate.MaxItems != 1000 {
		t.Fatalf("got %d items (MaxItems %d), want 1000", len(errs), validate.MaxItems)
	}
	if errs[999].Loc[1] != 999 {
		t.Errorf("the first 1,000 items are kept in order; item 999 has loc %v", errs[999].Loc)
	}
}
