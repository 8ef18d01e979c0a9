package features

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cucumber/godog"
	"github.com/cucumber/godog/formatters"
	messages "github.com/cucumber/messages/go/v21"
)

// The suite reports through its own godog formatter, the recorder: it turns godog's events into
// the run's Report (one ScenarioResult per scenario, its steps as written — keyword and line
// from the Gherkin document), and every report format is rendered from that Report. godog's
// own formatters are not used: its JUnit writes a skipped scenario as one <error> per step
// with no reason and counts none of them skipped (cucumber/godog#375), and its pretty format
// interleaves the steps of concurrent scenarios.
//
// godog finds formatters by name in a process-wide registry and builds one per run from the
// suite's name; the recorder registers once under recorderFormat and each Run gives its suite
// a unique name by which the registered function finds that run's recorder.
const recorderFormat = "partnersim-recorder"

var (
	registerRecorder sync.Once
	recorders        sync.Map // suite name → *recorder
	recorderSeq      atomic.Int64
)

// newRecorder makes the run's recorder and returns the suite name godog must be given.
func newRecorder(rep *Report, live func(ScenarioResult)) (*recorder, string) {
	registerRecorder.Do(func() {
		godog.Format(recorderFormat, "partnersim's report recorder (internal)", func(suite string, _ io.Writer) formatters.Formatter {
			if r, ok := recorders.Load(suite); ok {
				return r.(*recorder)
			}
			return &recorder{rep: &Report{}, docs: map[string]*docIndex{}, open: map[string]*openScenario{}}
		})
	})
	rec := &recorder{rep: rep, live: live, docs: map[string]*docIndex{}, open: map[string]*openScenario{}}
	name := fmt.Sprintf("partner-api#%d", recorderSeq.Add(1))
	recorders.Store(name, rec)
	return rec, name
}

// release forgets the run's recorder.
func (rec *recorder) release(suite string) { recorders.Delete(suite) }

// recorder collects a run's outcomes. godog calls it from every concurrent scenario.
type recorder struct {
	rep  *Report
	live func(ScenarioResult) // called once per finished scenario (the live formats)

	mu   sync.Mutex
	docs map[string]*docIndex // by feature file
	open map[string]*openScenario
}

// openScenario is a scenario being recorded. godog reports its steps to the recorder (when it
// runs scenarios concurrently, only once the scenario is over), the world's hooks report how it
// ended and how long each step took; it is complete when both halves are in, in either order.
type openScenario struct {
	res     ScenarioResult
	stepIDs []string
	pickled bool // godog reported the scenario
	steps   int  // steps godog has yet to report
	ended   bool // the world's After hook reported
	end     scenarioEnd
}

// scenarioEnd is what the world knows of a scenario that godog's events do not say.
type scenarioEnd struct {
	skipReason string // why it was skipped: the option, capability or input missing
	filtered   bool   // left out by the name filter: not reported at all
	start      time.Time
	duration   time.Duration
	stepTimes  map[string]time.Duration // by godog's step id
	// capabilities are the state adapter's capabilities its control-plane requests needed.
	capabilities []string
}

func (rec *recorder) get(id string) *openScenario {
	o := rec.open[id]
	if o == nil {
		o = &openScenario{}
		rec.open[id] = o
	}
	return o
}

// docIndex finds a Gherkin document's nodes by id.
type docIndex struct {
	feature  FeatureInfo
	steps    map[string]*messages.Step
	scenario map[string]*messages.Scenario
	rows     map[string]rowRef
}

type rowRef struct {
	line int
	n    int // 1-based among all the outline's example rows
}

func indexDoc(doc *messages.GherkinDocument) *docIndex {
	ix := &docIndex{steps: map[string]*messages.Step{}, scenario: map[string]*messages.Scenario{}, rows: map[string]rowRef{}}
	f := doc.Feature
	if f == nil {
		return ix
	}
	ix.feature = FeatureInfo{Name: f.Name, Description: strings.TrimSpace(f.Description), Line: int(f.Location.Line)}
	for _, t := range f.Tags {
		ix.feature.Tags = append(ix.feature.Tags, strings.TrimPrefix(t.Name, "@"))
	}
	addBackground := func(b *messages.Background) {
		for _, s := range b.Steps {
			ix.steps[s.Id] = s
		}
	}
	addScenario := func(sc *messages.Scenario) {
		ix.scenario[sc.Id] = sc
		for _, s := range sc.Steps {
			ix.steps[s.Id] = s
		}
		n := 0
		for _, ex := range sc.Examples {
			for _, row := range ex.TableBody {
				n++
				ix.rows[row.Id] = rowRef{line: int(row.Location.Line), n: n}
			}
		}
	}
	for _, c := range f.Children {
		switch {
		case c.Background != nil:
			addBackground(c.Background)
		case c.Scenario != nil:
			addScenario(c.Scenario)
		case c.Rule != nil:
			for _, rc := range c.Rule.Children {
				if rc.Background != nil {
					addBackground(rc.Background)
				}
				if rc.Scenario != nil {
					addScenario(rc.Scenario)
				}
			}
		}
	}
	return ix
}

// TestRunStarted implements formatters.Formatter.
func (rec *recorder) TestRunStarted() {}

// Feature indexes a feature file's document.
func (rec *recorder) Feature(doc *messages.GherkinDocument, uri string, _ []byte) {
	ix := indexDoc(doc)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.docs[uri] = ix
	rec.rep.mu.Lock()
	if rec.rep.Features == nil {
		rec.rep.Features = map[string]FeatureInfo{}
	}
	rec.rep.Features[uri] = ix.feature
	rec.rep.mu.Unlock()
}

// Pickle opens a scenario.
func (rec *recorder) Pickle(p *messages.Pickle) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	res := ScenarioResult{Feature: p.Uri, Name: p.Name}
	for _, t := range p.Tags {
		res.Tags = append(res.Tags, strings.TrimPrefix(t.Name, "@"))
	}
	o := rec.get(p.Id)
	ix := rec.docs[p.Uri]
	if ix != nil {
		res.FeatureName = ix.feature.Name
		if len(p.AstNodeIds) > 0 {
			if sc := ix.scenario[p.AstNodeIds[0]]; sc != nil {
				res.Line = int(sc.Location.Line)
			}
		}
		if len(p.AstNodeIds) > 1 {
			if row, ok := ix.rows[p.AstNodeIds[1]]; ok {
				res.Line, res.Example = row.line, row.n
			}
		}
	}
	for _, st := range p.Steps {
		sr := StepResult{Text: st.Text, Status: Skipped}
		if ix != nil && len(st.AstNodeIds) > 0 {
			if s := ix.steps[st.AstNodeIds[0]]; s != nil {
				sr.Keyword, sr.Line = s.Keyword, int(s.Location.Line)
			}
		}
		sr.Arg = stepArg(st.Argument)
		res.Steps = append(res.Steps, sr)
		o.stepIDs = append(o.stepIDs, st.Id)
	}
	o.res, o.pickled, o.steps = res, true, len(p.Steps)
	if len(p.Steps) == 0 {
		// godog runs no hook for a scenario without steps.
		o.res.Status, o.res.Err, o.ended = Failed, "the scenario has no steps", true
		o.end.start = time.Now()
	}
	rec.finish(p.Id, o)
}

func stepArg(a *messages.PickleStepArgument) string {
	switch {
	case a == nil:
		return ""
	case a.DocString != nil:
		return a.DocString.Content
	case a.DataTable != nil:
		rows := make([]string, 0, len(a.DataTable.Rows))
		for _, r := range a.DataTable.Rows {
			cells := make([]string, 0, len(r.Cells))
			for _, c := range r.Cells {
				cells = append(cells, c.Value)
			}
			rows = append(rows, "| "+strings.Join(cells, " | ")+" |")
		}
		return strings.Join(rows, "\n")
	}
	return ""
}

// Defined implements formatters.Formatter.
func (rec *recorder) Defined(*messages.Pickle, *messages.PickleStep, *formatters.StepDefinition) {}

// Passed records a passed step.
func (rec *recorder) Passed(p *messages.Pickle, s *messages.PickleStep, _ *formatters.StepDefinition) {
	rec.step(p, s, Passed, nil)
}

// Failed records a failed step.
func (rec *recorder) Failed(p *messages.Pickle, s *messages.PickleStep, _ *formatters.StepDefinition, err error) {
	rec.step(p, s, Failed, err)
}

// Skipped records a skipped step.
func (rec *recorder) Skipped(p *messages.Pickle, s *messages.PickleStep, _ *formatters.StepDefinition) {
	rec.step(p, s, Skipped, nil)
}

// Undefined records a step no definition matches.
func (rec *recorder) Undefined(p *messages.Pickle, s *messages.PickleStep, _ *formatters.StepDefinition) {
	rec.step(p, s, Undefined, errors.New("no step definition matches this step"))
}

// Pending records a step whose definition is pending.
func (rec *recorder) Pending(p *messages.Pickle, s *messages.PickleStep, _ *formatters.StepDefinition) {
	rec.step(p, s, Pending, errors.New("the step definition is pending"))
}

// Ambiguous records a step several definitions match.
func (rec *recorder) Ambiguous(p *messages.Pickle, s *messages.PickleStep, _ *formatters.StepDefinition, err error) {
	rec.step(p, s, Ambiguous, err)
}

// Summary implements formatters.Formatter: the run's reports are written from the Report.
func (rec *recorder) Summary() {}

func (rec *recorder) step(p *messages.Pickle, s *messages.PickleStep, st Status, err error) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	o := rec.open[p.Id]
	if o == nil || !o.pickled {
		return
	}
	for i, ps := range p.Steps {
		if ps.Id != s.Id {
			continue
		}
		r := &o.res.Steps[i]
		r.Status = st
		if err != nil {
			r.Err = err.Error()
		}
		o.steps--
		break
	}
	rec.finish(p.Id, o)
}

// scenarioEnded is the world's After hook telling how the scenario ended.
func (rec *recorder) scenarioEnded(pickleID string, end scenarioEnd) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	o := rec.get(pickleID)
	o.ended, o.end = true, end
	rec.finish(pickleID, o)
}

// finish completes a scenario once both halves are in: its status follows from its steps.
func (rec *recorder) finish(id string, o *openScenario) {
	if !o.ended || !o.pickled || o.steps > 0 {
		return
	}
	delete(rec.open, id)
	if o.end.filtered {
		return
	}
	res := o.res
	res.Start, res.Duration, res.Capabilities = o.end.start, o.end.duration, o.end.capabilities
	for i, sid := range o.stepIDs {
		res.Steps[i].Duration = o.end.stepTimes[sid]
	}
	if res.Status == "" {
		res.Status, res.Err = scenarioOutcome(res.Steps, o.end.skipReason)
	}
	rec.rep.add(res)
	if rec.live != nil {
		rec.live(res)
	}
}

// scenarioOutcome decides a scenario's status from its steps: the first step that did not
// pass decides (strict: undefined, pending and ambiguous fail).
func scenarioOutcome(steps []StepResult, skipReason string) (Status, string) {
	for _, s := range steps {
		switch s.Status {
		case Passed:
			continue
		case Skipped:
			if skipReason == "" {
				skipReason = fmt.Sprintf("step %q (line %d) skipped the scenario without saying why", s.Text, s.Line)
			}
			return Skipped, skipReason
		default:
			return Failed, failureMessage(s)
		}
	}
	return Passed, ""
}

// failureMessage names the failed step and carries its error (which says what was expected and
// what came).
func failureMessage(s StepResult) string {
	kind := ""
	if s.Status != Failed {
		kind = string(s.Status) + " "
	}
	return fmt.Sprintf("%sstep %q (line %d): %s", kind, strings.TrimSpace(s.Keyword)+" "+s.Text, s.Line, s.Err)
}
