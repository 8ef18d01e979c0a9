package simulator

import "slices"

// Product is an investing product.
type Product string

// The products, in the order the spec lists them.
const (
	ProductSecurities Product = "securities"
	ProductRobo       Product = "robo"
	ProductCrypto     Product = "crypto"
	ProductRothIRA    Product = "roth_ira"
)

// Products lists every product in spec order. Index positions are stable: storage packs one
// status byte per product in this order.
var Products = []Product{ProductSecurities, ProductRobo, ProductCrypto, ProductRothIRA}

// ProductIndex returns the position of x in Products, or -1. It is a switch on the constants
// (on x's length, then its bytes) rather than a compare with each value in turn: a page of
// orders finds a product, a side and a status a record (decisions D6). It, SideIndex and
// OrderStatusIndex are the only positions of their lists outside the lists themselves, and
// TestEnumIndexes holds each to its list.
func ProductIndex(x Product) int {
	switch x {
	case ProductSecurities:
		return 0
	case ProductRobo:
		return 1
	case ProductCrypto:
		return 2
	case ProductRothIRA:
		return 3
	}
	return -1
}

// KYCStatus is the verification state of one product account.
type KYCStatus string

// The KYC states of spec §2.1.
const (
	KYCPending           KYCStatus = "pending"
	KYCDocumentRequested KYCStatus = "document_requested"
	KYCApproved          KYCStatus = "approved"
	KYCRejected          KYCStatus = "rejected"
	KYCClosed            KYCStatus = "closed"
	KYCAccountTakeover   KYCStatus = "account_takeover"
)

// KYCStatuses lists every KYC state in spec order (stable positions, 1-based in storage).
var KYCStatuses = []KYCStatus{KYCPending, KYCDocumentRequested, KYCApproved, KYCRejected, KYCClosed, KYCAccountTakeover}

// KYCIndex returns the position of x in KYCStatuses, or -1.
func KYCIndex(x KYCStatus) int { return slices.Index(KYCStatuses, x) }

// IDType is PartnerUserAccountIdType: how a user_account_id is to be read.
type IDType string

// The id types of spec §2.1.
const (
	IDPlatform IDType = "platform"
	IDCore     IDType = "core"
	IDDBP      IDType = "dbp"
)

// Side is an order's side.
type Side string

// Order sides.
const (
	SideBuy  Side = "buy"
	SideSell Side = "sell"
)

// Sides lists the order sides (stable positions: a store's order index keeps them so).
var Sides = []Side{SideBuy, SideSell}

// SideIndex returns the position of x in Sides, or -1, by a switch as ProductIndex.
func SideIndex(x Side) int {
	switch x {
	case SideBuy:
		return 0
	case SideSell:
		return 1
	}
	return -1
}

// OrderStatus is an order's (and a transaction's) lifecycle state (decisions D6).
type OrderStatus string

// Order states.
const (
	OrderPending   OrderStatus = "pending"
	OrderCompleted OrderStatus = "completed"
	OrderCanceled  OrderStatus = "canceled"
	OrderFailed    OrderStatus = "failed"
)

// OrderStatuses lists every order state (stable positions).
var OrderStatuses = []OrderStatus{OrderPending, OrderCompleted, OrderCanceled, OrderFailed}

// OrderStatusIndex returns the position of x in OrderStatuses, or -1, by a switch as
// ProductIndex.
func OrderStatusIndex(x OrderStatus) int {
	switch x {
	case OrderPending:
		return 0
	case OrderCompleted:
		return 1
	case OrderCanceled:
		return 2
	case OrderFailed:
		return 3
	}
	return -1
}

// TransactionType is what a transaction does (decisions D7).
type TransactionType string

// Transaction types.
const (
	TxnBuy        TransactionType = "buy"
	TxnSell       TransactionType = "sell"
	TxnDeposit    TransactionType = "deposit"
	TxnWithdrawal TransactionType = "withdrawal"
	TxnRebalance  TransactionType = "rebalance"
)

// EventType is a webhook event type.
type EventType string

// Event types.
const (
	EventKYC         EventType = "kyc"
	EventTransaction EventType = "transaction"
)

// Scope is an API key permission (spec §5, decisions D3).
type Scope string

// Scopes.
const (
	ScopeReadUser       Scope = "read:user"
	ScopeReadOrders     Scope = "read:orders"
	ScopeManageSessions Scope = "manage:sessions"
	ScopeManageWebhooks Scope = "manage:webhooks"
)

// Scopes lists every scope.
var Scopes = []Scope{ScopeReadUser, ScopeReadOrders, ScopeManageSessions, ScopeManageWebhooks}
