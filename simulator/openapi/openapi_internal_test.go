package openapi

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// A source naming one path twice is refused: the JSON rendering would keep only the last path
// item, silently hiding the first one's operations (the control plane's document did once).
func TestDuplicateKeysAreRefused(t *testing.T) {
	var n yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte("paths:\n  /a:\n    get: {}\n  /a:\n    post: {}\n"), &n), "the YAML parser itself accepts it")
	err := uniqueKeys(n.Content[0])
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"/a" twice`)
	require.NoError(t, yaml.Unmarshal([]byte("paths:\n  /a:\n    get: {}\n    post: {}\n"), &n))
	assert.NoError(t, uniqueKeys(n.Content[0]))
}
