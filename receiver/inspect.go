package receiver

import (
	"encoding/json"
	"net/http"
)

// Inspector serves the inspection API, to be mounted beside the endpoint at "/_receiver/":
//
//	GET /_receiver/events     what arrived: {"events":[Arrival…]}, oldest first; filters
//	                          ?event_id= and ?verdict= (accepted, duplicate, refused, fault, error)
//	GET /_receiver/processed  accepted events: {"processed":[Record…]}, in the order they
//	                          finished; ?state= processed (the default), skipped, failed,
//	                          queued or all; ?event_id=
//	GET /_receiver/faults     the injected failures in force
//	PUT /_receiver/faults     replace them (a Faults object; {} switches them off)
func (r *Receiver) Inspector() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /_receiver/events", r.handleEvents)
	mux.HandleFunc("GET /_receiver/processed", r.handleProcessed)
	mux.HandleFunc("GET /_receiver/faults", r.handleGetFaults)
	mux.HandleFunc("PUT /_receiver/faults", r.handlePutFaults)
	return mux
}

func detail(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"detail": msg})
}

func (r *Receiver) handleEvents(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	id, verdict := q.Get("event_id"), Verdict(q.Get("verdict"))
	list, err := r.store.arrivals(func(a *Arrival) bool {
		return (id == "" || a.EventID == id || a.HeaderID == id) && (verdict == "" || a.Verdict == verdict)
	})
	if err != nil {
		detail(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string][]Arrival{"events": list})
}

func (r *Receiver) handleProcessed(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	id, state := q.Get("event_id"), State(q.Get("state"))
	switch state {
	case "":
		state = StateProcessed
	case "all":
		state = ""
	case StateProcessed, StateSkipped, StateFailed, StateQueued:
	default:
		detail(w, http.StatusBadRequest, "state must be processed, skipped, failed, queued or all")
		return
	}
	list, err := r.store.records(func(rec *Record) bool {
		return (id == "" || rec.EventID == id) && (state == "" || rec.State == state)
	})
	if err != nil {
		detail(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string][]Record{"processed": list})
}

func (r *Receiver) handleGetFaults(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, r.Faults())
}

func (r *Receiver) handlePutFaults(w http.ResponseWriter, req *http.Request) {
	var f Faults
	dec := json.NewDecoder(http.MaxBytesReader(w, req.Body, 4096))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		detail(w, http.StatusBadRequest, "faults: "+err.Error())
		return
	}
	if err := r.SetFaults(f); err != nil {
		detail(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, r.Faults())
}
