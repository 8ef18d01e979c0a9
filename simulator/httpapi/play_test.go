package httpapi_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/partnersim/partnersim/internal/sandboxtest"
	"github.com/partnersim/partnersim/simulator/sandbox"
	"github.com/partnersim/partnersim/simulator/webhook"
)

// failingDelivery makes an isolated institution whose kyc callback always answers 500 and one
// kyc event for it, and waits for the delivery's first attempt; it returns the institution and
// the event's id.
func (a *api) failingDelivery(tb testing.TB) (inst, eventID string) {
	tb.Helper()
	inst, key := a.tenant(tb, "", "")
	hook := sandboxtest.NewCallback(tb, sandboxtest.Answering(http.StatusInternalServerError))
	r := a.Call(tb, "POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+hook.URL+`"}`, "x-api-key: "+key)
	require.Equal(tb, http.StatusCreated, r.Status, r.Body)
	pid := a.user(tb, inst, `{"user_account_id":"play-1","accounts":[{"product":"crypto","kyc_status":"pending"}]}`)
	eventID = a.MustControl(tb, "POST", "/_sandbox/users/"+pid+"/kyc", `{"product":"crypto","status":"approved"}`).JSON("event_id").String()
	require.NotEmpty(tb, eventID)
	sandboxtest.Eventually(tb, func() bool {
		return a.MustControl(tb, "GET", "/_sandbox/deliveries?event_id="+eventID, "").JSON("deliveries.0.attempts.#").Int() == 1
	}, "the first attempt is made at once")
	return inst, eventID
}

// One advance past the whole retry schedule plays every retry in it, in order, each scheduled
// from its predecessor's virtual time, and ends a delivery whose callback keeps failing as
// failed; the answer lists each attempt it played (decisions D8). An advance that made only the
// next attempt due would leave the delivery pending after its second attempt.
func TestAnAdvancePlaysItsWindow(t *testing.T) {
	for _, scope := range []string{"process-wide", "the institution's"} {
		t.Run(scope, func(t *testing.T) {
			a := MustServe(t)
			inst, eventID := a.failingDelivery(t)
			body := `{"seconds":100000}`
			if scope != "process-wide" {
				body = `{"seconds":100000,"institution_id":"` + inst + `"}`
			}
			adv := a.MustControl(t, "POST", "/_sandbox/clock/advance", body)
			played := adv.JSON("attempts").Array()
			require.Len(t, played, len(webhook.DefaultSchedule), "every retry of the schedule is played: %s", adv.Body)
			for i, at := range played {
				assert.Equal(t, eventID, at.Get("event_id").String())
				assert.Equal(t, int64(i+2), at.Get("attempt").Int())
				assert.Equal(t, int64(500), at.Get("status_code").Int())
				if i < len(played)-1 {
					assert.Equal(t, "pending", at.Get("status").String())
					// The retry counts from this attempt's virtual time.
					due, next := stamp(t, at.Get("due_at")), stamp(t, at.Get("next_attempt_at"))
					assert.InDelta(t, webhook.DefaultSchedule[i+1].Seconds(), next.Sub(due).Seconds(), 1, "retry %d's delay", i+2)
					assert.Equal(t, at.Get("next_attempt_at").String(), played[i+1].Get("due_at").String())
				}
			}
			assert.Equal(t, "failed", played[len(played)-1].Get("status").String())
			d := a.MustControl(t, "GET", "/_sandbox/deliveries?event_id="+eventID, "").JSON("deliveries.0")
			assert.Equal(t, "failed", d.Get("status").String(), d.Raw)
			assert.Equal(t, int64(len(webhook.DefaultSchedule)+1), d.Get("attempts.#").Int())
		})
	}
}

// An advance by less than the next retry's delay plays nothing and says so; one that reaches
// it plays that retry alone.
func TestAnAdvancePlaysOnlyItsWindow(t *testing.T) {
	a := MustServe(t)
	_, eventID := a.failingDelivery(t)
	adv := a.MustControl(t, "POST", "/_sandbox/clock/advance", `{"seconds":1}`)
	assert.Empty(t, adv.JSON("attempts").Array(), adv.Body)
	adv = a.MustControl(t, "POST", "/_sandbox/clock/advance", `{"seconds":10}`)
	require.Len(t, adv.JSON("attempts").Array(), 1, adv.Body)
	assert.Equal(t, eventID, adv.JSON("attempts.0.event_id").String())
	assert.Equal(t, "pending", adv.JSON("attempts.0.status").String())
}

// The clock's offsets — the process's and an institution's — are kept in the store: a sandbox
// reopened on the same file stands where the one before stood (decisions D9).
func TestClockOffsetsSurviveARestart(t *testing.T) {
	frozen := time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "sandbox.db")
	cfg := func(c *sandbox.Config) { c.DBPath, c.FrozenClock = path, &frozen }
	a := MustServe(t, cfg)
	inst, _ := a.tenant(t, "", "")
	a.MustControl(t, "POST", "/_sandbox/clock/advance", `{"seconds":3600}`)
	a.MustControl(t, "POST", "/_sandbox/clock/advance", `{"seconds":7200,"institution_id":"`+inst+`"}`)
	a.Close()
	require.NoError(t, a.SB.Close())

	b := MustServe(t, cfg)
	clock := b.MustControl(t, "GET", "/_sandbox/clock", "")
	assert.Equal(t, "2026-06-15T13:00:00Z", clock.JSON("virtual_now").String(), clock.Body)
	got := clock.JSON(`institutions.#(institution_id=="` + inst + `")`)
	assert.Equal(t, "2026-06-15T15:00:00Z", got.Get("virtual_now").String(), clock.Body)
	assert.Equal(t, int64(7200), got.Get("offset_seconds").Int(), clock.Body)
}

func stamp(tb testing.TB, v gjson.Result) time.Time {
	tb.Helper()
	t, err := time.Parse(time.RFC3339Nano, v.String())
	require.NoError(tb, err, "a timestamp: %s", v.Raw)
	return t
}

// An advance plays the scenario steps due in its window in order, each at its own virtual
// time, and the deliveries of their events from that time on: a step's event is first
// attempted at the step's time, and every retry of it due in the window follows.
func TestAnAdvancePlaysScenarioStepsAndTheirDeliveries(t *testing.T) {
	a := MustServe(t)
	inst, key := a.tenant(t, "", "")
	hook := sandboxtest.NewCallback(t, sandboxtest.Answering(http.StatusInternalServerError))
	r := a.Call(t, "POST", "/v1/webhooks/subscriptions", `{"event_type":"kyc","url":"`+hook.URL+`"}`, "x-api-key: "+key)
	require.Equal(t, http.StatusCreated, r.Status, r.Body)
	run := a.MustControl(t, "POST", "/_sandbox/scenarios/onboarding-approved/run", `{"institution_id":"`+inst+`"}`)
	require.Equal(t, "running", run.JSON("status").String(), run.Body)

	adv := a.MustControl(t, "POST", "/_sandbox/clock/advance", `{"seconds":200000,"institution_id":"`+inst+`"}`)
	steps := adv.JSON("steps").Array()
	require.Len(t, steps, 3, "the three delayed steps: %s", adv.Body)
	for i, st := range steps {
		assert.Equal(t, int64(i+2), st.Get("step").Int())
		assert.Equal(t, "done", st.Get("status").String(), st.Raw)
		assert.Equal(t, run.JSON(fmt.Sprintf("steps.%d.due_at", i+1)).String(), st.Get("due_at").String())
	}
	// Two events (document_requested, approved), each attempted over the whole schedule.
	byEvent := map[string][]gjson.Result{}
	var last time.Time
	for _, at := range adv.JSON("attempts").Array() {
		due := stamp(t, at.Get("due_at"))
		assert.False(t, due.Before(last), "attempts in due order: %s after %s", due, last)
		last = due
		byEvent[at.Get("event_id").String()] = append(byEvent[at.Get("event_id").String()], at)
	}
	for _, i := range []int{0, 2} { // the steps that deliver
		ev := steps[i].Get("event_id").String()
		got := byEvent[ev]
		require.Len(t, got, len(webhook.DefaultSchedule)+1, "every attempt of %s", ev)
		// The wall clock runs on during the play: the step's time, give or take its run.
		assert.InDelta(t, 0, stamp(t, got[0].Get("due_at")).Sub(stamp(t, steps[i].Get("due_at"))).Seconds(), 1, "first attempted at its step's time")
		assert.Equal(t, "failed", got[len(got)-1].Get("status").String())
	}
	assert.Equal(t, "completed", a.MustControl(t, "GET", "/_sandbox/scenarios/runs/"+run.JSON("run_id").String(), "").JSON("status").String())
}
