package features

import (
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every report lists each rule the run could not check with what it lacked: the Report in Go,
// the human formats, JUnit (properties of the rule inventory's suite, which has no testcases so
// the counts stay the scenarios') and cucumber JSON (the rule inventory's feature, no elements).
func TestEveryReportListsTheUncheckedRules(t *testing.T) {
	t.Parallel()
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			rep, out := mixedRun(t, format)
			unchecked := rep.UncheckedRules()
			require.NotEmpty(t, unchecked, "a run of three features leaves rules unchecked")
			reasons := map[string]bool{}
			for _, o := range unchecked {
				require.NotEmpty(t, o.Lacked())
				reasons[o.Lacked()] = true
			}
			assert.True(t, reasons["@sandbox: no control plane (--sandbox-url)"], "a rule lacking the control plane says so: %v", reasons)
			var listed map[string]string
			switch format {
			case "pretty", "progress":
				listed = map[string]string{}
				for _, line := range strings.Split(out, "\n") {
					if rest, ok := strings.CutPrefix(line, "  unchecked "); ok {
						id, why, _ := strings.Cut(rest, ": ")
						listed[id] = why
					}
				}
			case "junit":
				var doc struct {
					Suites []struct {
						Name  string `xml:"name,attr"`
						Props []struct {
							Name  string `xml:"name,attr"`
							Value string `xml:"value,attr"`
						} `xml:"properties>property"`
					} `xml:"testsuite"`
				}
				require.NoError(t, xml.Unmarshal([]byte(out), &doc))
				listed = map[string]string{}
				for _, s := range doc.Suites {
					for _, p := range s.Props {
						if id, ok := strings.CutPrefix(p.Name, "unchecked "); ok {
							listed[id] = p.Value
						}
					}
				}
			case "cucumber":
				var feats []struct {
					URI, Description string
				}
				require.NoError(t, json.Unmarshal([]byte(out), &feats))
				listed = map[string]string{}
				for _, f := range feats {
					if f.URI != "rules.tsv" {
						continue
					}
					for _, line := range strings.Split(f.Description, "\n")[1:] {
						id, why, _ := strings.Cut(line, ": ")
						listed[id] = why
					}
				}
			}
			assert.Len(t, listed, len(unchecked), "every unchecked rule is listed once")
			for _, o := range unchecked {
				assert.Equal(t, o.Lacked(), listed[o.ID], "rule %s", o.ID)
			}
		})
	}
}
