// Package nginx runs Debian's nginx with a configuration of ours in a directory of its own: the
// shards' proxy in their tests, and the reference forwarding proxy `partnersim proxy` is measured
// against (Forward) in its benchmark and `make bench-http`. It must never import anything of this
// module, nor anything outside the standard library: tests and the bench tools of any layer use it.
package nginx
