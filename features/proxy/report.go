package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/partnersim/partnersim/internal/junit"
)

// WriteJUnit writes one testsuite per kind (the deployment's violations, the app's lint) with
// one testcase per rule: passed, failed with its findings, or skipped as not observed, saying
// what traffic would exercise it.
func (b *Book) WriteJUnit(w io.Writer, now time.Time) error {
	doc := junit.Suites{Name: "partnersim proxy", Time: junit.Seconds(now.Sub(b.start))}
	none, document := b.Unchecked()
	props := &junit.Properties{Props: []junit.Property{{Name: "unchecked_exchanges", Value: fmt.Sprint(none)}, {Name: "exchanges_unchecked_against_the_document", Value: fmt.Sprint(document)}}}
	for _, kind := range []Kind{Violation, Lint} {
		s := junit.Suite{Name: "partnersim proxy: " + string(kind) + "s", Time: doc.Time, Timestamp: b.start.UTC().Format("2006-01-02T15:04:05"), Properties: props}
		for _, r := range b.Results() {
			if r.Kind != kind {
				continue
			}
			c := junit.Case{Name: r.ID, Classname: "proxy." + string(kind), Time: "0.000",
				SystemOut: fmt.Sprintf("%s\nobserved %d times, failed %d", r.Says, r.Observed, r.Failed)}
			switch r.Status() {
			case "failed":
				var lines []string
				for _, f := range r.Findings {
					lines = append(lines, f.At.Format(time.RFC3339)+" "+f.Exchange+": "+f.Detail)
				}
				if r.Failed > len(r.Findings) {
					lines = append(lines, fmt.Sprintf("… and %d more", r.Failed-len(r.Findings)))
				}
				c.Failure = &junit.Message{Message: fmt.Sprintf("%d of %d exchanges broke it: %s", r.Failed, r.Observed, r.Findings[0].Detail), Type: string(kind), Text: strings.Join(lines, "\n")}
				s.Failures++
			case "not observed":
				c.Skipped = &junit.Message{Message: "not observed: no traffic exercised it (it needs " + r.Needs + ")"}
				s.Skipped++
			}
			s.Cases = append(s.Cases, c)
			s.Tests++
		}
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Skipped += s.Skipped
		doc.Suites = append(doc.Suites, s)
	}
	return junit.Write(w, doc)
}

// jsonReport is the JSON report.
type jsonReport struct {
	Started time.Time `json:"started"`
	Stopped time.Time `json:"stopped"`
	// Unchecked counts exchanges forwarded with no check (the checks had fallen behind), and
	// UncheckedDocument those not checked against the document for that reason.
	Unchecked         int64        `json:"unchecked_exchanges"`
	UncheckedDocument int64        `json:"exchanges_unchecked_against_the_document"`
	Passed            int          `json:"passed"`
	Failed            int          `json:"failed"`
	Skipped           int          `json:"not_observed"`
	Rules             []jsonResult `json:"rules"`
	// Proxy, Final and Recent are the report a proxy sends the sandbox it fronts (sandbox.go):
	// where the app calls it, whether it has stopped, and its last exchanges, newest first.
	Proxy  string         `json:"proxy,omitempty"`
	Final  bool           `json:"final,omitempty"`
	Recent []seenExchange `json:"recent,omitempty"`
}

type jsonResult struct {
	RuleResult
	Status string `json:"status"`
	Why    string `json:"why,omitempty"`
}

// WriteJSON writes every rule's outcome as JSON.
func (b *Book) WriteJSON(w io.Writer, now time.Time) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(b.jsonReport(now))
}

// jsonReport is every rule's outcome, as WriteJSON writes it.
func (b *Book) jsonReport(now time.Time) jsonReport {
	rep := jsonReport{Started: b.start.UTC(), Stopped: now.UTC()}
	rep.Unchecked, rep.UncheckedDocument = b.Unchecked()
	for _, r := range b.Results() {
		j := jsonResult{RuleResult: r, Status: r.Status()}
		switch j.Status {
		case "passed":
			rep.Passed++
		case "failed":
			rep.Failed++
		default:
			rep.Skipped++
			j.Why = "no traffic exercised it (it needs " + r.Needs + ")"
		}
		rep.Rules = append(rep.Rules, j)
	}
	return rep
}

// WriteSARIF writes the findings as SARIF 2.1.0: one rule per rule, one result per kept
// finding (violations as errors, lint as warnings), located at the exchange's path.
func (b *Book) WriteSARIF(w io.Writer, _ time.Time) error {
	type msg struct {
		Text string `json:"text"`
	}
	type rule struct {
		ID               string `json:"id"`
		ShortDescription msg    `json:"shortDescription"`
	}
	type location struct {
		PhysicalLocation struct {
			ArtifactLocation struct {
				URI string `json:"uri"`
			} `json:"artifactLocation"`
		} `json:"physicalLocation"`
	}
	type result struct {
		RuleID    string     `json:"ruleId"`
		Level     string     `json:"level"`
		Message   msg        `json:"message"`
		Locations []location `json:"locations"`
	}
	var rules []rule
	var results []result
	for _, r := range b.Results() {
		rules = append(rules, rule{ID: r.ID, ShortDescription: msg{r.Says}})
		for _, f := range r.Findings {
			level := "error"
			if r.Kind == Lint {
				level = "warning"
			}
			var l location
			_, path, _ := strings.Cut(f.Exchange, " ")
			path, _, _ = strings.Cut(path, " ")
			l.PhysicalLocation.ArtifactLocation.URI = strings.TrimPrefix(path, "/")
			results = append(results, result{RuleID: r.ID, Level: level, Message: msg{f.Exchange + ": " + f.Detail}, Locations: []location{l}})
		}
	}
	if results == nil {
		results = []result{}
	}
	doc := map[string]any{
		"version": "2.1.0",
		"$schema": "https://json.schemastore.org/sarif-2.1.0.json",
		"runs": []any{map[string]any{
			"tool":    map[string]any{"driver": map[string]any{"name": "partnersim proxy", "informationUri": "https://github.com/partnersim/partnersim", "rules": rules}},
			"results": results,
		}},
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
