// SPDX-License-Identifier: MIT
/* Results to rates: the caller measured the time, we only divide. */
#include <string.h>

#include "work.h"

void vnic_work_summarize(const struct vnic_work_results *r, uint64_t elapsed_ns,
			 struct vnic_work_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->integrity_errors = r->err.payload + r->err.bad_csum;
	if (r->latency && r->latency->count) {
		s->lat_min_ns = r->latency->min;
		s->lat_p50_ns = vnic_hist_percentile(r->latency, 50.0);
		s->lat_p99_ns = vnic_hist_percentile(r->latency, 99.0);
		s->lat_p999_ns = vnic_hist_percentile(r->latency, 99.9);
		s->lat_max_ns = r->latency->max;
		s->lat_mean_ns = vnic_hist_mean(r->latency);
	}
	if (!elapsed_ns)
		return;
	s->seconds = (double)elapsed_ns / 1e9;
	s->tps = (double)r->transactions / s->seconds;
	s->gbps = (double)r->bytes * 8.0 / (double)elapsed_ns;
	s->tx_pps = (double)r->tx_pkts / s->seconds;
}
