// SPDX-License-Identifier: MIT
/* Packet pool: allocation, exhaustion, headroom/tailroom arithmetic, reset. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "net/net.h"

static void test_pool_init_rejects_bad_sizes(void **state)
{
	struct vnic_pkt_pool pool;

	(void)state;
	assert_int_equal(vnic_pkt_pool_init(&pool, 0, 2048, 128), -EINVAL);
	assert_int_equal(vnic_pkt_pool_init(&pool, 4, 0, 0), -EINVAL);
	assert_int_equal(vnic_pkt_pool_init(&pool, 4, 128, 128), -EINVAL);
	assert_int_equal(vnic_pkt_pool_init(&pool, 4, (1u << 24) + 1, 0), -EINVAL);
}

static void test_pool_exhausts_and_refills(void **state)
{
	struct vnic_pkt_pool pool;
	struct vnic_pkt *pkts[9];
	unsigned int i;

	(void)state;
	assert_int_equal(vnic_pkt_pool_init(&pool, 8, 2048, 128), 0);
	for (i = 0; i < 8; i++) {
		pkts[i] = vnic_pkt_alloc(&pool);
		assert_non_null(pkts[i]);
		assert_int_equal(vnic_pkt_headroom(pkts[i]), 128);
		assert_int_equal(vnic_pkt_tailroom(pkts[i]), 2048 - 128);
		/* Buffers never overlap: each is its own 64-byte aligned slice. */
		assert_int_equal((uintptr_t)pkts[i]->head % 64, 0);
		if (i)
			assert_true(pkts[i]->head >= pkts[i - 1]->head + 2048 ||
				    pkts[i]->head + 2048 <= pkts[i - 1]->head);
	}
	assert_null(vnic_pkt_alloc(&pool));
	assert_int_equal(pool.alloc_fail, 1);
	for (i = 0; i < 8; i++)
		vnic_pkt_free(pkts[i]);
	assert_int_equal(pool.nfree, 8);
	assert_int_equal(vnic_pkt_alloc_bulk(&pool, pkts, 9), 8);
	assert_int_equal(pool.alloc_fail, 2);
	for (i = 0; i < 7; i++)
		pkts[i]->next = pkts[i + 1];
	pkts[7]->next = NULL;
	vnic_pkt_free_list(pkts[0]);
	assert_int_equal(pool.nfree, 8);
	vnic_pkt_pool_fini(&pool);
}

static void test_put_push_pull_bounds(void **state)
{
	struct vnic_pkt_pool pool;
	struct vnic_pkt *pkt;
	uint8_t *p;

	(void)state;
	assert_int_equal(vnic_pkt_pool_init(&pool, 1, 256, 64), 0);
	pkt = vnic_pkt_alloc(&pool);
	p = vnic_pkt_put(pkt, 100);
	assert_ptr_equal(p, pkt->data);
	assert_int_equal(pkt->len, 100);
	assert_null(vnic_pkt_put(pkt, 256 - 64 - 100 + 1));
	assert_non_null(vnic_pkt_put(pkt, 256 - 64 - 100));
	assert_int_equal(vnic_pkt_tailroom(pkt), 0);
	assert_non_null(vnic_pkt_push(pkt, 64));
	assert_int_equal(vnic_pkt_headroom(pkt), 0);
	assert_null(vnic_pkt_push(pkt, 1));
	assert_non_null(vnic_pkt_pull(pkt, 14));
	assert_int_equal(pkt->len, 256 - 14);
	assert_null(vnic_pkt_pull(pkt, pkt->len + 1));
	vnic_pkt_free(pkt);
	vnic_pkt_pool_fini(&pool);
}

static void test_reset_clears_metadata(void **state)
{
	struct vnic_pkt_pool pool;
	struct vnic_pkt *pkt;
	uint8_t bytes[300];

	(void)state;
	memset(bytes, 0xab, sizeof(bytes));
	assert_int_equal(vnic_pkt_pool_init(&pool, 1, 512, 128), 0);
	pkt = vnic_pkt_alloc(&pool);
	assert_int_equal(vnic_pkt_copy_in(pkt, bytes, 300), 0);
	assert_int_equal(vnic_pkt_copy_in(pkt, bytes, 512 - 128 + 1), -EMSGSIZE);
	pkt->gso_type = VNIC_GSO_TCPV4;
	pkt->gso_size = 1448;
	pkt->ip_summed = VNIC_CSUM_PARTIAL;
	pkt->hash = 77;
	vnic_pkt_pull(pkt, 10);
	vnic_pkt_free(pkt);
	pkt = vnic_pkt_alloc(&pool);
	assert_int_equal(pkt->len, 0);
	assert_int_equal(pkt->gso_type, 0);
	assert_int_equal(pkt->gso_size, 0);
	assert_int_equal(pkt->ip_summed, VNIC_CSUM_NONE);
	assert_int_equal(pkt->hash, 0);
	assert_int_equal(vnic_pkt_headroom(pkt), 128);
	assert_ptr_equal(pkt->pool, &pool);
	vnic_pkt_free(pkt);
	vnic_pkt_pool_fini(&pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_init_rejects_bad_sizes),
		cmocka_unit_test(test_pool_exhausts_and_refills),
		cmocka_unit_test(test_put_push_pull_bounds),
		cmocka_unit_test(test_reset_clears_metadata),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
