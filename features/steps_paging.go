package features

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/cucumber/godog"
	"github.com/tidwall/gjson"
)

// pagingSteps walk a list through its cursor and check what the pages say together.
func (w *world) pagingSteps(sc *godog.ScenarioContext) {
	sc.Step(`^I page through `+q+` with per_page (\d+)$`, w.pageThrough)
	sc.Step(`^the pages list `+q+` values `+q+`$`, w.pagesList)
	sc.Step(`^every page reports total_records (\d+) and per_page (\d+)$`, w.pagesTotals)
	sc.Step(`^every page reports the same total_records$`, w.pagesSameTotal)
	sc.Step(`^each page's last_record_number is the previous one plus its item count$`, w.pagesCursor)
	sc.Step(`^the walk ends with an empty page$`, w.pagesEndEmpty)
	sc.Step(`^the pages visit total_records records, each once by `+q+`$`, w.pagesEachOnce)
	sc.Step(`^no page has more than (\d+) items$`, w.pagesMax)
}

// pageThrough walks a list with the cursor the responses return, until a page comes back
// empty (at most 200 pages).
func (w *world) pageThrough(path, perPage string) error {
	p, err := w.expand(unq(path))
	if err != nil {
		return err
	}
	w.pages = nil
	cursor := "0"
	for range 200 {
		u, err := url.Parse(p)
		if err != nil {
			return err
		}
		qv := u.Query()
		qv.Set("per_page", perPage)
		qv.Set("last_record_number", cursor)
		u.RawQuery = qv.Encode()
		r, err := w.do(http.MethodGet, u.String(), nil, "", authKey)
		if err != nil {
			return err
		}
		if r.Status != http.StatusOK {
			return fmt.Errorf("expected status 200 while paging, got %s", r)
		}
		page := r.json()
		w.pages = append(w.pages, page)
		if len(page.Get("items").Array()) == 0 {
			return nil
		}
		next := page.Get("last_record_number")
		if next.Type != gjson.Number {
			return fmt.Errorf("expected last_record_number to be an integer, got %s", orAbsent(next))
		}
		if next.Raw == cursor {
			return fmt.Errorf("expected the cursor to move past a non-empty page, got last_record_number %s again", cursor)
		}
		cursor = next.Raw
	}
	return errors.New("expected the walk to end within 200 pages")
}

func (w *world) walked() ([]gjson.Result, error) {
	if len(w.pages) == 0 {
		return nil, errors.New("no pages were walked")
	}
	return w.pages, nil
}

func (w *world) pagesList(field, values string) error {
	pages, err := w.walked()
	if err != nil {
		return err
	}
	want, err := w.expand(unq(values))
	if err != nil {
		return err
	}
	got := []string{}
	for _, p := range pages {
		for _, it := range p.Get("items").Array() {
			got = append(got, it.Get(unq(field)).String())
		}
	}
	if ws := splitList(want); !slices.Equal(got, ws) {
		return fmt.Errorf("expected the pages to list %s %v, got %v", unq(field), ws, got)
	}
	return nil
}

func (w *world) pagesTotals(total, perPage string) error {
	pages, err := w.walked()
	if err != nil {
		return err
	}
	for i, p := range pages {
		if p.Get("total_records").Raw != total || p.Get("per_page").Raw != perPage {
			return fmt.Errorf("expected page %d to report total_records %s and per_page %s, got %s and %s", i+1, total, perPage,
				orAbsent(p.Get("total_records")), orAbsent(p.Get("per_page")))
		}
	}
	return nil
}

func (w *world) pagesSameTotal() error {
	pages, err := w.walked()
	if err != nil {
		return err
	}
	first := pages[0].Get("total_records")
	if first.Type != gjson.Number {
		return fmt.Errorf("expected total_records to be an integer, got %s", orAbsent(first))
	}
	for i, p := range pages {
		if p.Get("total_records").Raw != first.Raw {
			return fmt.Errorf("expected every page to report total_records %s, got %s on page %d", first.Raw, p.Get("total_records").Raw, i+1)
		}
	}
	return nil
}

func (w *world) pagesCursor() error {
	pages, err := w.walked()
	if err != nil {
		return err
	}
	prev := int64(0)
	for i, p := range pages {
		n := int64(len(p.Get("items").Array()))
		got := p.Get("last_record_number").Int()
		if got != prev+n {
			return fmt.Errorf("expected page %d's last_record_number to be %d + %d = %d, got %s", i+1, prev, n, prev+n, orAbsent(p.Get("last_record_number")))
		}
		prev = got
	}
	return nil
}

func (w *world) pagesEndEmpty() error {
	pages, err := w.walked()
	if err != nil {
		return err
	}
	if l := pages[len(pages)-1].Get("items"); !l.IsArray() || len(l.Array()) != 0 {
		return fmt.Errorf("expected the page after the last to have items [], got %s", orAbsent(l))
	}
	return nil
}

func (w *world) pagesEachOnce(field string) error {
	pages, err := w.walked()
	if err != nil {
		return err
	}
	seen := map[string]int{}
	n := 0
	for i, p := range pages {
		for _, it := range p.Get("items").Array() {
			id := it.Get(unq(field)).String()
			if j, dup := seen[id]; dup {
				return fmt.Errorf("expected each record once, got %s %q on page %d and again on page %d", unq(field), id, j, i+1)
			}
			seen[id] = i + 1
			n++
		}
	}
	if total := pages[0].Get("total_records").Int(); int64(n) != total {
		return fmt.Errorf("expected the pages to visit total_records = %d records, got %d", total, n)
	}
	return nil
}

func (w *world) pagesMax(n string) error {
	max, _ := strconv.Atoi(n)
	pages, err := w.walked()
	if err != nil {
		return err
	}
	for i, p := range pages {
		if l := len(p.Get("items").Array()); l > max {
			return fmt.Errorf("expected at most %d items per page, got %d on page %d", max, l, i+1)
		}
	}
	return nil
}
