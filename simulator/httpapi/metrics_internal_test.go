package httpapi

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The institution label names the first MaxInstitutionLabels institutions and calls every
// later one "other": a sandbox whose partners create institutions freely keeps its series
// bounded.
func TestInstitutionLabelsAreBounded(t *testing.T) {
	s := newLabelSet(3)
	for i := range 3 {
		assert.Equal(t, fmt.Sprint("ins_", i), s.label(fmt.Sprint("ins_", i)))
	}
	assert.Equal(t, "other", s.label("ins_3"), "past the bound")
	assert.Equal(t, "ins_1", s.label("ins_1"), "a named one stays named")
	assert.Len(t, *s.names.Load(), 3)
}
