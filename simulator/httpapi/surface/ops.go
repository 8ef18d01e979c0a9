package surface

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/partnersim/partnersim/simulator"
)

// The control plane's operations (/_sandbox/, decisions D9), one small interface per concern,
// declared here for the two front ends that call them: httpapi's handlers and the QA console;
// the sandbox hands the control service (package control) to each. Every error named is a
// *simulator.Error of that code; any other error is the store's and answers 500. These comments
// are the one home of each operation's error contract: the service's methods point here, and
// control's TestEveryErrorIsNamedInItsOneComment provokes every code each one names.

// Operations are the control plane's services by concern, as the sandbox hands them to both
// front ends (httpapi.Deps and console.Config embed them).
type Operations struct {
	Tenants      Tenants
	Institutions Institutions
	Trading      Trading
	Deliveries   Deliveries
	Sandbox      SandboxOps
	Scenarios    Scenarios
}

// Tenants creates and removes institutions, their keys, members and users, prices and signing
// secrets.
type Tenants interface {
	// CreateInstitution creates a tenant with the default prices and fees; it returns the
	// store's errors only.
	CreateInstitution(ctx context.Context, name string, v simulator.Vendors) (*simulator.Institution, error)
	// DeleteInstitution removes an institution and everything of it (ENOTFOUND when unknown).
	DeleteInstitution(ctx context.Context, instID string) error
	// IssueKey issues a key and returns its plaintext, shown once (ENOTFOUND for an unknown
	// institution).
	IssueKey(ctx context.Context, instID string, scopes []simulator.Scope, description string) (*simulator.APIKey, string, error)
	// RevokeKey revokes a key (ENOTFOUND when unknown or already revoked).
	RevokeKey(ctx context.Context, keyID string) error
	// CreateMember adds a member (ENOTFOUND for an unknown institution, ECONFLICT for a taken
	// core or dbp id).
	CreateMember(ctx context.Context, m *simulator.Member) error
	// CreateUser adds a user and sets its platform id (ENOTFOUND for an unknown institution,
	// ECONFLICT for a taken user_account_id, EINVALID for a holding without a price).
	CreateUser(ctx context.Context, u *simulator.User) error
	// SetPrices merges prices into the institution's and returns them all (ENOTFOUND when
	// unknown, EINVALID for a price that is not positive: nothing changes).
	SetPrices(ctx context.Context, instID string, prices map[string]decimal.Decimal) (map[string]decimal.Decimal, error)
	// RotateSecret issues a new signing secret, the old one signing on for overlap (ENOTFOUND
	// for an unknown institution).
	RotateSecret(ctx context.Context, instID string, overlap time.Duration) (string, error)
}

// Institutions reads what the institutions hold, as stored.
type Institutions interface {
	// Institutions lists every institution with its count of users; it returns the store's
	// errors only.
	Institutions(ctx context.Context) ([]*simulator.Institution, []int, error)
	// Institution returns an institution with its prices and fees (ENOTFOUND when unknown).
	Institution(ctx context.Context, id string) (*simulator.Institution, error)
	// User returns a user of any institution by platform id (ENOTFOUND when unknown).
	User(ctx context.Context, platformID string) (*simulator.User, error)
	// ListUsers lists one page of the institution's users with Get User List's filters
	// (ENOTFOUND for an unknown institution).
	ListUsers(ctx context.Context, instID string, f simulator.UserFilter) (*simulator.UserPage, error)
	// ListOrders lists one page of the institution's orders with Get Order List's
	// filters (ENOTFOUND for an unknown institution).
	ListOrders(ctx context.Context, instID string, f simulator.OrderFilter) (*simulator.OrderPage, error)
	// Keys lists the institution's keys, never a plaintext (ENOTFOUND for an
	// unknown institution).
	Keys(ctx context.Context, instID string) ([]*simulator.APIKey, error)
	// Subscriptions lists the institution's live subscriptions (ENOTFOUND for an
	// unknown institution).
	Subscriptions(ctx context.Context, instID string) ([]*simulator.Subscription, error)
}

// Trading moves KYC states and places, fills, cancels and fails transactions, each in one
// transaction of the store.
type Trading interface {
	// TransitionKYC moves one account through the KYC state machine and returns the account,
	// its institution's prices and the event emitted (ENOTFOUND for an unknown user or
	// account, ECONFLICT for a move the machine refuses, EINVALID for an unknown state).
	TransitionKYC(ctx context.Context, platformID string, p simulator.Product, to simulator.KYCStatus) (*simulator.KYCMove, error)
	// PlaceOrder places a pending order (ENOTFOUND for an unknown user or account, ECONFLICT
	// for an account that is not approved, EINVALID for a symbol without a price).
	PlaceOrder(ctx context.Context, r simulator.OrderRequest) (*simulator.Transaction, []*simulator.Order, error)
	// PlaceRobo places a robo deposit, withdrawal or rebalance across the account's model
	// portfolio (ENOTFOUND for an unknown user or robo account, ECONFLICT for an account that
	// is not approved, EINVALID for an amount that is not positive or too small to trade after
	// fees, or a portfolio symbol without a price).
	PlaceRobo(ctx context.Context, platformID string, typ simulator.TransactionType, amount decimal.Decimal) (*simulator.Transaction, []*simulator.Order, error)
	// FillTransaction fills a pending transaction at prices (by symbol; the institution's for
	// those not given) and emits its event (ENOTFOUND when unknown, ECONFLICT when not pending
	// or when the account lacks the cash or the position the fill needs, EINVALID for a price
	// that is not positive or a symbol without one: then nothing changes).
	FillTransaction(ctx context.Context, txnID string, prices map[string]decimal.Decimal) (*simulator.Transaction, []*simulator.Order, *simulator.Event, error)
	// EndTransaction cancels or fails a pending transaction (ENOTFOUND when unknown,
	// ECONFLICT when not pending).
	EndTransaction(ctx context.Context, txnID string, to simulator.OrderStatus) (*simulator.Transaction, []*simulator.Order, error)
	// TransactionAny returns a transaction of any institution with its orders (ENOTFOUND when
	// unknown).
	TransactionAny(ctx context.Context, id string) (*simulator.Transaction, []*simulator.Order, error)
}

// Deliveries lists webhook deliveries with their attempts and redelivers events.
type Deliveries interface {
	// Deliveries lists one page of the delivery log, newest first (EINVALID for a cursor that
	// is not an earlier page's next_cursor; otherwise the store's errors only).
	Deliveries(ctx context.Context, f simulator.DeliveryFilter) (*simulator.DeliveryPage, error)
	// Redeliver queues an event again, one delivery per enabled subscription of its type
	// (ENOTFOUND for an unknown event, or one with no enabled subscription to go to).
	Redeliver(ctx context.Context, eventID string) ([]*simulator.Delivery, error)
	// RedeliverDelivery queues the event of one delivery again, to that delivery's
	// subscription only (ENOTFOUND for an unknown delivery, or one whose subscription is no
	// longer enabled).
	RedeliverDelivery(ctx context.Context, id string) (*simulator.Delivery, error)
	// PendingDeliveries lists up to limit deliveries waiting for an attempt, soonest first;
	// it returns the store's errors only.
	PendingDeliveries(ctx context.Context, limit int) ([]*simulator.Delivery, error)
}

// SandboxOps are the process-wide operations: the virtual clock, DNS overrides, snapshots and
// reset.
type SandboxOps interface {
	// AdvanceClock moves the virtual clock by d: the process-wide one, or with instID only
	// that institution's (decisions D9), playing the attempts and steps due in the window
	// (decisions D8); it returns the virtual time it moved to and what it played (EINVALID
	// beyond simulator.MaxAdvance or the storable range, ENOTFOUND for an unknown
	// institution).
	AdvanceClock(ctx context.Context, instID string, d time.Duration) (*simulator.Advance, error)
	// SetDNS overrides callback-host answers and returns those in force (EINVALID for a bad
	// name or address, or too many: then nothing changes).
	SetDNS(ctx context.Context, overrides map[string][]string) (map[string][]string, error)
	// DNS returns the overrides in force.
	DNS(ctx context.Context) map[string][]string
	// Reset reloads the fixtures into the emptied store and empties the request journal; it
	// returns the store's or the fixtures' errors.
	Reset(ctx context.Context) error
	// SaveSnapshot saves the store as the snapshot name (EINVALID for a name that is not a
	// plain file name; otherwise the store's and the file system's errors only).
	SaveSnapshot(ctx context.Context, name string) error
	// RestoreSnapshot replaces the store with the snapshot name (EINVALID for a name that is
	// not a plain file name, ENOTFOUND when none was saved).
	RestoreSnapshot(ctx context.Context, name string) error
}

// Scenarios plays the fixture scenarios and reports their runs.
type Scenarios interface {
	// RunScenario starts a scenario in an institution ("" for the fixtures' first) and
	// returns the run as it stands once the steps due now ran (ENOTFOUND for an unknown
	// scenario or institution).
	RunScenario(ctx context.Context, name, instID string) (*simulator.ScenarioRun, error)
	// ScenarioRun returns a run of this process (ENOTFOUND when none).
	ScenarioRun(ctx context.Context, id string) (*simulator.ScenarioRun, error)
	// ScenarioRuns lists up to limit runs in the given status ("" for any), by run id; it
	// returns no error of its own.
	ScenarioRuns(ctx context.Context, status string, limit int) ([]*simulator.ScenarioRun, error)
	// Scenarios lists the fixture scenarios by name; it returns no error of its own.
	Scenarios(ctx context.Context) ([]simulator.ScenarioInfo, error)
}
