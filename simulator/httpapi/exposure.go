package httpapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/partnersim/partnersim/simulator"
)

// The credentials an exposed sandbox may not serve with (decisions D18), beside the other rules
// of exposure this package keeps: the Host check (host.go), the failed-token throttle (surface),
// the connection bounds (conns.go). The sandbox's wiring gathers what is published — the set's
// and the default set's token and keys — and applies these at start.

// ErrPublishedToken refuses to expose the control plane behind a token anyone can read.
var ErrPublishedToken = errors.New("the sandbox token in force is a fixture set's published one (a store keeps the token of the set " +
	"it was first loaded from, whatever --fixtures names later), and this address is not loopback: anyone who can reach it could " +
	"drive the control plane. Pass --sandbox-token with a secret of your own (at least 24 characters, e.g. `openssl rand -hex 16`), " +
	"or --no-control, or listen on 127.0.0.1")

// MinExposedToken is the shortest sandbox token served beyond loopback.
const MinExposedToken = 24

// CheckExposedToken judges the effective token of a sandbox listening beyond loopback: not one
// of the published fixture tokens (ErrPublishedToken), and at least MinExposedToken long.
func CheckExposedToken(token string, published ...string) error {
	for _, p := range published {
		if p != "" && token == p {
			return ErrPublishedToken
		}
	}
	if n := len(token); n < MinExposedToken {
		return fmt.Errorf("the sandbox token is %d characters, and this address is not loopback: beyond loopback it must be at least %d characters "+
			"so that it cannot be guessed. Pass --sandbox-token with a longer secret of your own (e.g. `openssl rand -hex 16`), "+
			"or --no-control, or listen on 127.0.0.1", n, MinExposedToken)
	}
	return nil
}

// RefuseKeys is store with the API keys whose plaintexts refused holds answered as unknown keys
// are (--no-published-keys), whatever a reset reloads.
func RefuseKeys(store Store, refused map[string]bool) Store {
	return refusedKeys{Store: store, refused: refused}
}

type refusedKeys struct {
	Store
	refused map[string]bool
}

// Authenticate refuses a refused key as the store refuses an unknown one.
func (r refusedKeys) Authenticate(ctx context.Context, plaintext string) (*simulator.APIKey, error) {
	if r.refused[plaintext] {
		return nil, simulator.Errorf(simulator.EUNAUTHORIZED, "Invalid API key")
	}
	return r.Store.Authenticate(ctx, plaintext)
}
