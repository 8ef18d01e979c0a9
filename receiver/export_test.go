package receiver

// The tests read the receiver's store directly; a running receiver shows the same through its
// Inspector (GET /_receiver/events and /_receiver/processed).

// Arrivals lists the deliveries that reached the endpoint, oldest first (the newest
// Config.MaxArrivals of them).
func (r *Receiver) Arrivals() ([]Arrival, error) {
	return r.store.arrivals(func(*Arrival) bool { return true })
}

// Records lists accepted events with the given state (all of them when state is empty):
// finished ones in the order they finished, then queued ones.
func (r *Receiver) Records(state State) ([]Record, error) {
	return r.store.records(func(rec *Record) bool { return state == "" || rec.State == state })
}

// Record returns one accepted event, body included; ErrNotFound if it was never accepted.
func (r *Receiver) Record(eventID string) (Record, error) {
	return r.store.record(eventID, true)
}
