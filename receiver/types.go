package receiver

import (
	"encoding/json"
	"errors"
	"time"
)

// Verdict is what the receiver answered to one delivery.
type Verdict string

// The verdicts.
const (
	// VerdictAccepted: a new event, stored and acknowledged (2xx); it is queued for
	// processing or, per the filters, skipped.
	VerdictAccepted Verdict = "accepted"
	// VerdictDuplicate: an event already stored; acknowledged (2xx), not processed again.
	VerdictDuplicate Verdict = "duplicate"
	// VerdictRefused: the delivery failed verification or was not an event (400 or 413).
	VerdictRefused Verdict = "refused"
	// VerdictFault: answered by an injected failure; nothing was verified or stored.
	VerdictFault Verdict = "fault"
	// VerdictError: the receiver could not store the event (500); the sender will retry.
	VerdictError Verdict = "error"
)

// State is where an accepted event is in processing.
type State string

// The states.
const (
	// StateQueued: acknowledged and waiting for (or in) processing.
	StateQueued State = "queued"
	// StateProcessed: refetched and handed to Config.Process successfully.
	StateProcessed State = "processed"
	// StateSkipped: acknowledged but deliberately not processed (is_test, a transaction whose
	// data.status is not "completed", an unknown event_type); Reason says which.
	StateSkipped State = "skipped"
	// StateFailed: processing gave up; Reason holds the last error.
	StateFailed State = "failed"
)

// Envelope is the event body of decisions D8, as far as the receiver reads it.
type Envelope struct {
	EventID    string          `json:"event_id"`
	EventType  string          `json:"event_type"`
	APIVersion string          `json:"api_version,omitempty"`
	CreatedAt  string          `json:"created_at,omitempty"`
	IsTest     bool            `json:"is_test"`
	Data       json.RawMessage `json:"data,omitempty"`
	Links      struct {
		Self string `json:"self"`
	} `json:"links"`
}

// Event is what Config.Process is handed: the envelope, the body exactly as received, and the
// authoritative record refetched from links.self (nil when no API is configured).
type Event struct {
	Envelope
	Body     []byte
	Resource json.RawMessage
}

// Arrival is one delivery that reached the endpoint, with the answer it got.
type Arrival struct {
	Seq        uint64    `json:"seq"`
	ReceivedAt time.Time `json:"received_at"`
	// EventID is the body's event_id, once the body was verified and parsed.
	EventID string `json:"event_id,omitempty"`
	// HeaderID is the X-Partner-Webhook-Id header as sent.
	HeaderID   string  `json:"header_id,omitempty"`
	EventType  string  `json:"event_type,omitempty"`
	IsTest     bool    `json:"is_test"`
	Verdict    Verdict `json:"verdict"`
	StatusCode int     `json:"status_code"`
	// Reason says why a delivery was refused or faulted, or what happens to an accepted one.
	Reason string `json:"reason,omitempty"`
	// Body is the first 4 KiB of the body as received (bytes that are not UTF-8 show as U+FFFD).
	Body string `json:"body,omitempty"`
}

// Record is an accepted event and its processing.
type Record struct {
	EventID    string    `json:"event_id"`
	EventType  string    `json:"event_type"`
	IsTest     bool      `json:"is_test"`
	State      State     `json:"state"`
	Reason     string    `json:"reason,omitempty"`
	ReceivedAt time.Time `json:"received_at"`
	// Attempts counts processing attempts (refetch and Process) made so far.
	Attempts   int        `json:"attempts"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// Resource is the record refetched from links.self.
	Resource json.RawMessage `json:"resource,omitempty"`
	// Body is the event body as received (kept apart in the file; filled in on read).
	Body json.RawMessage `json:"body,omitempty"`
}

// ErrNotFound is returned by Receiver.Record for an event that was never accepted.
var ErrNotFound = errors.New("receiver: no such event")

// permanentError marks a processing error that retrying cannot mend.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent wraps err so that processing gives up at once instead of retrying; Process may
// return it for an event it can never handle. A nil err stays nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

func isPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}
