package certify_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/receiver/certify"
)

// TestREADMEListsEveryCase keeps receiver/README.md's table of cases equal to the battery.
func TestREADMEListsEveryCase(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(raw), "<!-- certify cases")
	require.True(t, ok, "README has no certify cases marker")
	table, _, ok := strings.Cut(after, "<!-- end certify cases -->")
	require.True(t, ok, "README has no end marker")
	var rows []string
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "| `") {
			rows = append(rows, line)
		}
	}
	var want []string
	for _, c := range certify.Cases() {
		want = append(want, fmt.Sprintf("| `%s` | %s | %s | %s |", c.Name, c.Proves, c.Sends, c.Expect))
	}
	assert.Equal(t, want, rows)
}
