package webhook

import (
	"testing"

	"github.com/partnersim/partnersim/simulator"
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

// An institution held back is fetched for again once it has drained to half of what is worth
// fetching for it, whatever its count when it was found full: a walk may find it full on the
// deliveries it is still fetching, and its running attempts may all finish before they are
// queued (waking only on reaching exactly half missed that, and the dispatcher slept a second).
func TestFairQueueWakesWhenAHeldInstitutionDrains(t *testing.T) {
	wakes := 0
	q := newFairQueue(1, func() { wakes++ }) // depth × share = 8: half is 4
	push := func(n int) {
		for range n {
			q.push(&simulator.Delivery{InstitutionID: "A", SubscriptionID: "sub_A"})
		}
	}
	finish := func(n int) {
		for range n {
			if _, ok := q.pop(); !ok {
				t.Fatal("closed")
			}
			q.done("A")
		}
	}
	push(4)
	if _, full := q.full("sub_A", map[string]int{"A": 4}); !full {
		t.Fatal("4 queued and 4 being fetched: full")
	}
	finish(1)
	if wakes != 1 {
		t.Fatalf("wakes %d after the held institution drained to 3, want 1", wakes)
	}
	finish(3)
	push(8)
	finish(8)
	if wakes != 1 {
		t.Fatalf("wakes %d, want 1: A was not held again", wakes)
	}
	if _, full := q.full("sub_A", map[string]int{"A": 8}); !full {
		t.Fatal("8 being fetched: full")
	}
	push(8)
	finish(3)
	if wakes != 1 {
		t.Fatalf("wakes %d with 5 left, want 1", wakes)
	}
	finish(1)
	if wakes != 2 {
		t.Fatalf("wakes %d once 4 are left, want 2", wakes)
	}
}
