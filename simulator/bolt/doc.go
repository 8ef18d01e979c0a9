// Package bolt is the sandbox's store on an embedded bbolt file: institutions, keys, members,
// users, orders, transactions, subscriptions, events and the delivery outbox, with the
// secondary indexes that keep every list query inside one institution.
//
// It is the only package of the simulator that imports go.etcd.io/bbolt. It imports the domain
// (simulator), the fixture format (fixtures: a set is written into the store here, set.go) and
// the word-at-a-time byte tests (simulator/wordwise), and must never import any other package of
// this module. Outside the standard library it imports bbolt, decimal and golang.org/x/sys/unix
// (the build's spool chunks are mapped, grown and unmapped through it: chunk_linux.go). Buckets
// and key encodings are declared in keys.go; every service call is one bbolt transaction; bytes
// are copied out of the transaction before it ends. What the store needs from its wiring is
// given at Open (Options).
package bolt
