// Package pipelines holds the CI recipes — the GitHub composite action at the repository's root
// (action.yml), the GitLab CI template (gitlab/) with an example pipeline each, the container
// image's Containerfile (deploy/Containerfile) — and the tests that run them and the README's "Use it in
// CI" commands against a real sandbox. It has no code of its own: nothing may import it, and it
// must never import the module's packages (its tests drive the partnersim binary as a pipeline
// does).
package pipelines
