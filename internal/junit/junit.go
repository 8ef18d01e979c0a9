package junit

import (
	"encoding/xml"
	"io"
	"strconv"
	"time"
)

// Suites is the document: a <testsuites> whose counts are the sums of its suites'.
type Suites struct {
	XMLName xml.Name `xml:"testsuites"`
	Name    string   `xml:"name,attr"`
	Counts
	Time   string  `xml:"time,attr"`
	Suites []Suite `xml:"testsuite"`
}

// Add appends s to the document's suites and adds its counts to the document's.
func (d *Suites) Add(s Suite) {
	d.Counts.add(s.Counts)
	d.Suites = append(d.Suites, s)
}

// Suite is a <testsuite>: its counts are those of its testcases.
type Suite struct {
	Name string `xml:"name,attr"`
	Counts
	Time       string      `xml:"time,attr"`
	Timestamp  string      `xml:"timestamp,attr,omitempty"`
	File       string      `xml:"file,attr,omitempty"`
	Properties *Properties `xml:"properties,omitempty"`
	Cases      []Case      `xml:"testcase"`
}

// Add appends c to the suite's cases and counts it: a test, and a failure or a skip where it
// holds one.
func (s *Suite) Add(c Case) {
	s.Tests++
	if c.Failure != nil {
		s.Failures++
	}
	if c.Skipped != nil {
		s.Skipped++
	}
	s.Cases = append(s.Cases, c)
}

// Counts are the testcases below a <testsuites> or a <testsuite>, as its attributes: how many,
// and how many of those failed, erred or were skipped.
type Counts struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Skipped  int `xml:"skipped,attr"`
}

func (c *Counts) add(o Counts) {
	c.Tests += o.Tests
	c.Failures += o.Failures
	c.Errors += o.Errors
	c.Skipped += o.Skipped
}

// Properties are the names and values a suite carries (<properties><property …/>…).
type Properties struct {
	Props []Property `xml:"property"`
}

// Property is one of a suite's properties.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// Case is a <testcase>: passed, or with a <skipped> or a <failure>.
type Case struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	File      string   `xml:"file,attr,omitempty"`
	Line      int      `xml:"line,attr,omitempty"`
	Time      string   `xml:"time,attr"`
	Skipped   *Message `xml:"skipped,omitempty"`
	Failure   *Message `xml:"failure,omitempty"`
	SystemOut string   `xml:"system-out,omitempty"`
}

// Message is a <skipped> or <failure>: why, as an attribute, and the details as its text.
type Message struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// Seconds is a duration as JUnit's time attributes write it: seconds, three decimals.
func Seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

// Write writes the document: the XML declaration, the document indented, a final newline.
// Text and attributes may hold anything: the encoder escapes them, and writes a character XML
// cannot carry (a control character, invalid UTF-8) as U+FFFD.
func Write(w io.Writer, doc Suites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
