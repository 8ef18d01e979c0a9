package simulator

import (
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
)

// kycNext is the KYC transition graph of decisions D9.
var kycNext = map[KYCStatus][]KYCStatus{
	KYCPending:           {KYCDocumentRequested, KYCApproved, KYCRejected},
	KYCDocumentRequested: {KYCPending, KYCApproved, KYCRejected},
	KYCApproved:          {KYCClosed, KYCAccountTakeover},
	KYCAccountTakeover:   {KYCApproved, KYCClosed},
	KYCRejected:          {KYCPending, KYCClosed},
	KYCClosed:            nil,
}

// NextKYC returns the states an account in state s may move to.
func NextKYC(s KYCStatus) []KYCStatus { return kycNext[s] }

// CheckKYCMove returns nil when an account in state from may move to state to, and otherwise
// the ECONFLICT error naming the allowed next states. The state machine applies it, and the
// fixture checker applies it to a scenario's scripted moves.
func CheckKYCMove(from, to KYCStatus) error {
	allowed := kycNext[from]
	if slices.Contains(allowed, to) {
		return nil
	}
	names := make([]string, len(allowed))
	for i, s := range allowed {
		names[i] = string(s)
	}
	next := strings.Join(names, ", ")
	if next == "" {
		next = "none"
	}
	return Errorf(ECONFLICT, "kyc transition not allowed: %s -> %s (allowed next states: %s)", from, to, next)
}

// KYCDelivered reports whether a transition into s is delivered as a kyc event: every state
// but pending, which is intermediate (spec §3.1, decisions D8).
func KYCDelivered(s KYCStatus) bool { return s != KYCPending }

// KYCMove is what one KYC move leaves: the account as it now is, its institution's prices
// (what its market value is counted at) and the kyc event it emitted (nil for a move to
// pending, which is not delivered).
type KYCMove struct {
	Account Account
	Prices  map[string]decimal.Decimal
	Event   *Event
}

// TransitionKYC moves the account to state to at time now. A transition not in the graph is an
// ECONFLICT error naming the allowed next states. The first move into approved stamps
// KYCApprovedAt, which later moves keep (decisions D5).
func (a *Account) TransitionKYC(to KYCStatus, now time.Time) error {
	if KYCIndex(to) < 0 {
		return Errorf(EINVALID, "unknown kyc status: %s", to)
	}
	if err := CheckKYCMove(a.KYCStatus, to); err != nil {
		return err
	}
	a.KYCStatus = to
	if to == KYCApproved && a.KYCApprovedAt == nil {
		t := now.UTC()
		a.KYCApprovedAt = &t
	}
	return nil
}

// ShowsApprovedAt reports whether kyc_approved_at is shown for the account: present while
// approved and kept after a later move to closed or account_takeover (decisions D5).
func (a *Account) ShowsApprovedAt() bool {
	return a.KYCApprovedAt != nil && a.KYCStatus.ShowsApprovedAt()
}

// ShowsApprovedAt reports whether an account in this state shows the kyc_approved_at it has.
func (s KYCStatus) ShowsApprovedAt() bool {
	switch s {
	case KYCApproved, KYCClosed, KYCAccountTakeover:
		return true
	}
	return false
}
