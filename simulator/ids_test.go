package simulator

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestShardIDsBeginWithTheTagAndKeepTheirShape(t *testing.T) {
	for _, tag := range []string{"", "b", "eu01"} {
		g := NewShardIDs(nil, tag)
		id, key := g.New("ins"), g.NewKey("sbx")
		assert.True(t, strings.HasPrefix(id, "ins_"+tag), "got %s, want ins_%s…", id, tag)
		assert.Len(t, id, len("ins_")+24, id)
		assert.True(t, strings.HasPrefix(key, "sbx_"+tag), "got %s, want sbx_%s…", key, tag)
		assert.True(t, ValidKeyShape(key), "a shard's key keeps the published shape: %s", key)
	}
}
