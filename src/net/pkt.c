// SPDX-License-Identifier: MIT
/*
 * Packet pool: one allocation for every buffer and one for the metadata, then
 * a LIFO stack of free indices, so the most recently freed (cache-warm)
 * buffer is reused first. No allocation after init.
 */
#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ctr_int.h"
#include "net.h"

/* Hot fields must stay in the first cache line (CONTRIBUTING.md, "Code"). */
static_assert(offsetof(struct vnic_pkt, head) + sizeof(uint8_t *) <= 64,
	      "vnic_pkt hot fields exceed cache line 0");
static_assert(offsetof(struct vnic_pkt, pool) == 64, "cold fields start on cache line 1");
static_assert(sizeof(struct vnic_pkt) == 128, "vnic_pkt is two cache lines");

enum { PKT_BUF_ALIGN = 64 };

/*
 * Field by field, not memset: count, nfree and alloc_fail are read by
 * counters on other threads (ctr_int.h), also while an owner replaces a
 * pool. The assert catches a field added without being cleared here.
 */
static void pool_clear(struct vnic_pkt_pool *pool)
{
	pool->pkts = NULL;
	pool->mem = NULL;
	pool->free_stack = NULL;
	vnic_net_ctr_set32(&pool->count, 0);
	vnic_net_ctr_set32(&pool->nfree, 0);
	pool->buf_size = 0;
	pool->headroom = 0;
	vnic_net_ctr_set(&pool->alloc_fail, 0);
}
static_assert(sizeof(struct vnic_pkt_pool) == 48, "pool_clear clears every field");

size_t vnic_pkt_pool_stride(const struct vnic_pkt_pool *pool)
{
	return ((size_t)pool->buf_size + PKT_BUF_ALIGN - 1) & ~(size_t)(PKT_BUF_ALIGN - 1);
}

int vnic_pkt_pool_init(struct vnic_pkt_pool *pool, uint32_t count, uint32_t buf_size,
		       uint32_t headroom)
{
	size_t stride, bytes, meta_bytes;
	uint32_t i;

	pool_clear(pool);
	if (count == 0 || buf_size == 0 || headroom >= buf_size || buf_size > (1u << 24))
		return -EINVAL;
	stride = ((size_t)buf_size + PKT_BUF_ALIGN - 1) & ~(size_t)(PKT_BUF_ALIGN - 1);
	bytes = stride * count;
	if (bytes / count != stride)
		return -EINVAL;

	pool->mem = aligned_alloc(PKT_BUF_ALIGN, bytes);
	if (!pool->mem)
		goto err_mem;
	/* aligned_alloc wants a size that is a multiple of the alignment. */
	meta_bytes = (sizeof(*pool->pkts) * count + PKT_BUF_ALIGN - 1) & ~(size_t)(PKT_BUF_ALIGN - 1);
	pool->pkts = aligned_alloc(PKT_BUF_ALIGN, meta_bytes);
	if (!pool->pkts)
		goto err_pkts;
	pool->free_stack = calloc(count, sizeof(*pool->free_stack));
	if (!pool->free_stack)
		goto err_stack;

	vnic_net_ctr_set32(&pool->count, count);
	pool->buf_size = buf_size;
	pool->headroom = headroom;
	for (i = 0; i < count; i++) {
		struct vnic_pkt *pkt = &pool->pkts[i];

		memset(pkt, 0, sizeof(*pkt));
		pkt->head = pool->mem + stride * i;
		pkt->pool = pool;
		pkt->buf_size = buf_size;
		pkt->index = i;
		/* Lowest index on top, so a fresh pool hands out buffers in order. */
		pool->free_stack[i] = count - 1 - i;
	}
	vnic_net_ctr_set32(&pool->nfree, count);
	return 0;

err_stack:
	free(pool->pkts);
err_pkts:
	free(pool->mem);
err_mem:
	pool_clear(pool);
	return -ENOMEM;
}

void vnic_pkt_pool_fini(struct vnic_pkt_pool *pool)
{
	free(pool->free_stack);
	free(pool->pkts);
	free(pool->mem);
	pool_clear(pool);
}

void vnic_pkt_reset(struct vnic_pkt *pkt)
{
	uint8_t *head = pkt->head;
	struct vnic_pkt_pool *pool = pkt->pool;
	uint32_t buf_size = pkt->buf_size, index = pkt->index;

	memset(pkt, 0, offsetof(struct vnic_pkt, pool));
	pkt->head = head;
	pkt->data = head + pool->headroom;
	pkt->buf_size = buf_size;
	pkt->index = index;
	pkt->tstamp_ns = 0;
	pkt->frags = NULL;
	pkt->frags_tail = NULL;
	pkt->frag_len = 0;
}

struct vnic_pkt *vnic_pkt_alloc(struct vnic_pkt_pool *pool)
{
	struct vnic_pkt *pkt;
	uint32_t nfree = pool->nfree;

	if (nfree == 0) {
		vnic_net_ctr_inc(&pool->alloc_fail);
		return NULL;
	}
	/* nfree and alloc_fail are read by counters on other threads: ctr_int.h */
	vnic_net_ctr_set32(&pool->nfree, --nfree);
	pkt = &pool->pkts[pool->free_stack[nfree]];
	vnic_pkt_reset(pkt);
	return pkt;
}

unsigned int vnic_pkt_alloc_bulk(struct vnic_pkt_pool *pool, struct vnic_pkt **pkts, unsigned int n)
{
	uint32_t nfree = pool->nfree;
	unsigned int i;

	if (n > nfree) {
		vnic_net_ctr_inc(&pool->alloc_fail);
		n = nfree;
	}
	for (i = 0; i < n; i++) {
		pkts[i] = &pool->pkts[pool->free_stack[--nfree]];
		vnic_pkt_reset(pkts[i]);
	}
	vnic_net_ctr_set32(&pool->nfree, nfree);
	return n;
}

void vnic_pkt_free(struct vnic_pkt *pkt)
{
	struct vnic_pkt_pool *pool;
	uint32_t nfree;

	if (!pkt)
		return;
	if (pkt->frags) {
		struct vnic_pkt *f = pkt->frags;

		pkt->frags = NULL;
		pkt->frags_tail = NULL;
		pkt->frag_len = 0;
		vnic_pkt_free_list(f);
	}
	pool = pkt->pool;
	nfree = pool->nfree;
	/* A double free would corrupt the stack silently; catch it in debug builds. */
	assert(nfree < pool->count);
	pool->free_stack[nfree] = pkt->index;
	vnic_net_ctr_set32(&pool->nfree, nfree + 1);
}

void vnic_pkt_free_list(struct vnic_pkt *head)
{
	while (head) {
		struct vnic_pkt *next = head->next;

		vnic_pkt_free(head);
		head = next;
	}
}

int vnic_pkt_copy_in(struct vnic_pkt *pkt, const void *src, uint32_t len)
{
	if (len > pkt->buf_size - vnic_pkt_headroom(pkt))
		return -EMSGSIZE;
	memcpy(pkt->data, src, len);
	pkt->len = len;
	return 0;
}
