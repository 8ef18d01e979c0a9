// Command release builds the release archives of partnersim (`make dist`): the binary
// cross-compiled with CGO off for linux, darwin and windows on amd64 and arm64, each in an
// archive (tar.gz, zip for windows) with the README, and a checksums file (sha256sum's format)
// over them. It runs the Go toolchain and git; it never imports the module's own packages (it
// builds them as a user would) nor anything outside the standard library.
package main
