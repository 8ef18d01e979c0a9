package httpapi

import (
	"context"
	"crypto/subtle"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/simulator"
)

// The control plane's dependencies (/_sandbox/, decisions D9), one small interface per concern,
// declared here where they are used; the sandbox hands one implementation to all of them.

// Tenants creates institutions, their keys, members and users, prices and signing secrets.
type Tenants interface {
	CreateInstitution(ctx context.Context, name string, v simulator.Vendors) (*simulator.Institution, error)
	Institutions(ctx context.Context) ([]*simulator.Institution, []int, error)
	IssueKey(ctx context.Context, instID string, scopes []simulator.Scope, description string) (*simulator.APIKey, string, error)
	// Keys lists an institution's keys: ids, prefixes and scopes, never a plaintext.
	Keys(ctx context.Context, instID string) ([]*simulator.APIKey, error)
	RevokeKey(ctx context.Context, keyID string) error
	CreateMember(ctx context.Context, m *simulator.Member) error
	CreateUser(ctx context.Context, u *simulator.User) error
	User(ctx context.Context, platformID string) (*simulator.User, error)
	SetPrices(ctx context.Context, instID string, prices map[string]decimal.Decimal) (map[string]decimal.Decimal, error)
	RotateSecret(ctx context.Context, instID string, overlap time.Duration) (string, error)
	// DeleteInstitution removes an institution and everything of it.
	DeleteInstitution(ctx context.Context, instID string) error
}

// Trading moves KYC states and places, fills, cancels and fails transactions.
type Trading interface {
	TransitionKYC(ctx context.Context, platformID string, p simulator.Product, to simulator.KYCStatus) (*simulator.Account, *simulator.Event, error)
	PlaceOrder(ctx context.Context, r simulator.OrderRequest) (*simulator.Transaction, []*simulator.Order, error)
	PlaceRobo(ctx context.Context, platformID string, typ simulator.TransactionType, amount decimal.Decimal) (*simulator.Transaction, []*simulator.Order, error)
	FillTransaction(ctx context.Context, txnID string, prices map[string]decimal.Decimal) (*simulator.Transaction, []*simulator.Order, *simulator.Event, error)
	EndTransaction(ctx context.Context, txnID string, to simulator.OrderStatus) (*simulator.Transaction, []*simulator.Order, error)
	TransactionAny(ctx context.Context, id string) (*simulator.Transaction, []*simulator.Order, error)
}

// Deliveries lists webhook deliveries with their attempts and redelivers events.
type Deliveries interface {
	// Deliveries lists one page of the delivery log, newest first.
	Deliveries(ctx context.Context, f simulator.DeliveryFilter) (*simulator.DeliveryPage, error)
	Redeliver(ctx context.Context, eventID string) ([]*simulator.Delivery, error)
	// PendingDeliveries lists up to limit deliveries waiting for an attempt, soonest first.
	PendingDeliveries(ctx context.Context, limit int) ([]*simulator.Delivery, error)
}

// SandboxOps are the process-wide operations: the virtual clock, DNS overrides, snapshots and
// reset.
type SandboxOps interface {
	// AdvanceClock moves the virtual clock by d: the process-wide one, or with instID only
	// that institution's (decisions D9); it returns the virtual time it moved to.
	AdvanceClock(ctx context.Context, instID string, d time.Duration) (time.Time, error)
	SetDNS(ctx context.Context, overrides map[string][]string) (map[string][]string, error)
	DNS(ctx context.Context) map[string][]string
	Reset(ctx context.Context) error
	SaveSnapshot(ctx context.Context, name string) error
	RestoreSnapshot(ctx context.Context, name string) error
}

// Scenarios plays the fixture scenarios and reports their runs.
type Scenarios interface {
	RunScenario(ctx context.Context, name, instID string) (*ScenarioRun, error)
	ScenarioRun(ctx context.Context, id string) (*ScenarioRun, error)
	// ScenarioRuns lists up to limit runs in the given status ("" for any), by run id.
	ScenarioRuns(ctx context.Context, status string, limit int) ([]*ScenarioRun, error)
	Scenarios(ctx context.Context) ([]ScenarioInfo, error)
}

// Control is every concern of the control plane at once: what the sandbox implements.
type Control interface {
	Tenants
	Trading
	Deliveries
	SandboxOps
	Scenarios
}

// requireToken guards the control plane with x-sandbox-token (decisions D9); an address with
// too many wrong tokens lately is answered 429 whatever it sends (decisions D18).
func requireToken(token string, throttle *TokenThrottle) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			r := c.Request()
			tok := r.Header.Get("x-sandbox-token")
			if tok == "" {
				return simulator.Errorf(simulator.EUNAUTHORIZED, "Not authenticated")
			}
			if wait := throttle.RetryAfter(r.RemoteAddr); wait > 0 {
				c.Response().Header().Set("Retry-After", RetryAfterSeconds(wait))
				return simulator.Errorf(simulator.ERATELIMIT, "Too many wrong sandbox tokens from this address: retry after the Retry-After seconds")
			}
			if subtle.ConstantTimeCompare([]byte(tok), []byte(token)) != 1 {
				throttle.Fail(r.RemoteAddr)
				return simulator.Errorf(simulator.EUNAUTHORIZED, "Invalid sandbox token")
			}
			return next(c)
		}
	}
}
