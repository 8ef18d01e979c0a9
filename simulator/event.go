package simulator

import (
	"fmt"
	"net/url"
	"time"
)

// The envelopes of decisions D8, fields in their published order.
type (
	kycBody struct {
		EventID    string    `json:"event_id"`
		EventType  EventType `json:"event_type"`
		APIVersion string    `json:"api_version"`
		CreatedAt  string    `json:"created_at"`
		IsTest     bool      `json:"is_test"`
		Data       kycData   `json:"data"`
		Links      links     `json:"links"`
	}
	kycData struct {
		UserAccountID string    `json:"user_account_id"`
		Product       Product   `json:"product"`
		KYCStatus     KYCStatus `json:"kyc_status"`
	}
	txnBody struct {
		EventID    string    `json:"event_id"`
		EventType  EventType `json:"event_type"`
		APIVersion string    `json:"api_version"`
		CreatedAt  string    `json:"created_at"`
		IsTest     bool      `json:"is_test"`
		Data       txnData   `json:"data"`
		Links      links     `json:"links"`
	}
	txnData struct {
		TransactionID string      `json:"transaction_id"`
		Status        OrderStatus `json:"status"`
		UserAccountID string      `json:"user_account_id"`
		Product       Product     `json:"product"`
	}
	links struct {
		Self string `json:"self"`
	}
)

// Body renders the event's delivery body at an API version: EncodeJSON's bytes, as the Python
// service writes them, the same bytes every time for the same event and version. links.self is built at that version (spec §6.1.6).
func (e *Event) Body(version string) []byte {
	var v any
	switch e.Type {
	case EventKYC:
		v = kycBody{EventID: e.ID, EventType: e.Type, APIVersion: version, CreatedAt: FormatTime(e.CreatedAt), IsTest: e.IsTest,
			Data:  kycData{UserAccountID: e.Data.UserAccountID, Product: e.Data.Product, KYCStatus: e.Data.KYCStatus},
			Links: links{Self: fmt.Sprintf("/%s/users/%s/?user_account_id_type=platform", version, url.PathEscape(e.Data.PlatformID))}}
	default:
		v = txnBody{EventID: e.ID, EventType: e.Type, APIVersion: version, CreatedAt: FormatTime(e.CreatedAt), IsTest: e.IsTest,
			Data:  txnData{TransactionID: e.Data.TransactionID, Status: e.Data.Status, UserAccountID: e.Data.UserAccountID, Product: e.Data.Product},
			Links: links{Self: fmt.Sprintf("/%s/transactions/%s/", version, url.PathEscape(e.Data.TransactionID))}}
	}
	b, err := EncodeJSON(v)
	if err != nil {
		panic("simulator: event body cannot fail to encode: " + err.Error())
	}
	return b
}

// TestEvent returns the synthetic is_test event of Send Test Webhook (decisions D8): a user and
// transaction that do not exist, a fresh event id each call.
func TestEvent(ids *IDs, instID string, t EventType, now timeLike) *Event {
	e := &Event{ID: ids.New("evt"), InstitutionID: instID, Type: t, CreatedAt: now.Now(), IsTest: true,
		Data: EventData{UserAccountID: "test_user", PlatformID: ids.New("usr_test"), Product: ProductCrypto}}
	if t == EventKYC {
		e.Data.KYCStatus = KYCApproved
	} else {
		e.Data.Product = ProductRobo
		e.Data.TransactionID = ids.New("txn_test")
		e.Data.Status = OrderCompleted
	}
	return e
}

// timeLike is anything with Now, such as *Clock.
type timeLike interface{ Now() time.Time }
