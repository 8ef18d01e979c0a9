package simulator

import "time"

// An advance of the virtual clock plays its window (decisions D8): every delivery attempt and
// scenario step that falls due within it runs, in order, at its own virtual time. Advance is
// what one did, as the control plane answers it.

// Advance is what an advance of the virtual clock did: the virtual time it ended at, and the
// attempts and steps it played, in the order they ran.
type Advance struct {
	Now      time.Time
	Attempts []FiredAttempt
	Steps    []FiredStep
}

// FiredAttempt is one delivery attempt an advance played.
type FiredAttempt struct {
	DeliveryID     string
	EventID        string
	SubscriptionID string
	InstitutionID  string
	// Number counts the delivery's attempts, 1 for the first.
	Number int
	// DueAt is the virtual time the attempt was due at, and ran at.
	DueAt      time.Time
	StatusCode int
	Error      string
	// Status is the delivery's after the attempt: pending (with NextAttemptAt), delivered or
	// failed.
	Status        string
	NextAttemptAt *time.Time
}

// Fired describes the attempt r of delivery d, made for its current slot.
func Fired(d *Delivery, r AttemptRecord) FiredAttempt {
	f := FiredAttempt{DeliveryID: d.ID, EventID: d.EventID, SubscriptionID: d.SubscriptionID, InstitutionID: d.InstitutionID,
		Number: len(d.Attempts) + 1, DueAt: d.NextAttemptAt, StatusCode: r.Attempt.StatusCode, Error: r.Attempt.Error}
	switch {
	case r.OK:
		f.Status = DeliveryDelivered
	case r.Next != nil:
		f.Status, f.NextAttemptAt = DeliveryPending, r.Next
	default:
		f.Status = DeliveryFailed
	}
	return f
}

// FiredStep is one scenario step an advance played.
type FiredStep struct {
	RunID         string
	Scenario      string
	InstitutionID string
	// Number counts the run's steps, 1 for the first.
	Number int
	ScenarioStep
}
