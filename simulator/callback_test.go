package simulator_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/partnersim/partnersim/simulator"
)

func TestCallbackTarget(t *testing.T) {
	for raw, want := range map[string]string{
		"https://hooks.example/x":                    "https://hooks.example/x",
		"https://a\x03b@127.0.0.1:8080/x":            "https://a%03b@127.0.0.1:8080/x",
		" \x01https://hooks.example/x\x1f ":          "https://hooks.example/x",
		"https://hooks.ex\tample/\nx\r":              "https://hooks.example/x",
		"https://hooks.example/a\x7fb?q=\x00x#\x05y": "https://hooks.example/a%7Fb?q=%00x#%05y",
	} {
		assert.Equal(t, want, simulator.CallbackTarget(raw), "%q", raw)
	}
}
