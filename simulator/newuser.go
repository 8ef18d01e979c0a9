package simulator

import (
	"time"

	"github.com/shopspring/decimal"
)

// UserRequest is a user to create, as given (control plane, scenarios), before defaults.
type UserRequest struct {
	UserAccountID   string
	CreatedAt       *time.Time // default: now
	Sessions        int        // live sessions
	TermsAcceptedAt *time.Time // default: created_at
	TermsVersion    string     // default: "2024-01"
	Accounts        []AccountRequest
}

// AccountRequest is one account of a UserRequest.
type AccountRequest struct {
	Product       Product
	KYCStatus     KYCStatus  // default: pending
	KYCApprovedAt *time.Time // default for an approved account: the user's created_at
	Cash          decimal.Decimal
	Portfolio     string
	Holdings      []Holding
}

// NewUser builds the user a request creates in an institution, with the defaults the control
// plane documents (decisions D5, D9). Its platform id is the store's to give.
func NewUser(instID string, r UserRequest, now time.Time) *User {
	u := &User{InstitutionID: instID, UserAccountID: r.UserAccountID, CreatedAt: now, LiveSessions: r.Sessions}
	if r.CreatedAt != nil {
		u.CreatedAt = *r.CreatedAt
	}
	u.Terms = Terms{AcceptedAt: u.CreatedAt, Version: "2024-01"}
	if r.TermsAcceptedAt != nil {
		u.Terms.AcceptedAt = *r.TermsAcceptedAt
	}
	if r.TermsVersion != "" {
		u.Terms.Version = r.TermsVersion
	}
	for _, a := range r.Accounts {
		acct := Account{Product: a.Product, KYCStatus: a.KYCStatus, KYCApprovedAt: a.KYCApprovedAt, Cash: a.Cash,
			Portfolio: a.Portfolio, Holdings: a.Holdings}
		if acct.KYCStatus == "" {
			acct.KYCStatus = KYCPending
		}
		if acct.KYCStatus == KYCApproved && acct.KYCApprovedAt == nil {
			t := u.CreatedAt
			acct.KYCApprovedAt = &t
		}
		u.Accounts = append(u.Accounts, acct)
	}
	return u
}
