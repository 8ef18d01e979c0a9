package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/partnersim/partnersim/fixtures"
	"github.com/partnersim/partnersim/simulator"
)

// FromSet reads the users of the fixture set a target serves and chooses the key to load with:
// key when given (it must be one of the set's keys), else a key of the set holding read:user
// and read:orders in the institution with the most users. The Data it returns has the
// institution's users; Complete adds what only the running target knows.
func FromSet(set *fixtures.Set, key string) (*Data, string, error) {
	byInst := map[string]*Data{}
	err := set.EachUser(func(u simulator.User) error {
		d := byInst[u.InstitutionID]
		if d == nil {
			d = &Data{InstitutionID: u.InstitutionID, CreatedFrom: u.CreatedAt, CreatedTo: u.CreatedAt}
			byInst[u.InstitutionID] = d
		}
		d.PlatformIDs = append(d.PlatformIDs, u.PlatformID)
		d.UserAccountIDs = append(d.UserAccountIDs, u.UserAccountID)
		if u.CreatedAt.Before(d.CreatedFrom) {
			d.CreatedFrom = u.CreatedAt
		}
		if u.CreatedAt.After(d.CreatedTo) {
			d.CreatedTo = u.CreatedAt
		}
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("loadtest: reading the fixture users: %w", err)
	}
	var chosen *fixtures.Key
	for i, k := range set.Keys {
		switch {
		case key != "":
			if k.Plaintext == key {
				chosen = &set.Keys[i]
			}
		case k.HasScope(simulator.ScopeReadUser) && k.HasScope(simulator.ScopeReadOrders) && byInst[k.InstitutionID] != nil:
			if chosen == nil || len(byInst[k.InstitutionID].PlatformIDs) > len(byInst[chosen.InstitutionID].PlatformIDs) {
				chosen = &set.Keys[i]
			}
		}
	}
	switch {
	case chosen == nil && key != "":
		return nil, "", fmt.Errorf("loadtest: the key %.8s… is not one of the fixture set's keys: give the set the target serves, so the load knows its users", key)
	case chosen == nil:
		return nil, "", fmt.Errorf("loadtest: the fixture set has no key with read:user and read:orders in an institution with users")
	}
	d := byInst[chosen.InstitutionID]
	if d == nil {
		d = &Data{InstitutionID: chosen.InstitutionID}
	}
	return d, chosen.Plaintext, nil
}

// Complete asks the target for its list totals and the orders' placed_at range (the key needs
// read:user and read:orders).
func (d *Data) Complete(ctx context.Context, client *http.Client, baseURL, key string) error {
	type page struct {
		Items []struct {
			PlacedAt time.Time `json:"placed_at"`
		} `json:"items"`
		TotalRecords int `json:"total_records"`
	}
	get := func(path string) (*page, error) {
		c, err := Capture(ctx, client, baseURL, key, path)
		if err != nil {
			return nil, fmt.Errorf("loadtest: %w (the key needs read:user and read:orders)", err)
		}
		var p page
		if err := json.Unmarshal(c.Body, &p); err != nil {
			return nil, fmt.Errorf("loadtest: GET %s: %w", path, err)
		}
		return &p, nil
	}
	users, err := get("/v1/users/?per_page=1")
	if err != nil {
		return err
	}
	d.Users = users.TotalRecords
	for _, order := range []string{"asc", "desc"} {
		p, err := get("/v1/orders/?per_page=1&sort_order=" + order)
		if err != nil {
			return err
		}
		d.Orders = p.TotalRecords
		if len(p.Items) == 0 {
			continue
		}
		if order == "asc" {
			d.PlacedFrom = p.Items[0].PlacedAt
		} else {
			d.PlacedTo = p.Items[0].PlacedAt
		}
	}
	if d.PlacedTo.IsZero() {
		d.PlacedFrom, d.PlacedTo = d.CreatedFrom, d.CreatedTo
	}
	return nil
}
