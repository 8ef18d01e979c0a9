package webhook

import (
	"testing"

	"partnersim/simulator"
)

// The queue serves institutions round-robin and never lets one hold more than its share.
func TestFairQueueRoundRobinWithinShares(t *testing.T) {
	q := newFairQueue(2, nil)
	for i, inst := range []string{"A", "A", "A", "A", "B", "C"} {
		q.push(&simulator.Delivery{ID: string(rune('0' + i)), InstitutionID: inst, SubscriptionID: "sub_" + inst})
	}
	var got string
	for range 4 {
		dl, ok := q.pop()
		if !ok {
			t.Fatal("closed")
		}
		got += dl.InstitutionID
	}
	if got != "ABCA" {
		t.Fatalf("pop order %q, want ABCA (round-robin, A at its share of 2 after two)", got)
	}
	if _, full := q.full("sub_A", nil); full {
		t.Error("A has 2 queued + 2 busy, below depth × share")
	}
	popped := make(chan string)
	go func() {
		dl, _ := q.pop()
		popped <- dl.InstitutionID
	}()
	select {
	case inst := <-popped:
		t.Fatalf("popped %s while A is at its share and nothing else waits", inst)
	default:
	}
	q.done("A")
	if inst := <-popped; inst != "A" {
		t.Fatalf("after A freed a worker, popped %s", inst)
	}
	if left := q.close(); len(left) != 1 || left[0].InstitutionID != "A" {
		t.Fatalf("close returns the one delivery still queued, got %v", left)
	}
}
