/* SPDX-License-Identifier: MIT */
/*
 * src/proto: the driver/device contract. Headers only.
 *
 * A machine-readable datasheet of our protocol, which keeps the shape of PAPR
 * vNIC as Linux's ibmvnic uses it (docs/PROTOCOL.md, cited below by section):
 * 16-byte CRQ messages for control, 32-byte sub-CRQ entries for the datapath,
 * a "valid" bit in byte 0 that passes ownership of a slot, and big-endian
 * multi-byte fields. Where we differ from the original (offsets that would
 * collide with rc @12, 32-bit handles, a 64-byte offload buffer) the comment
 * says so.
 *
 * Every multi-byte field is a struct vnic_beN: bytes in wire order, alignment
 * 1, read and written only through vnic_beN_get/put. Assigning an integer to
 * one does not compile, so a missed byte swap cannot slip through, and any
 * byte offset of a buffer may be cast to one.
 *
 * Nothing here is trusted by the side that reads it: every count, length,
 * offset, handle, ioba and map id is checked by the receiver.
 */
#ifndef VNIC_PROTO_H
#define VNIC_PROTO_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------------------------
 * Big-endian fields
 * ------------------------------------------------------------------------- */

struct vnic_be16 {
	uint8_t b[2];
};
struct vnic_be24 {
	uint8_t b[3];
};
struct vnic_be32 {
	uint8_t b[4];
};
struct vnic_be64 {
	uint8_t b[8];
};

static_assert(sizeof(struct vnic_be16) == 2 && _Alignof(struct vnic_be16) == 1, "be16");
static_assert(sizeof(struct vnic_be24) == 3 && _Alignof(struct vnic_be24) == 1, "be24");
static_assert(sizeof(struct vnic_be32) == 4 && _Alignof(struct vnic_be32) == 1, "be32");
static_assert(sizeof(struct vnic_be64) == 8 && _Alignof(struct vnic_be64) == 1, "be64");

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define VNIC_HOST_BE 1
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define VNIC_HOST_BE 0
#else
#error "unknown byte order"
#endif

/* memcpy keeps unaligned access legal; compilers turn it and the swap into one movbe/rev load. */
static inline uint16_t vnic_be16_get(const struct vnic_be16 *p)
{
	uint16_t v;

	memcpy(&v, p->b, sizeof(v));
	return VNIC_HOST_BE ? v : __builtin_bswap16(v);
}

static inline void vnic_be16_put(struct vnic_be16 *p, uint16_t v)
{
	v = VNIC_HOST_BE ? v : __builtin_bswap16(v);
	memcpy(p->b, &v, sizeof(v));
}

static inline uint32_t vnic_be32_get(const struct vnic_be32 *p)
{
	uint32_t v;

	memcpy(&v, p->b, sizeof(v));
	return VNIC_HOST_BE ? v : __builtin_bswap32(v);
}

static inline void vnic_be32_put(struct vnic_be32 *p, uint32_t v)
{
	v = VNIC_HOST_BE ? v : __builtin_bswap32(v);
	memcpy(p->b, &v, sizeof(v));
}

static inline uint64_t vnic_be64_get(const struct vnic_be64 *p)
{
	uint64_t v;

	memcpy(&v, p->b, sizeof(v));
	return VNIC_HOST_BE ? v : __builtin_bswap64(v);
}

static inline void vnic_be64_put(struct vnic_be64 *p, uint64_t v)
{
	v = VNIC_HOST_BE ? v : __builtin_bswap64(v);
	memcpy(p->b, &v, sizeof(v));
}

/*
 * The rx-add length is 24 bits, big-endian, at @21..23 (section 8.6). ibmvnic
 * shifts a 32-bit store by 8 on little-endian hosts; byte stores say the same
 * thing without depending on the neighbour byte (map_id @20).
 */
static inline uint32_t vnic_be24_get(const struct vnic_be24 *p)
{
	return (uint32_t)p->b[0] << 16 | (uint32_t)p->b[1] << 8 | p->b[2];
}

/* v above VNIC_RX_ADD_MAX_LEN is truncated to its low 24 bits: callers check first. */
static inline void vnic_be24_put(struct vnic_be24 *p, uint32_t v)
{
	p->b[0] = (uint8_t)(v >> 16);
	p->b[1] = (uint8_t)(v >> 8);
	p->b[2] = (uint8_t)v;
}

/* ---------------------------------------------------------------------------
 * Limits (section 5: indirect batch; section 7: LTBs, queues; section 8.2: headers)
 * ------------------------------------------------------------------------- */

enum vnic_proto_limits {
	VNIC_CRQ_MSG_SIZE = 16,
	VNIC_SUBCRQ_ENTRY_SIZE = 32,

	VNIC_PROTO_VERSION = 1,		/* VERSION_EXCHANGE (IBMVNIC_INITIAL_VERSION) */
	VNIC_LOGIN_VERSION = 1,
	VNIC_IP_OFFLOAD_VERSION = 1,

	VNIC_MAX_QUEUES = 16,		/* per direction (IBMVNIC_MAX_QUEUES) */
	VNIC_MAX_SUBCRQ_ENTRIES = 4096,	/* largest REQ_*_ENTRIES (IBMVNIC_MAX_QUEUE_SZ) */

	/*
	 * Entries per H_SEND_SUB_CRQ_INDIRECT: POWER9 allows 128, POWER8 16
	 * (section 5). The hv enforces its own limit in this range; 16 is the
	 * safe value a driver falls back to after a PARAMETER.
	 */
	VNIC_MAX_IND_DESCS = 128,
	VNIC_SAFE_IND_DESCS = 16,

	/*
	 * Headers carried to the device (section 8.2): 24 bytes in the header
	 * descriptor, 29 in each extension. 8 extensions give 24 + 8 * 29 = 256
	 * bytes, which is VNIC_MAX_HDRS of src/net: any header stack net parses
	 * fits.
	 */
	VNIC_HDR_DESC_BYTES = 24,
	VNIC_HDR_EXT_BYTES = 29,
	VNIC_MAX_HDR_EXT_DESCS = 8,
	VNIC_MAX_HDR_BYTES = VNIC_HDR_DESC_BYTES + VNIC_MAX_HDR_EXT_DESCS * VNIC_HDR_EXT_BYTES,
	/* tx descriptor + header descriptor + extensions: n_crq_elem of one packet */
	VNIC_MAX_TX_ELEMS = 2 + VNIC_MAX_HDR_EXT_DESCS,

	VNIC_TX_COMP_MAX = 5,		/* correlators per tx completion (section 8.4) */

	/* Long-term buffers (section 7): map id 0 is reserved, ids are 1..255. */
	VNIC_MAX_MAP_ID = 255,
	VNIC_ONE_LTB_SIZE = 8 << 20,	/* largest single REQUEST_MAP */
	VNIC_TSO_BUFS = 64,		/* per tx queue */
	VNIC_TSO_BUF_SIZE = 64 << 10,	/* one superpacket, headers included */

	VNIC_RX_ADD_MAX_LEN = (1 << 24) - 1,	/* 24-bit length field */
};

/*
 * Correlator bit of buffers from a tx queue's TSO pool (IBMVNIC_TSO_POOL_MASK,
 * section 8.1). Outside the enum: it does not fit an int.
 */
#define VNIC_TX_CORR_TSO 0x80000000u

/*
 * The hv hands out iobas below 2^32 (4 KiB aligned). The 32-bit ioba fields
 * (REQUEST_MAP, rx buffer add) therefore never truncate one; 64-bit fields
 * exist where the original has them (tx descriptor) or where a CRQ message has
 * room (LOGIN, QUERY/CONTROL_IP_OFFLOAD). A receiver rejects any ioba at or
 * above the limit.
 */
#define VNIC_IOBA_LIMIT (1ull << 32)

/* ---------------------------------------------------------------------------
 * Return codes
 * ------------------------------------------------------------------------- */

/* hcalls (section 5): what vnic_hv_send_* return. */
enum vnic_hcall_rc {
	VNIC_H_SUCCESS = 0,
	VNIC_H_BUSY = 1,	/* ring full: retry later */
	VNIC_H_CLOSED = 2,	/* partner gone: stop queues, await a transport event */
	VNIC_H_PARAMETER = -4,	/* malformed: bad handle, side, count, ioba or entry */
	VNIC_H_DROPPED = -12,
};

/*
 * CRQ response codes (section 6: byte 12 of every response). The tx and rx
 * completion rc fields (BE16) carry the same codes.
 */
enum vnic_rc {
	VNIC_RC_SUCCESS = 0,
	VNIC_RC_PARTIALSUCCESS = 1,	/* capability: adopt the returned number */
	VNIC_RC_PERMISSION = 2,
	VNIC_RC_NOMEMORY = 3,
	VNIC_RC_PARAMETER = 4,
	VNIC_RC_UNKNOWNCOMMAND = 5,
	VNIC_RC_ABORTED = 6,		/* also: completion flushed by a reset */
	VNIC_RC_INVALIDSTATE = 7,
	VNIC_RC_INVALIDIOBA = 8,
	VNIC_RC_INVALIDLENGTH = 9,
	VNIC_RC_UNSUPPORTEDOPTION = 10,
};

/* ---------------------------------------------------------------------------
 * CRQ: 16-byte messages (section 6)
 * ------------------------------------------------------------------------- */

/* Byte 0: the message class; non-zero means valid, the consumer clears it. */
enum vnic_crq_class {
	VNIC_CRQ_CMD_RSP = 0x80,	/* command or response */
	VNIC_CRQ_INIT_CMD = 0xC0,	/* byte 1: enum vnic_crq_init_type */
	VNIC_CRQ_XPORT_EVENT = 0xFF,	/* byte 1: enum vnic_crq_xport_reason */
};

enum vnic_crq_init_type {
	VNIC_CRQ_INIT = 0x01,
	VNIC_CRQ_INIT_COMPLETE = 0x02,
};

/*
 * Transport events. Ours are sent by whichever side goes away or wants a
 * reset (in PAPR the hypervisor sends them); any other reason means a fatal
 * reset to the receiver, as in ibmvnic.
 */
enum vnic_crq_xport_reason {
	VNIC_XPORT_PARTNER_CLOSED = 0x01,
	VNIC_XPORT_RESET = 0x02,	/* reset requested */
	VNIC_XPORT_MIGRATED = 0x06,	/* as IBMVNIC_PARTITION_MIGRATED: not sent by our device */
	VNIC_XPORT_FAILOVER = 0x08,	/* the INIT that follows starts a failover reset */
};

/* Byte 1 of class 0x80. Response = command | VNIC_CMD_RSP. */
enum vnic_crq_cmd {
	VNIC_CMD_VERSION_EXCHANGE = 0x01,
	VNIC_CMD_QUERY_CAPABILITY = 0x02,
	VNIC_CMD_REQUEST_CAPABILITY = 0x03,
	VNIC_CMD_LOGIN = 0x04,
	VNIC_CMD_ERROR_INDICATION = 0x08,	/* server -> client, no response */
	VNIC_CMD_LOGICAL_LINK_STATE = 0x0C,
	VNIC_CMD_LINK_STATE_INDICATION = 0x12,	/* server -> client, no response */
	VNIC_CMD_CHANGE_MAC_ADDR = 0x13,
	VNIC_CMD_QUERY_IP_OFFLOAD = 0x18,
	VNIC_CMD_CONTROL_IP_OFFLOAD = 0x19,
	VNIC_CMD_REQUEST_MAP = 0x1E,
	VNIC_CMD_REQUEST_UNMAP = 0x1F,

	VNIC_CMD_RSP = 0x80,
	VNIC_CMD_VERSION_EXCHANGE_RSP = 0x81,
	VNIC_CMD_QUERY_CAPABILITY_RSP = 0x82,
	VNIC_CMD_REQUEST_CAPABILITY_RSP = 0x83,
	VNIC_CMD_LOGIN_RSP = 0x84,
	VNIC_CMD_LOGICAL_LINK_STATE_RSP = 0x8C,
	VNIC_CMD_CHANGE_MAC_ADDR_RSP = 0x93,
	VNIC_CMD_QUERY_IP_OFFLOAD_RSP = 0x98,
	VNIC_CMD_CONTROL_IP_OFFLOAD_RSP = 0x99,
	VNIC_CMD_REQUEST_MAP_RSP = 0x9E,
	VNIC_CMD_REQUEST_UNMAP_RSP = 0x9F,
};

/* LOGICAL_LINK_STATE state @2; LINK_STATE_INDICATION phys @4, logical @5. */
enum vnic_link_state {
	VNIC_LINK_DOWN = 0,
	VNIC_LINK_UP = 1,
	VNIC_LINK_QUERY = 0xFF,		/* LOGICAL_LINK_STATE only: the response echoes the state */
};

/* VERSION_EXCHANGE(_RSP): version @2; the response carries the partner's. */
struct vnic_crq_version {
	uint8_t first;
	uint8_t cmd;
	struct vnic_be16 version;
	uint8_t reserved[8];
	uint8_t rc;
	uint8_t rc_detail[3];
};

/*
 * QUERY_CAPABILITY, REQUEST_CAPABILITY and their responses: capability @2,
 * number @4. A REQUEST answered PARTIALSUCCESS carries the number the server
 * grants; the client adopts it and asks again.
 */
struct vnic_crq_capability {
	uint8_t first;
	uint8_t cmd;
	struct vnic_be16 capability;	/* enum vnic_cap */
	struct vnic_be64 number;
	uint8_t rc;
	uint8_t rc_detail[3];
};

/*
 * LOGIN: the login buffer at ioba, len bytes. Ours differs from ibmvnic
 * (ioba @8, len @12, no rc) so that every response keeps rc @12 and the ioba
 * can be 64 bits. LOGIN_RSP: rc @12; the response buffer is the one named
 * inside the login buffer (login_rsp_ioba).
 */
struct vnic_crq_login {
	uint8_t first;
	uint8_t cmd;
	struct vnic_be16 len;
	struct vnic_be64 ioba;
	uint8_t rc;
	uint8_t rc_detail[3];
};

/*
 * LOGICAL_LINK_STATE(_RSP): state @2, echoed by the response. Ours: the
 * response to a QUERY (0xFF) carries the logical state in force @3, so that
 * a late or duplicated answer to a query never reads as one to an up or a
 * down (docs/PROTOCOL.md section 6).
 */
struct vnic_crq_logical_link_state {
	uint8_t first;
	uint8_t cmd;
	uint8_t state;			/* enum vnic_link_state */
	uint8_t query_state;		/* response to a QUERY: VNIC_LINK_UP or _DOWN */
	uint8_t reserved[8];
	uint8_t rc;
	uint8_t rc_detail[3];
};

/* LINK_STATE_INDICATION: carrier on only if both phys and logical are up. */
struct vnic_crq_link_state_indication {
	uint8_t first;
	uint8_t cmd;
	uint8_t reserved1[2];
	uint8_t phys_link_state;
	uint8_t logical_link_state;
	uint8_t reserved2[10];
};

/*
 * QUERY_IP_OFFLOAD (server DMA-writes a struct vnic_ip_offload at ioba) and
 * CONTROL_IP_OFFLOAD (server DMA-reads the client's choice). One layout for
 * both, unlike ibmvnic whose two commands swap len and ioba.
 */
struct vnic_crq_ip_offload {
	uint8_t first;
	uint8_t cmd;
	struct vnic_be16 len;
	struct vnic_be64 ioba;
	uint8_t rc;
	uint8_t rc_detail[3];
};

/*
 * REQUEST_MAP: register a long-term buffer [ioba, ioba + len) under map_id.
 * 64-bit ioba does not fit beside a 32-bit len with rc @12, hence ioba BE32
 * (VNIC_IOBA_LIMIT). map_id @2 instead of ibmvnic's @3.
 * REQUEST_MAP_RSP, REQUEST_UNMAP(_RSP): map_id @2, rc @12.
 */
struct vnic_crq_request_map {
	uint8_t first;
	uint8_t cmd;
	uint8_t map_id;
	uint8_t reserved;
	struct vnic_be32 len;
	struct vnic_be32 ioba;
	uint8_t rc;
	uint8_t rc_detail[3];
};

/* ERROR_INDICATION (server -> client): leads to a reset, fatal if flagged. */
enum {
	VNIC_ERR_FATAL = 0x80,
};
enum vnic_err_cause {
	VNIC_ERR_CAUSE_ADAPTER = 0,
	VNIC_ERR_CAUSE_BUS = 1,
	VNIC_ERR_CAUSE_FW = 2,
	VNIC_ERR_CAUSE_DD = 3,
	VNIC_ERR_CAUSE_EEH = 4,
	VNIC_ERR_CAUSE_FW_UPDATED = 5,
	VNIC_ERR_CAUSE_LOW_MEMORY = 6,
};
/* ibmvnic puts cause @12; ours keeps @12..15 as rc for every class-0x80 message. */
struct vnic_crq_error_indication {
	uint8_t first;
	uint8_t cmd;
	uint8_t flags;
	uint8_t reserved1;
	struct vnic_be32 error_id;
	struct vnic_be16 cause;		/* enum vnic_err_cause */
	uint8_t reserved2[6];
};

/* CHANGE_MAC_ADDR(_RSP): mac @2..7; the response carries the granted address. */
struct vnic_crq_change_mac {
	uint8_t first;
	uint8_t cmd;
	uint8_t mac[6];
	uint8_t reserved[4];
	uint8_t rc;
	uint8_t rc_detail[3];
};

/* 0xC0 INIT / INIT_COMPLETE and 0xFF transport events: byte 1 only. */
struct vnic_crq_init {
	uint8_t first;
	uint8_t type;			/* enum vnic_crq_init_type */
	uint8_t reserved[14];
};

struct vnic_crq_xport {
	uint8_t first;
	uint8_t reason;			/* enum vnic_crq_xport_reason */
	uint8_t reserved[14];
};

/*
 * One CRQ message. The generic view (first, cmd, params, rc) is anonymous so
 * that msg.first, msg.cmd and msg.rc read any message; the per-command views
 * are named after the command.
 */
struct vnic_crq {
	union {
		struct {
			uint8_t first;		/* enum vnic_crq_class; 0 = slot empty */
			uint8_t cmd;		/* enum vnic_crq_cmd */
			uint8_t params[10];
			uint8_t rc;		/* enum vnic_rc, responses only */
			uint8_t rc_detail[3];
		};
		struct vnic_crq_init init;
		struct vnic_crq_xport xport;
		struct vnic_crq_version version;
		struct vnic_crq_capability cap;
		struct vnic_crq_login login;
		struct vnic_crq_logical_link_state link_state;
		struct vnic_crq_link_state_indication link_ind;
		struct vnic_crq_ip_offload ip_offload;
		struct vnic_crq_request_map map;
		struct vnic_crq_error_indication error;
		struct vnic_crq_change_mac mac;
		uint8_t raw[VNIC_CRQ_MSG_SIZE];
	};
};

static_assert(sizeof(struct vnic_crq) == VNIC_CRQ_MSG_SIZE, "CRQ message is 16 bytes");
static_assert(_Alignof(struct vnic_crq) == 1, "CRQ message has no alignment needs");
static_assert(sizeof(struct vnic_crq_version) == 16, "version");
static_assert(sizeof(struct vnic_crq_capability) == 16, "capability");
static_assert(sizeof(struct vnic_crq_login) == 16, "login");
static_assert(sizeof(struct vnic_crq_logical_link_state) == 16, "logical link state");
static_assert(sizeof(struct vnic_crq_link_state_indication) == 16, "link state indication");
static_assert(sizeof(struct vnic_crq_ip_offload) == 16, "ip offload");
static_assert(sizeof(struct vnic_crq_request_map) == 16, "request map");
static_assert(sizeof(struct vnic_crq_error_indication) == 16, "error indication");
static_assert(sizeof(struct vnic_crq_change_mac) == 16, "change mac");
static_assert(sizeof(struct vnic_crq_init) == 16, "init");
static_assert(sizeof(struct vnic_crq_xport) == 16, "transport event");
static_assert(offsetof(struct vnic_crq, first) == 0, "first @0");
static_assert(offsetof(struct vnic_crq, cmd) == 1, "cmd @1");
static_assert(offsetof(struct vnic_crq, params) == 2, "params @2");
static_assert(offsetof(struct vnic_crq, rc) == 12, "rc @12");
static_assert(offsetof(struct vnic_crq, version.version) == 2, "version @2");
static_assert(offsetof(struct vnic_crq, version.rc) == 12, "version rc @12");
static_assert(offsetof(struct vnic_crq, cap.capability) == 2, "capability @2");
static_assert(offsetof(struct vnic_crq, cap.number) == 4, "number @4");
static_assert(offsetof(struct vnic_crq, cap.rc) == 12, "capability rc @12");
static_assert(offsetof(struct vnic_crq, login.len) == 2, "login len @2");
static_assert(offsetof(struct vnic_crq, login.ioba) == 4, "login ioba @4");
static_assert(offsetof(struct vnic_crq, login.rc) == 12, "login rc @12");
static_assert(offsetof(struct vnic_crq, link_state.state) == 2, "link state @2");
static_assert(offsetof(struct vnic_crq, link_state.rc) == 12, "link state rc @12");
static_assert(offsetof(struct vnic_crq, link_ind.phys_link_state) == 4, "phys @4");
static_assert(offsetof(struct vnic_crq, link_ind.logical_link_state) == 5, "logical @5");
static_assert(offsetof(struct vnic_crq, ip_offload.len) == 2, "ip offload len @2");
static_assert(offsetof(struct vnic_crq, ip_offload.ioba) == 4, "ip offload ioba @4");
static_assert(offsetof(struct vnic_crq, ip_offload.rc) == 12, "ip offload rc @12");
static_assert(offsetof(struct vnic_crq, map.map_id) == 2, "map_id @2");
static_assert(offsetof(struct vnic_crq, map.len) == 4, "map len @4");
static_assert(offsetof(struct vnic_crq, map.ioba) == 8, "map ioba @8");
static_assert(offsetof(struct vnic_crq, map.rc) == 12, "map rc @12");
static_assert(offsetof(struct vnic_crq, link_state.query_state) == 3, "queried link state @3");
static_assert(offsetof(struct vnic_crq, error.flags) == 2, "error flags @2");
static_assert(offsetof(struct vnic_crq, error.error_id) == 4, "error id @4");
static_assert(offsetof(struct vnic_crq, error.cause) == 8, "error cause @8");
static_assert(offsetof(struct vnic_crq, mac.mac) == 2, "mac @2");
static_assert(offsetof(struct vnic_crq, mac.rc) == 12, "mac rc @12");
static_assert(offsetof(struct vnic_crq, init.type) == 1, "init type @1");
static_assert(offsetof(struct vnic_crq, xport.reason) == 1, "transport reason @1");

/* ---------------------------------------------------------------------------
 * Capabilities (section 7; bring-up step 4): ids as ibmvnic where one exists
 * ------------------------------------------------------------------------- */

enum vnic_cap {
	VNIC_CAP_MIN_TX_QUEUES = 1,
	VNIC_CAP_MIN_RX_QUEUES = 2,
	VNIC_CAP_MAX_TX_QUEUES = 4,
	VNIC_CAP_MAX_RX_QUEUES = 5,
	VNIC_CAP_REQ_TX_QUEUES = 7,
	VNIC_CAP_REQ_RX_QUEUES = 8,
	VNIC_CAP_MIN_TX_ENTRIES = 10,
	VNIC_CAP_MIN_RX_ADD_ENTRIES = 11,
	VNIC_CAP_MAX_TX_ENTRIES = 12,
	VNIC_CAP_MAX_RX_ADD_ENTRIES = 13,
	VNIC_CAP_REQ_TX_ENTRIES = 14,
	VNIC_CAP_REQ_RX_ADD_ENTRIES = 15,
	VNIC_CAP_TCP_IP_OFFLOAD = 16,
	VNIC_CAP_MIN_MTU = 19,		/* MTUs include the Ethernet header: REQ_MTU = mtu + 14 */
	VNIC_CAP_MAX_MTU = 20,
	VNIC_CAP_REQ_MTU = 21,
	VNIC_CAP_TX_RX_DESC_REQ = 33,	/* the "headers needed" masks, below */
	/* ours */
	VNIC_CAP_MAX_IND_DESCS = 40,	/* entries per indirect send the server accepts */
	VNIC_CAP_REQ_IND_DESCS = 41,
	VNIC_CAP_RX_BUF_SIZE = 42,	/* bytes per posted rx buffer the server needs */
};

/*
 * TX_RX_DESC_REQ (section 8.3): the capability's number, a BE64 read as eight
 * bytes in wire order. Byte 0 applies to plain packets, byte 2 to checksum
 * offload packets, byte 4 to LSO packets (which are also checksum offload).
 * ibmvnic's trace: 00 00 A0 00 A0 00 00 00 = headers with L3 for CSO and LSO.
 */
enum vnic_desc_req {
	VNIC_DESC_REQ_BYTE_PLAIN = 0,
	VNIC_DESC_REQ_BYTE_CSUM = 2,
	VNIC_DESC_REQ_BYTE_LSO = 4,

	VNIC_DESC_REQ_HDRS = 0x80,	/* header descriptors needed */
	VNIC_DESC_REQ_L2 = 0x40,
	VNIC_DESC_REQ_L3 = 0x20,
	VNIC_DESC_REQ_L4 = 0x10,
};

/* Requirement byte in wire position byte (0..7) of the host-order number. */
static inline uint8_t vnic_desc_req_get(uint64_t number, unsigned int byte)
{
	return byte < 8 ? (uint8_t)(number >> (56 - 8 * byte)) : 0;
}

static inline uint64_t vnic_desc_req_make(uint8_t plain, uint8_t csum, uint8_t lso)
{
	return (uint64_t)plain << (56 - 8 * VNIC_DESC_REQ_BYTE_PLAIN) |
	       (uint64_t)csum << (56 - 8 * VNIC_DESC_REQ_BYTE_CSUM) |
	       (uint64_t)lso << (56 - 8 * VNIC_DESC_REQ_BYTE_LSO);
}

/* ---------------------------------------------------------------------------
 * DMA buffers named by CRQ messages (section 6: LOGIN, IP offload)
 * ------------------------------------------------------------------------- */

/*
 * Login buffer, written by the client: a 40-byte header, then BE32 handles of
 * the sub-CRQs the client registered, tx completion rings first, rx completion
 * rings next, at the offsets given (from the start of the buffer). Ours drops
 * ibmvnic's client data strings and uses 32-bit handles.
 */
struct vnic_login_buf {
	struct vnic_be32 len;			/* bytes valid in this buffer */
	struct vnic_be32 version;		/* VNIC_LOGIN_VERSION */
	struct vnic_be32 num_txcomp_subcrqs;
	struct vnic_be32 off_txcomp_subcrqs;
	struct vnic_be32 num_rxcomp_subcrqs;
	struct vnic_be32 off_rxcomp_subcrqs;
	struct vnic_be64 login_rsp_ioba;	/* where the server writes its response */
	struct vnic_be32 login_rsp_len;
	struct vnic_be32 reserved;
};

/*
 * Login response, written by the server at login_rsp_ioba: a 32-byte header,
 * then BE32 server handles: the tx submission rings (one per tx completion
 * ring, same order) and the rx buffer add rings (one per rx completion ring).
 * The client checks len <= login_rsp_len, the counts against what it asked,
 * and that every array lies inside len, before using a handle.
 */
struct vnic_login_rsp_buf {
	struct vnic_be32 len;
	struct vnic_be32 version;
	struct vnic_be32 num_txsubm_subcrqs;
	struct vnic_be32 off_txsubm_subcrqs;
	struct vnic_be32 num_rxadd_subcrqs;
	struct vnic_be32 off_rxadd_subcrqs;
	struct vnic_be32 rx_buf_size;		/* bytes per rx buffer the client posts */
	struct vnic_be32 reserved;
};

static_assert(sizeof(struct vnic_login_buf) == 40, "login buffer header is 40 bytes");
static_assert(offsetof(struct vnic_login_buf, off_rxcomp_subcrqs) == 20, "login off_rxcomp @20");
static_assert(offsetof(struct vnic_login_buf, login_rsp_ioba) == 24, "login_rsp_ioba @24");
static_assert(offsetof(struct vnic_login_buf, login_rsp_len) == 32, "login_rsp_len @32");
static_assert(sizeof(struct vnic_login_rsp_buf) == 32, "login response header is 32 bytes");
static_assert(offsetof(struct vnic_login_rsp_buf, off_rxadd_subcrqs) == 20, "off_rxadd @20");
static_assert(offsetof(struct vnic_login_rsp_buf, rx_buf_size) == 24, "rx_buf_size @24");

enum {
	VNIC_LOGIN_BUF_MAX = sizeof(struct vnic_login_buf) + 2 * VNIC_MAX_QUEUES * 4,
	VNIC_LOGIN_RSP_BUF_MAX = sizeof(struct vnic_login_rsp_buf) + 2 * VNIC_MAX_QUEUES * 4,
};

/* ipv6_ext_hdr values */
enum {
	VNIC_IPV6_EXT_NONE = 0,
	VNIC_IPV6_EXT_LIMITED = 1,
	VNIC_IPV6_EXT_FULL = 0xFF,
};

/*
 * IP offload buffer: our own 64 bytes (ibmvnic's query buffer is 256 bytes
 * and its control buffer another layout). QUERY_IP_OFFLOAD: the server fills
 * every field with what it supports. CONTROL_IP_OFFLOAD: the client sends the
 * same layout back with the offloads it turns on (a subset of the query; the
 * limits are ignored). Each u8 is 0 (off) or 1 (on).
 */
struct vnic_ip_offload {
	struct vnic_be32 len;			/* bytes valid: sizeof(struct vnic_ip_offload) */
	struct vnic_be32 version;		/* VNIC_IP_OFFLOAD_VERSION */
	uint8_t ipv4_chksum;			/* @8 */
	uint8_t ipv6_chksum;
	uint8_t tcp_ipv4_chksum;
	uint8_t tcp_ipv6_chksum;
	uint8_t udp_ipv4_chksum;
	uint8_t udp_ipv6_chksum;
	uint8_t large_tx_ipv4;			/* LSO (TSO) */
	uint8_t large_tx_ipv6;
	uint8_t large_rx_ipv4;			/* @16: ibmvnic forces these off */
	uint8_t large_rx_ipv6;
	uint8_t bad_packet_rx;			/* control: deliver frames with bad checksums */
	uint8_t reserved1;
	struct vnic_be16 max_ipv4_hdr_size;	/* @20 */
	struct vnic_be16 max_ipv6_hdr_size;
	struct vnic_be16 max_tcp_hdr_size;
	struct vnic_be16 max_udp_hdr_size;
	struct vnic_be32 max_large_tx_size;	/* @28: largest LSO superpacket */
	struct vnic_be32 max_large_rx_size;
	struct vnic_be16 min_large_tx_mss;	/* @36: smallest gso_size the backing accepts */
	struct vnic_be16 max_large_tx_segs;
	uint8_t ipv6_ext_hdr;			/* @40 */
	uint8_t tcp_pseudosum_req;		/* device wants the pseudo-header sum filled in */
	uint8_t reserved2[22];
};

static_assert(sizeof(struct vnic_ip_offload) == 64, "ip offload buffer is 64 bytes");
static_assert(offsetof(struct vnic_ip_offload, ipv4_chksum) == 8, "ipv4_chksum @8");
static_assert(offsetof(struct vnic_ip_offload, large_tx_ipv4) == 14, "large_tx_ipv4 @14");
static_assert(offsetof(struct vnic_ip_offload, large_rx_ipv4) == 16, "large_rx_ipv4 @16");
static_assert(offsetof(struct vnic_ip_offload, max_ipv4_hdr_size) == 20, "max hdr sizes @20");
static_assert(offsetof(struct vnic_ip_offload, max_large_tx_size) == 28, "max_large_tx @28");
static_assert(offsetof(struct vnic_ip_offload, min_large_tx_mss) == 36, "min mss @36");
static_assert(offsetof(struct vnic_ip_offload, ipv6_ext_hdr) == 40, "ipv6_ext_hdr @40");

/* ---------------------------------------------------------------------------
 * Sub-CRQ entries: 32 bytes (section 8)
 * ------------------------------------------------------------------------- */

/* first @0 of every entry: set last by the producer, cleared by the consumer. */
enum {
	VNIC_SUBCRQ_VALID = 0x80,
};

/* Byte 1 of entries on a tx submission ring. */
enum vnic_subcrq_type {
	VNIC_TX_DESC = 0x10,
	VNIC_HDR_DESC = 0x11,
	VNIC_HDR_EXT_DESC = 0x12,
};

/* TX descriptor flags1 @4 (section 8.1). */
enum {
	VNIC_TX_COMP_NEEDED = 0x80,	/* always set: every packet is completed */
	VNIC_TX_CHKSUM_OFFLOAD = 0x40,
	VNIC_TX_LSO = 0x20,
	VNIC_TX_PROT_TCP = 0x10,
	VNIC_TX_PROT_UDP = 0x08,
	VNIC_TX_PROT_IPV4 = 0x04,
	VNIC_TX_PROT_IPV6 = 0x02,
	VNIC_TX_VLAN_PRESENT = 0x01,	/* never set by ibmvnic; reserved here */
};

/* TX descriptor flags2 @5. */
enum {
	VNIC_TX_VLAN_INSERT = 0x80,	/* insert vlan_id @16 */
};

/*
 * TX descriptor (type 0x10), client -> server tx submission ring. The frame
 * is sge_len bytes at ioba inside the long-term buffer dma_reg (a map id).
 * n_crq_elem counts this entry and the header descriptors that follow it in
 * the same indirect batch.
 */
struct vnic_tx_desc {
	uint8_t first;
	uint8_t type;			/* VNIC_TX_DESC */
	uint8_t n_crq_elem;
	uint8_t n_sge;			/* always 1 */
	uint8_t flags1;
	uint8_t flags2;
	struct vnic_be16 mss;		/* LSO only */
	uint8_t reserved[4];
	struct vnic_be32 correlator;	/* echoed in the tx completion */
	struct vnic_be16 vlan_id;
	struct vnic_be16 dma_reg;	/* map id of the long-term buffer */
	struct vnic_be32 sge_len;
	struct vnic_be64 ioba;
};

/* Header descriptor flag @7: the requirement bit shifted left by one (section 8.2). */
enum {
	VNIC_HDR_DESC_L2 = 0x80,
	VNIC_HDR_DESC_L3 = 0x40,
	VNIC_HDR_DESC_L4 = 0x20,
};

/* Header descriptor (type 0x11): the first 24 bytes of the requested headers. */
struct vnic_hdr_desc {
	uint8_t first;
	uint8_t type;			/* VNIC_HDR_DESC */
	uint8_t len;			/* header bytes in all descriptors of this packet */
	uint8_t l2_len;
	struct vnic_be16 l3_len;
	uint8_t l4_len;
	uint8_t flag;			/* VNIC_HDR_DESC_L* */
	uint8_t data[VNIC_HDR_DESC_BYTES];
};

/* Header extension (type 0x12): the next 29 header bytes. */
struct vnic_hdr_ext_desc {
	uint8_t first;
	uint8_t type;			/* VNIC_HDR_EXT_DESC */
	uint8_t len;			/* bytes used in data */
	uint8_t data[VNIC_HDR_EXT_BYTES];
};

/*
 * TX completion, server -> client tx completion ring (section 8.4): up to 5
 * packets per entry. rcs[i] is an enum vnic_rc; non-zero means dropped.
 */
struct vnic_tx_comp {
	uint8_t first;
	uint8_t num_comps;		/* 1..VNIC_TX_COMP_MAX */
	struct vnic_be16 rcs[VNIC_TX_COMP_MAX];
	struct vnic_be32 correlators[VNIC_TX_COMP_MAX];
};

/* RX completion flags @1 (section 8.5). */
enum {
	VNIC_RXC_IP_CHKSUM_GOOD = 0x80,
	VNIC_RXC_TCP_UDP_CHKSUM_GOOD = 0x40,	/* CHECKSUM_UNNECESSARY needs both */
	VNIC_RXC_END_FRAME = 0x20,
	VNIC_RXC_EXACT_MC = 0x10,
	VNIC_RXC_VLAN_STRIPPED = 0x08,
};

/*
 * Large receive (ours, section 8.5): what a superframe stands for, in the
 * last completion of the buffers it spans (the one with END_FRAME). A type
 * bit, the ECN bit only with a TCP type (CWR on the first segment).
 */
enum vnic_rx_lro_type {
	VNIC_RX_LRO_NONE = 0,
	VNIC_RX_LRO_TCPV4 = 0x01,
	VNIC_RX_LRO_TCPV6 = 0x02,
	VNIC_RX_LRO_UDP_L4 = 0x04,
	VNIC_RX_LRO_TCP_ECN = 0x80,
};

/*
 * RX completion, server -> client rx completion ring: len bytes of frame at
 * off_frame_data inside the buffer posted with this correlator. A frame
 * without END_FRAME goes on in the next completion of the ring (a large
 * receive, section 8.5); lro_mss and lro_type are ours, 0 but in the last
 * completion of a large receive.
 */
struct vnic_rx_comp {
	uint8_t first;
	uint8_t flags;
	struct vnic_be16 off_frame_data;
	struct vnic_be32 len;
	struct vnic_be64 correlator;	/* the rx buffer add's, echoed */
	struct vnic_be16 vlan_tci;
	struct vnic_be16 rc;		/* enum vnic_rc */
	struct vnic_be16 lro_mss;	/* @20: the segments' payload, gso_size */
	uint8_t lro_type;		/* @22: enum vnic_rx_lro_type */
	uint8_t reserved[9];
};

/*
 * RX buffer add, client -> server rx add ring (section 8.6): a len-byte
 * buffer at ioba inside long-term buffer map_id.
 */
struct vnic_rx_add {
	uint8_t first;
	uint8_t reserved1[7];
	struct vnic_be64 correlator;
	struct vnic_be32 ioba;
	uint8_t map_id;
	struct vnic_be24 len;
	uint8_t reserved2[8];
};

/*
 * One 32-byte sub-CRQ entry. first is a direct member: entry.first reads the
 * valid byte of any view. The ring decides which view applies (tx submission:
 * tx, hdr, hdr_ext by type; tx completion ring: tx_comp; rx completion ring:
 * rx_comp; rx add ring: rx_add).
 */
union vnic_subcrq_entry {
	uint8_t first;
	struct {
		uint8_t first;
		uint8_t type;
		uint8_t data[30];
	} generic;
	struct vnic_tx_desc tx;
	struct vnic_hdr_desc hdr;
	struct vnic_hdr_ext_desc hdr_ext;
	struct vnic_tx_comp tx_comp;
	struct vnic_rx_comp rx_comp;
	struct vnic_rx_add rx_add;
	uint8_t raw[VNIC_SUBCRQ_ENTRY_SIZE];
};

static_assert(sizeof(union vnic_subcrq_entry) == VNIC_SUBCRQ_ENTRY_SIZE, "entry is 32 bytes");
static_assert(_Alignof(union vnic_subcrq_entry) == 1, "entry has no alignment needs");
static_assert(sizeof(struct vnic_tx_desc) == 32, "tx descriptor");
static_assert(sizeof(struct vnic_hdr_desc) == 32, "header descriptor");
static_assert(sizeof(struct vnic_hdr_ext_desc) == 32, "header extension");
static_assert(sizeof(struct vnic_tx_comp) == 32, "tx completion");
static_assert(sizeof(struct vnic_rx_comp) == 32, "rx completion");
static_assert(sizeof(struct vnic_rx_add) == 32, "rx buffer add");
static_assert(offsetof(struct vnic_tx_desc, flags1) == 4, "tx flags1 @4");
static_assert(offsetof(struct vnic_tx_desc, mss) == 6, "tx mss @6");
static_assert(offsetof(struct vnic_tx_desc, correlator) == 12, "tx correlator @12");
static_assert(offsetof(struct vnic_tx_desc, vlan_id) == 16, "tx vlan @16");
static_assert(offsetof(struct vnic_tx_desc, dma_reg) == 18, "tx dma_reg @18");
static_assert(offsetof(struct vnic_tx_desc, sge_len) == 20, "tx sge_len @20");
static_assert(offsetof(struct vnic_tx_desc, ioba) == 24, "tx ioba @24");
static_assert(offsetof(struct vnic_hdr_desc, l3_len) == 4, "hdr l3_len @4");
static_assert(offsetof(struct vnic_hdr_desc, l4_len) == 6, "hdr l4_len @6");
static_assert(offsetof(struct vnic_hdr_desc, flag) == 7, "hdr flag @7");
static_assert(offsetof(struct vnic_hdr_desc, data) == 8, "hdr data @8");
static_assert(offsetof(struct vnic_hdr_ext_desc, data) == 3, "hdr ext data @3");
static_assert(offsetof(struct vnic_tx_comp, num_comps) == 1, "txc num_comps @1");
static_assert(offsetof(struct vnic_tx_comp, rcs) == 2, "txc rcs @2");
static_assert(offsetof(struct vnic_tx_comp, correlators) == 12, "txc correlators @12");
static_assert(offsetof(struct vnic_rx_comp, flags) == 1, "rxc flags @1");
static_assert(offsetof(struct vnic_rx_comp, off_frame_data) == 2, "rxc offset @2");
static_assert(offsetof(struct vnic_rx_comp, len) == 4, "rxc len @4");
static_assert(offsetof(struct vnic_rx_comp, correlator) == 8, "rxc correlator @8");
static_assert(offsetof(struct vnic_rx_comp, vlan_tci) == 16, "rxc vlan_tci @16");
static_assert(offsetof(struct vnic_rx_comp, rc) == 18, "rxc rc @18");
static_assert(offsetof(struct vnic_rx_comp, lro_mss) == 20, "rxc lro_mss @20");
static_assert(offsetof(struct vnic_rx_comp, lro_type) == 22, "rxc lro_type @22");
static_assert(offsetof(struct vnic_rx_add, correlator) == 8, "rx add correlator @8");
static_assert(offsetof(struct vnic_rx_add, ioba) == 16, "rx add ioba @16");
static_assert(offsetof(struct vnic_rx_add, map_id) == 20, "rx add map_id @20");
static_assert(offsetof(struct vnic_rx_add, len) == 21, "rx add len @21");
static_assert(offsetof(union vnic_subcrq_entry, generic.type) == 1, "type @1");

/*
 * Sub-CRQ entries needed to carry hdr_len header bytes: 0 without headers,
 * else one header descriptor plus the extensions for what exceeds its 24
 * bytes. Callers keep hdr_len <= VNIC_MAX_HDR_BYTES.
 */
static inline unsigned int vnic_hdr_descs_needed(unsigned int hdr_len)
{
	if (!hdr_len)
		return 0;
	if (hdr_len <= VNIC_HDR_DESC_BYTES)
		return 1;
	return 1 + (hdr_len - VNIC_HDR_DESC_BYTES + VNIC_HDR_EXT_BYTES - 1) / VNIC_HDR_EXT_BYTES;
}

#endif /* VNIC_PROTO_H */
