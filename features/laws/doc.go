// Package laws is the one home of the rules that span a deployment's answers: a total equals
// the sum of its accounts, a page honours its filters and its sort order, consecutive pages of
// one query have no duplicate and no gap and agree on total_records, desc is the reverse of
// asc, a user listed and read within the minute shows the same values, a created subscription
// is listed until deleted, another institution's id answers 404. Each law is a function over
// observed answers (gjson values, pages, ids); the contract suite's steps call them on the
// traffic they make, and the proxy (features/proxy) calls them on a partner's traffic through
// the Observer, so both check the same code.
//
// It reads JSON with gjson and the standard library and must never import anything of this
// module: it states the API as a partner sees it, whatever implements it.
package laws
