// Package webhook delivers a run's webhook (reference §6.6): when a run
// whose kwargs name a webhook ends, the final run is POSTed to it, at least
// once, from any replica. It owns the runs table's webhook_* columns
// (state, attempts, next_at, last status and error, sent and delivered
// times) and nothing else.
//
// The statement that ends a run also marks its delivery pending and due
// (the clause PendingSet returns, part of the coordinator's and package
// runs' end statements), so a run that ended is never lost to a crash and a run
// deleted by a rollback sends nothing. Every replica runs the delivery
// loop:
//
//	pending ──claim (attempts+1, next_at = now + lease)──▶ POST
//	   ▲                                                    │
//	   └── non-2xx / network error, attempts < max: ────────┤
//	       next_at = now + backoff                          │
//	failed ◀── attempts = max, or an address refused ───────┤
//	delivered ◀── 2xx ──────────────────────────────────────┘
//
// A claim pushes webhook_next_at past the send's timeout (the lease), so two
// replicas never send the same attempt at once; a replica that dies
// mid-send leaves the delivery to be claimed again when the lease runs out.
// The attempt number fences the recording of an attempt. Addresses that are
// not globally reachable (addr.go: the IANA special-purpose blocks,
// multicast, IPv6 forms carrying such an IPv4 address) are refused unless
// AllowPrivate; a webhook that is a path goes to this server itself.
package webhook
