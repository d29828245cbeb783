// SPDX-License-Identifier: MIT
/*
 * The round-trip estimator and retransmission timeout of RFC 6298, in
 * nanoseconds, and the tail loss probe timeout of RFC 8985 section 7.2.
 *
 * Samples come only from segments sent once (Karn's algorithm: the caller
 * times one segment at a time and drops the measurement when that segment
 * is resent), so a backed-off RTO stays backed off until a segment sent
 * after the expiry is acknowledged.
 *
 * The clock is the nanosecond monotonic clock, so RFC 6298's G (clock
 * granularity) is taken as 0: what a timer really waits beyond its deadline
 * (the cpu loop's sleep, scheduling) is covered by the floor instead, which
 * RFC 6298 (2.4) lets an implementation set below 1 s. The floor is chosen
 * for an in-process link (work.h, rto_min_ns, 20 ms): round trips are tens
 * to hundreds of microseconds, but on a 2-vCPU machine running other work
 * a thread waits up to 10-15 ms for its core (rr's p99.9 on a clean cable),
 * which SRTT + 4 RTTVAR does not foresee, and an RTO that fires in such a
 * wait resends everything unSACKed in flight. With a 5 ms floor, rr on a
 * clean cable at load 4 saw up to a thousand such needless timeouts a
 * second; at 20 ms almost none. The RTO is the last resort anyway: SACK
 * repairs holes, the probe tails and lost resends, so the floor hardly
 * costs a lossy run.
 */
#include "work_int.h"

void vnic_tcpl_rtt_init(struct tcpl_rtt *r)
{
	r->srtt = 0;
	r->rttvar = 0;
	r->backoff = 0;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

void vnic_tcpl_rtt_sample(struct tcpl_rtt *r, uint64_t m)
{
	if (!m)
		m = 1;
	if (!r->srtt) {
		/* (2.2): the first measurement. */
		r->srtt = m;
		r->rttvar = m / 2;
	} else {
		/* (2.3): beta = 1/4, alpha = 1/8, RTTVAR first (it uses the
		 * old SRTT). */
		r->rttvar = (3 * r->rttvar + absdiff(r->srtt, m)) / 4;
		r->srtt = (7 * r->srtt + m) / 8;
		if (!r->srtt)
			r->srtt = 1;
	}
	r->backoff = 0;
}

void vnic_tcpl_rtt_backoff(struct tcpl_rtt *r)
{
	/* Past 2^6 the ceiling holds it anyway; keep the shift defined. */
	if (r->backoff < 32)
		r->backoff++;
}

uint64_t vnic_tcpl_rtt_rto(const struct tcpl_rtt *r, const struct tcpl_rto_limits *lim)
{
	uint64_t rto = r->srtt ? r->srtt + 4 * r->rttvar : lim->init;
	unsigned int i;

	if (rto < lim->min)
		rto = lim->min;
	/* (5.5) doubles the RTO in force: the floored one. */
	for (i = 0; i < r->backoff && rto < lim->max; i++)
		rto *= 2;
	return rto < lim->max ? rto : lim->max;
}

uint64_t vnic_tcpl_rtt_pto(const struct tcpl_rtt *r, const struct tcpl_rto_limits *lim)
{
	if (!r->srtt)
		return 0;
	/*
	 * 2 SRTT, plus a slack for what delays an answer beyond the RTT: here
	 * not a delayed ACK (the receiver answers in the poller run that took
	 * the segment) but a thread of a loaded machine waiting for its core,
	 * which RFC 8985 7.2 leaves to the implementation, as Linux adds two
	 * jiffies to its probe timeout. 2 SRTT alone fired a needless probe for
	 * a quarter of rr's transactions when other work kept the load at 4.
	 */
	return 2 * r->srtt + lim->pto_slack;
}
