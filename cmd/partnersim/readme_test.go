package main

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's command table lists exactly the commands `partnersim help` knows, so a command
// added or removed cannot leave the README behind.
func TestReadmeCommandTableMatchesHelp(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `partnersim ([a-z]+)").FindAllStringSubmatch(string(readme), -1) {
		if !slices.Contains(documented, m[1]) {
			documented = append(documented, m[1])
		}
	}
	var known []string
	for name := range commands() {
		known = append(known, name)
	}
	slices.Sort(documented)
	slices.Sort(known)
	assert.Equal(t, known, documented, "the README's command table (## The binary) and `partnersim help` differ")
}
