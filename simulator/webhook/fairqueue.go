package webhook

import (
	"sync"

	"github.com/partnersim/partnersim/simulator"
)

// fairQueue hands due deliveries to the workers fairly between institutions: one FIFO per
// institution, served round-robin, and no institution holds more than share workers at once.
// One partner's slow or hanging receivers so never take the workers another partner's
// deliveries need, while a lone busy institution still gets share workers.
type fairQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	share  int
	queues map[string][]*simulator.Delivery // institution → deliveries waiting for a worker
	ring   []string                         // institutions with a queue, in round-robin order
	next   int                              // where the next pop starts in ring
	busy   map[string]int                   // institution → attempts in progress
	instOf map[string]string                // subscription → institution, learnt from pushes
	closed bool
	// held marks the institutions found full since they last drained; drained is called when
	// one's deliveries queued or in progress fall to half of what is worth fetching for it:
	// time to fetch more.
	held    map[string]bool
	drained func()
}

func newFairQueue(share int, drained func()) *fairQueue {
	q := &fairQueue{share: share, queues: map[string][]*simulator.Delivery{}, busy: map[string]int{}, instOf: map[string]string{},
		held: map[string]bool{}, drained: drained}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// push queues a delivery for its institution.
func (q *fairQueue) push(dl *simulator.Delivery) {
	q.mu.Lock()
	defer q.mu.Unlock()
	inst := dl.InstitutionID
	q.instOf[dl.SubscriptionID] = inst
	if _, ok := q.queues[inst]; !ok {
		q.ring = append(q.ring, inst)
	}
	q.queues[inst] = append(q.queues[inst], dl)
	q.cond.Signal()
}

// depth is how many deliveries, queued or in progress, an institution may hold per worker of
// its share: enough to keep its workers fed between two outbox reads.
const depth = 8

// full reports whether a subscription's institution already has as many deliveries queued or
// in progress as are worth fetching (depth × its share); unknown subscriptions are not full.
// A full institution is held back until it drains.
func (q *fairQueue) full(subID string, extra map[string]int) (inst string, full bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	inst, ok := q.instOf[subID]
	if !ok {
		return "", false
	}
	if len(q.queues[inst])+q.busy[inst]+extra[inst] < depth*q.share {
		return inst, false
	}
	q.held[inst] = true
	return inst, true
}

// pop blocks until some institution below its share has a delivery waiting, takes the next
// one round-robin and counts it against the share; false once the queue is closed.
func (q *fairQueue) pop() (*simulator.Delivery, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		if q.closed {
			return nil, false
		}
		for i := range q.ring {
			k := (q.next + i) % len(q.ring)
			inst := q.ring[k]
			if q.busy[inst] >= q.share {
				continue
			}
			waiting := q.queues[inst]
			dl := waiting[0]
			if len(waiting) == 1 {
				delete(q.queues, inst)
				q.ring = append(q.ring[:k], q.ring[k+1:]...)
				q.next = k
			} else {
				q.queues[inst] = waiting[1:]
				q.next = k + 1
			}
			if len(q.ring) > 0 {
				q.next %= len(q.ring)
			} else {
				q.next = 0
			}
			q.busy[inst]++
			return dl, true
		}
		q.cond.Wait()
	}
}

// done frees the worker an institution's attempt held. One waiting worker is woken: at most
// one more of the institution's deliveries may be taken now, and any worker can take it.
func (q *fairQueue) done(inst string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.busy[inst]--; q.busy[inst] <= 0 {
		delete(q.busy, inst)
	}
	if q.held[inst] && len(q.queues[inst])+q.busy[inst] <= depth*q.share/2 {
		delete(q.held, inst)
		if q.drained != nil {
			q.drained()
		}
	}
	q.cond.Signal()
}

// close wakes every worker to stop and returns what was still queued: those deliveries stay
// pending in the outbox, to be fetched again.
func (q *fairQueue) close() []*simulator.Delivery {
	q.mu.Lock()
	q.closed = true
	var left []*simulator.Delivery
	for _, waiting := range q.queues {
		left = append(left, waiting...)
	}
	q.queues, q.ring = map[string][]*simulator.Delivery{}, nil
	q.mu.Unlock()
	q.cond.Broadcast()
	return left
}

// depths returns each institution's deliveries queued or in progress.
func (q *fairQueue) depths() map[string]int {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make(map[string]int, len(q.queues)+len(q.busy))
	for inst, waiting := range q.queues {
		out[inst] += len(waiting)
	}
	for inst, n := range q.busy {
		out[inst] += n
	}
	return out
}
