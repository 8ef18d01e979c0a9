package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The README's command table lists exactly the commands `partnersim --help` lists, so a command
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
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"partnersim", "--help"}, noEnv, &out, &out))
	help := out.String()
	_, list, ok := strings.Cut(help, "Available Commands:\n")
	require.True(t, ok, "partnersim --help lists its commands:\n%s", help)
	list, _, _ = strings.Cut(list, "\n\n")
	var known []string
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			known = append(known, f[0])
		}
	}
	require.Contains(t, known, "serve", "the command list was read")
	slices.Sort(documented)
	slices.Sort(known)
	assert.Equal(t, known, documented, "the README's command table (## The binary) and `partnersim --help` differ")
}
