// Package junit is the JUnit XML both reports write — the contract suite's (features) and
// certify's (receiver/certify): the schema Jenkins, GitLab, GitHub test reporters and Surefire
// read, and how a document is written. It must never import anything of this module: the
// suites import it, and it knows nothing of what they test.
package junit
