// SPDX-License-Identifier: MIT
/*
 * `vnic link`: two network namespaces joined by vnic, so any program talks
 * across it with the kernel's own TCP/IP (docs/LINK.md).
 *
 *   netns A                                                             netns B
 *   vnic0 (TAP) -> driver A -> hv A -> device A ==cable== device B -> hv B -> driver B -> vnic0
 *   \___________________ thread a __________________/  \____________ thread b ___________/
 *
 * With --split (or --server PATH) the devices and the cable are in a server
 * process (server.c, docs/ARCHITECTURE.md section 11), as `vnic bench
 * --split` puts them: the TAPs, their namespaces and the drivers stay here,
 * and each side's hv is split between the two processes.
 *
 * With --backing IFNAME there is one vNIC: the TAP in namespace A, and its
 * device on an AF_PACKET wire on IFNAME instead of the cable, as a VIOS
 * backs an ibmvnic with a physical adapter. With --wire SPEC, likewise one
 * vNIC, whose device's wire is a socket framed as QEMU's stream or dgram
 * network backends frame it: another vnic link, or a QEMU VM, at the other end.
 *
 * The TAPs are opened in our own namespace and moved into theirs with
 * RTM_NEWLINK IFLA_NET_NS_FD (renamed on the way, so the temporary name can
 * be unique here and the final one the same in both namespaces). Everything
 * created is recorded and removed at the end: the namespaces we made (not
 * those we attached to), the TAPs (they vanish with their fds).
 */
#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <net/if_arp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "link_int.h"
#include "pcap_int.h"

enum {
	SIDES = 2,
	HOST_PKTS_MIN = 256,	/* TAP read bursts (64) per queue, with room to keep some */
	MAX_COUNTERS = 8192,
	GIVE_UP_POLL_NS = 100000000,	/* --server: how often run() looks for a give-up */
};

static const char *const side_name[SIDES] = { "a", "b" };

struct link_side {
	struct vnic_cpu own_cpu;
	bool cpu_init;			/* own_cpu initialised (and this side's to run) */
	struct vnic_cpu *cpu;		/* own_cpu, or side a's with --threads 1 */
	struct vnic_hv *hv;
	struct vnic_dev *dev;
	struct vnic_drv *drv;
	struct vnic_pkt_pool pool;	/* what the TAP reads into (queue 0's, with spread queues) */
	struct vnic_pkt_pool qpool[VNIC_MAX_QUEUES];	/* queue q >= 1's, with spread queues */
	struct vnic_tap *tap;
	struct vnic_wire *wire;		/* the device's (maybe the pcap wrapper) */
	char tmp_ifname[IFNAMSIZ];
	/* namespace */
	const char *ns;
	int ns_fd;
	bool ns_created;
	struct vnic_nl nl;		/* a route socket inside the namespace */
	struct vnic_nl events;		/* its link events (the TAP's MTU changed) */
	int ifindex;			/* of the TAP, inside the namespace */
	struct vnic_nl_addr a4, a6;
	bool has4, has6;
};

struct link {
	struct vnic_link_opts *o;
	struct vnic_link_opts opts;	/* what o points at: kept here, off the main thread's stack */
	unsigned int nsides;
	struct link_side side[SIDES];
	struct vnic_cable *cable;
	/*
	 * --queues N spread (N, else 0): queue pair q of both vNICs on qcpu[q],
	 * side a's and b's own cpus for 0 and 1, the cpus below for 2 and up.
	 */
	unsigned int spread;
	struct vnic_cpu *qcpu[VNIC_MAX_QUEUES];
	struct vnic_cpu extra_cpu[VNIC_MAX_QUEUES];
	unsigned int nextra;			/* extra_cpu[0..nextra) initialised */
	struct vnic_cpu_spin_group spin_group;	/* --spinners below --threads */
	struct vnic_wire *backing;
	bool backing_xdp;		/* the backing wire is AF_XDP's, else AF_PACKET's */
	struct vnic_wire *sockwire;	/* --wire */
	struct vnic_sockwire_spec wire_spec;	/* what --wire says */
	uint32_t backing_mtu;		/* the backing interface's, seen at the check */
	int backing_ns_fd;		/* --backing-ns, opened at the check; -1: ours */
	FILE *pcap_file;		/* --pcap, opened before anything is built */
	struct vnic_pcap *pcap;
	struct vnic_ctl *ctl;
	struct vnic_split split;	/* --split, --server: the server process's socket */
	bool server_gone;		/* split: its socket closed during the run */
	bool cpus_started;
	uint64_t mtu_restored;		/* main thread; link.mtu_restored */
	/*
	 * The MTU the TAPs are held to: the vNIC's, set by `vnic set NAME mtu`
	 * (the control socket's thread) before or after the change-param, so
	 * that the hold never puts back a change we made ourselves.
	 */
	_Atomic uint32_t mtu_target;
	struct vnic_live live;		/* `vnic show/set`, on the control socket's thread */
};

/* ---------------------------------------------------------------------------
 * Options: the shared table (opts.c), and link's own.
 * ------------------------------------------------------------------------- */

enum {
	OPT_NS_A = 256, OPT_NS_B, OPT_ADDR_A, OPT_ADDR_B, OPT_ADDR6_A, OPT_ADDR6_B, OPT_IFNAME,
	OPT_PCAP, OPT_BACKING, OPT_DURATION, OPT_TAP_BATCH, OPT_NO_VNET_HDR, OPT_NAME,
	OPT_NO_CTL, OPT_NEW_NS_A, OPT_NEW_NS_B, OPT_NO_CSUM, OPT_INTERVAL_JSON,
	OPT_SNAPLEN, OPT_PCAP_COUNT, OPT_PCAP_LOSSLESS, OPT_BACKING_NS, OPT_BACKING_RING,
	OPT_BACKING_OFFLOAD, OPT_BACKING_MODE,
	OPT_WIRE, OPT_SPLIT, OPT_SERVER, OPT_RECONNECT, OPT_PROFILE,
};

static_assert(OPT_PCAP_COUNT == OPT_SNAPLEN + 1 && OPT_PCAP_LOSSLESS == OPT_SNAPLEN + 2,
	      "--pcap's options after it in vnic_arg_pcap's order (1, 2, 3)");

static const struct option own_opts[] = {
	{ "ns-a", required_argument, NULL, OPT_NS_A },
	{ "ns-b", required_argument, NULL, OPT_NS_B },
	{ "new-ns-a", required_argument, NULL, OPT_NEW_NS_A },
	{ "new-ns-b", required_argument, NULL, OPT_NEW_NS_B },
	{ "addr-a", required_argument, NULL, OPT_ADDR_A },
	{ "addr-b", required_argument, NULL, OPT_ADDR_B },
	{ "addr6-a", required_argument, NULL, OPT_ADDR6_A },
	{ "addr6-b", required_argument, NULL, OPT_ADDR6_B },
	{ "ifname", required_argument, NULL, OPT_IFNAME },
	{ "pcap", required_argument, NULL, OPT_PCAP },
	{ "snaplen", required_argument, NULL, OPT_SNAPLEN },
	{ "pcap-count", required_argument, NULL, OPT_PCAP_COUNT },
	{ "pcap-lossless", no_argument, NULL, OPT_PCAP_LOSSLESS },
	{ "backing", required_argument, NULL, OPT_BACKING },
	{ "backing-ns", required_argument, NULL, OPT_BACKING_NS },
	{ "backing-ring", required_argument, NULL, OPT_BACKING_RING },
	{ "backing-offload", required_argument, NULL, OPT_BACKING_OFFLOAD },
	{ "backing-mode", required_argument, NULL, OPT_BACKING_MODE },
	{ "wire", required_argument, NULL, OPT_WIRE },
	{ "split", no_argument, NULL, OPT_SPLIT },
	{ "server", required_argument, NULL, OPT_SERVER },
	{ "reconnect-timeout", required_argument, NULL, OPT_RECONNECT },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "tap-batch", required_argument, NULL, OPT_TAP_BATCH },
	{ "no-vnet-hdr", no_argument, NULL, OPT_NO_VNET_HDR },
	{ "no-csum", no_argument, NULL, OPT_NO_CSUM },
	{ "name", required_argument, NULL, OPT_NAME },
	{ "no-ctl", no_argument, NULL, OPT_NO_CTL },
	{ "interval-json", no_argument, NULL, OPT_INTERVAL_JSON },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	struct vnic_link_opts def;

	vnic_link_opts_default(&def);
	fputs("usage: vnic link [options]   (root: creates namespaces and TAPs; docs/LINK.md)\n"
	      "namespaces and addresses:\n"
	      "  --ns-a NAME, --ns-b NAME     attach to existing namespaces instead of creating\n"
	      "                               vnic-a and vnic-b\n"
	      "  --new-ns-a NAME, --new-ns-b NAME   create (and remove) these instead\n"
	      "  --addr-a A/P, --addr-b A/P   IPv4 (10.99.0.1/24, 10.99.0.2/24; 'none' for none)\n"
	      "  --addr6-a A/P, --addr6-b A/P IPv6 (fd00:99::1/64, fd00:99::2/64; or 'none')\n"
	      "  --ifname NAME       the TAP's name in each namespace (vnic0)\n"
	      "  --backing IFNAME    back the vNIC's device with IFNAME through AF_PACKET instead\n"
	      "                      of the cable: one vNIC, one namespace (A); no cable options;\n"
	      "                      without --mtu, the vNIC takes IFNAME's MTU (at most 9000)\n"
	      "  --backing-ns NAME   the namespace IFNAME is in (default: vnic's own)\n"
	      "  --backing-ring v2|v3  AF_PACKET receive ring: per-frame (v2, default) or\n"
	      "                      blocks retired after 1 ms (v3: fewer wake-ups, slower alone)\n"
	      "  --backing-offload on|off  superframes to and from IFNAME with a vnet header\n"
	      "                      (on: the kernel segments; off: MTU frames only)\n"
	      "  --backing-mode afpacket|afxdp|auto  the socket under the backing: AF_PACKET\n"
	      "                      (default), AF_XDP (MTU frames, MTU at most 3822), or AF_XDP\n"
	      "                      where IFNAME takes it and AF_PACKET otherwise\n"
	      "  --wire SPEC         the vNIC's device on a socket, framed as QEMU's -netdev\n"
	      "                      stream or dgram: one vNIC, one namespace (A), no cable\n"
	      "                      options. SPEC: stream:unix:PATH[,server],\n"
	      "                      stream:tcp:HOST:PORT[,server] (connects; ',server'\n"
	      "                      listens), dgram:udp:LHOST:LPORT,RHOST:RPORT\n"
	      "  --split             the devices and the cable in a server process forked for\n"
	      "                      the run; the TAPs and the drivers stay here. Not with\n"
	      "                      --backing, --wire, --pcap or --fault; --tx-buf map copies\n"
	      "                      as the default does (the TAPs' pools are not shared)\n"
	      "  --server PATH       as --split, the server a standing 'vnic server --listen\n"
	      "                      PATH' rather than a process forked for the run; one\n"
	      "                      that goes away is reconnected to (the drivers reset, the\n"
	      "                      TAPs stay up); on a 'vnic server --switch' the vNICs\n"
	      "                      take the MACs of their switch ports\n"
	      "  --reconnect-timeout S  --server: how long to try to reach a server that\n"
	      "                      went away before the link ends with status 1 (30)\n"
	      "  --pcap FILE         write every frame crossing the wire to FILE (pcap)\n"
	      "  --snaplen N         bytes kept of each captured frame (default: whole frames)\n"
	      "  --pcap-count N      stop capturing after N frames\n"
	      "  --pcap-lossless     slow the link down rather than leave frames out\n"
	      "  --duration S        stop after S seconds (default: at SIGINT, SIGTERM or SIGHUP)\n"
	      "  --profile NAME      throughput or latency: a measured set of options in one\n"
	      "                      (below); options given beside it override its own\n"
	      "output:\n"
	      "  --quiet             no interval lines on stderr\n"
	      "  --json              the final report as one JSON object on stdout\n"
	      "  --interval-json     also one JSON object per second on stdout (JSON Lines)\n"
	      "  --name NAME         instance name for 'vnic stats' (link-PID)\n"
	      "  --no-ctl            no control socket\n"
	      "TAP:\n"
	      "  --tap-batch N       packets per TAP read burst (64)\n"
	      "  --no-vnet-hdr       plain frames, no offloads between the kernel and vnic\n"
	      "  --no-csum           the vNIC offers no checksum offload (nor TSO) to the kernel\n"
	      "throughput: the cable option --cable-tso (below) carries TSO superpackets whole\n"
	      "  between the two vNICs, as veth does: 0.62x the CPU per GB in vnic bench; on a\n"
	      "  quiet machine 1.15x one stream's TCP throughput, inside the runs' spread\n"
	      "  (docs/BENCHMARKS.md); off by default, since a NIC's wire carries MTU frames\n"
	      "queues: --queues N runs queue pair q of both vNICs on thread q over cable ring q\n"
	      "  (N threads, N at most the cpus; not with a backing, --wire, --split, --pcap or\n"
	      "  --threads 1, where the queues stay on the sides' threads): a flow stays on one\n"
	      "  thread from TAP to TAP, and flows on other queue pairs use other cores;\n"
	      "  recommended for many flows: --queues 2 (quiet, 2 vCPUs: 4 TCP streams at 0.64x\n"
	      "  to 0.67x veth, 1.26x to 1.28x the default's; one flow's round trip 0.71x to\n"
	      "  0.85x the default's, its queue pair of both vNICs on one thread)\n"
	      "one stream: --profile throughput (--queues 2 --tx-buf map --rx-agg frags, and\n"
	      "  --cable-tso where there is a cable) leaves out two copies and the segmenting\n"
	      "  (quiet, 2 vCPUs: 0.62x veth, 1.28x --queues 2 alone)\n"
	      "round trips: --profile latency (--queues 2 --busy-poll-us 50) shortens a\n"
	      "  small-message ping-pong\n"
	      "  (quiet, 2 vCPUs: 0.71x vde_switch's, 0.82x --queues 2's, at 1.5x its CPU), as does\n"
	      "  --threads 1 --busy-poll-us 50 (0.80x the default's, 0.84x vde_switch's); the spin\n"
	      "  backs off when the endpoints need the cores (docs/LINK.md)\n",
	      f);
	vnic_topo_opts_usage(f, VNIC_OPTG_ALL, &def.topo);
}

static int check_ifname(const char *opt, const char *s)
{
	if (!*s || strlen(s) >= IFNAMSIZ || strchr(s, '/') || strchr(s, ' ')) {
		fprintf(stderr, "vnic: %s: '%s' is not an interface name (1..%d characters)\n", opt,
			s, IFNAMSIZ - 1);
		return -EINVAL;
	}
	return 0;
}

static int parse_opt(void *ctx, int c, const char *a)
{
	struct vnic_link_opts *o = ctx;
	int err = 0;

	switch (c) {
	case OPT_NS_A:
	case OPT_NS_B:
		o->ns[c - OPT_NS_A] = a;
		o->ns_given[c - OPT_NS_A] = true;
		break;
	case OPT_NEW_NS_A:
	case OPT_NEW_NS_B:
		o->ns[c - OPT_NEW_NS_A] = a;
		o->ns_given[c - OPT_NEW_NS_A] = false;
		break;
	case OPT_ADDR_A:
	case OPT_ADDR_B:
		o->addr[c - OPT_ADDR_A] = a;
		break;
	case OPT_ADDR6_A:
	case OPT_ADDR6_B:
		o->addr6[c - OPT_ADDR6_A] = a;
		break;
	case OPT_IFNAME:
		o->ifname = a;
		err = check_ifname("--ifname", a);
		break;
	case OPT_PCAP:
	case OPT_SNAPLEN:
	case OPT_PCAP_COUNT:
	case OPT_PCAP_LOSSLESS:
		err = vnic_arg_pcap(c == OPT_PCAP ? 0 : (unsigned int)(c - OPT_SNAPLEN + 1), a,
				    &o->pcap);
		break;
	case OPT_BACKING:
		o->backing = a;
		err = check_ifname("--backing", a);
		break;
	case OPT_BACKING_NS:
		o->backing_ns = a;
		if (!vnic_netns_name_ok(a)) {
			fprintf(stderr, "vnic: --backing-ns: '%s' is not a namespace name (as in "
				"ip netns)\n", a);
			err = -EINVAL;
		}
		break;
	case OPT_BACKING_OFFLOAD:
		if (!strcmp(a, "on") || !strcmp(a, "off")) {
			o->backing_plain = !strcmp(a, "off");
		} else {
			fprintf(stderr, "vnic: --backing-offload: '%s' is not on or off\n", a);
			err = -EINVAL;
		}
		break;
	case OPT_BACKING_MODE:
		if (!strcmp(a, "afpacket")) {
			o->backing_mode = VNIC_LINK_BACKING_AFPACKET;
		} else if (!strcmp(a, "afxdp")) {
			o->backing_mode = VNIC_LINK_BACKING_AFXDP;
		} else if (!strcmp(a, "auto")) {
			o->backing_mode = VNIC_LINK_BACKING_AUTO;
		} else {
			fprintf(stderr, "vnic: --backing-mode: '%s' is not afpacket, afxdp or auto\n", a);
			err = -EINVAL;
		}
		break;
	case OPT_BACKING_RING:
		if (!strcmp(a, "v2")) {
			o->backing_ring = VNIC_AFPACKET_RING_V2;
		} else if (!strcmp(a, "v3")) {
			o->backing_ring = VNIC_AFPACKET_RING_V3;
		} else {
			fprintf(stderr, "vnic: --backing-ring: '%s' is not v2 or v3\n", a);
			err = -EINVAL;
		}
		break;
	case OPT_WIRE: {
		struct vnic_sockwire_spec spec;
		enum vnic_sockwire_spec_err why = vnic_sockwire_parse(a, &spec);

		o->wire = a;
		if (why) {
			fprintf(stderr, "vnic: --wire %s: %s\n", a, vnic_sockwire_spec_err_str(why));
			err = -EINVAL;
		}
		break;
	}
	case OPT_SPLIT:
		o->topo.split = true;
		break;
	case OPT_SERVER:
		err = vnic_arg_path("--server", a);
		o->topo.split = true;
		o->topo.server_path = a;
		break;
	case OPT_RECONNECT: {
		double secs;

		err = vnic_arg_double("--reconnect-timeout", a, 0.01, 86400, &secs);
		o->topo.reconnect_timeout_ns = (uint64_t)(secs * 1e9);
		o->reconnect_given = true;
		break;
	}
	case OPT_DURATION:
		err = vnic_arg_double("--duration", a, 0.1, 1e9, &o->duration_s);
		break;
	case OPT_TAP_BATCH:
		err = vnic_arg_u32("--tap-batch", a, 1, 1024, &o->tap_batch);
		break;
	case OPT_NO_VNET_HDR:
		o->no_vnet_hdr = true;
		break;
	case OPT_NO_CSUM:
		o->topo.drv.csum = false;
		break;
	case OPT_INTERVAL_JSON:
		o->interval_json = true;
		break;
	case OPT_PROFILE:
		if (o->profile && strcmp(o->profile, a)) {
			fputs("vnic link: --profile is given twice\n", stderr);
			return -EINVAL;
		}
		o->profile = a;
		break;
	case OPT_NO_CTL:
		o->ctl = false;
		break;
	case OPT_NAME:
		err = vnic_arg_ctl_name("--name", a);
		o->ctl_name = a;
		break;
	default:
		err = vnic_topo_opt_parse(c, a, &o->topo, &o->groups_set);
		if (!err && vnic_opts_long_name(c) && !strcmp(vnic_opts_long_name(c), "mtu"))
			o->mtu_given = true;
		break;
	}
	return err;
}

void vnic_link_opts_default(struct vnic_link_opts *o)
{
	memset(o, 0, sizeof(*o));
	vnic_topo_config_default(&o->topo);
	/*
	 * No spinning before sleep: the programs at both ends of a link need
	 * the same few cores, and 50 us of spin per idle (bench's default,
	 * where vnic is alone) cost real traffic 3x in round-trip time and
	 * half the request rate here (docs/LINK.md).
	 */
	o->topo.busy_poll_ns = 0;
	o->ns[0] = "vnic-a";
	o->ns[1] = "vnic-b";
	o->addr[0] = "10.99.0.1/24";
	o->addr[1] = "10.99.0.2/24";
	o->addr6[0] = "fd00:99::1/64";
	o->addr6[1] = "fd00:99::2/64";
	o->ifname = "vnic0";
	o->ctl = true;
}

/* What the options imply for each other, once all are read. 0 or -EINVAL. */
static int settle(struct vnic_link_opts *o)
{
	if (o->topo.drv.tso && !o->topo.drv.csum)
		o->topo.drv.tso = false;
	if (o->backing && o->wire) {
		fputs("vnic link: --wire and --backing each give the device its wire; one of them\n",
		      stderr);
		return -EINVAL;
	}
	if (o->wire && (o->groups_set & (1u << VNIC_OPTG_CABLE))) {
		fputs("vnic link: the cable options (--rate, --delay-us, --loss, --reorder, "
		      "--corrupt, --seed, --cable-tso) shape the cable; with --wire there is none\n",
		      stderr);
		return -EINVAL;
	}
	if (o->backing && (o->groups_set & (1u << VNIC_OPTG_CABLE))) {
		fputs("vnic link: the cable options (--rate, --delay-us, --loss, --reorder, "
		      "--corrupt, --seed, --cable-tso) shape the cable; with --backing there is none\n",
		      stderr);
		return -EINVAL;
	}
	if (!o->backing && (o->backing_ns || o->backing_ring != VNIC_AFPACKET_RING_V2 ||
			    o->backing_plain || o->backing_mode != VNIC_LINK_BACKING_AFPACKET)) {
		fputs("vnic link: --backing-ns, --backing-ring, --backing-offload and "
		      "--backing-mode shape a backing: give --backing\n",
		      stderr);
		return -EINVAL;
	}
	if (o->backing_mode == VNIC_LINK_BACKING_AFXDP &&
	    (o->backing_ring != VNIC_AFPACKET_RING_V2 || o->backing_plain)) {
		fputs("vnic link: --backing-ring and --backing-offload shape the AF_PACKET "
		      "socket; --backing-mode afxdp has none (it carries MTU frames)\n",
		      stderr);
		return -EINVAL;
	}
	if (o->reconnect_given && !o->topo.server_path) {
		fputs("vnic link: --reconnect-timeout is for a client of a standing server "
		      "(--server PATH)\n", stderr);
		return -EINVAL;
	}
	if (!o->backing && !o->wire && !strcmp(o->ns[0], o->ns[1])) {
		fputs("vnic link: --ns-a and --ns-b name the same namespace\n", stderr);
		return -EINVAL;
	}
	if (vnic_pcap_opts_check("vnic link", &o->pcap, o->topo.cable.tso))
		return -EINVAL;
	return vnic_opts_check_ctl("vnic link", o->ctl_name, o->ctl);
}

static const struct vnic_opts_cmd link_cmd = {
	"vnic link", own_opts, VNIC_OPTG_ALL, usage, offsetof(struct vnic_link_opts, quiet),
	offsetof(struct vnic_link_opts, json), parse_opt,
};

/*
 * --profile NAME: the option sets docs/LINK.md measured for one stream
 * (throughput) and for a small-message round trip (latency), so that each
 * is one option. --cable-tso, which needs a cable, is the throughput
 * profile's only where there is one and no --pcap mirrors it (settle()).
 */
struct link_profile {
	const char *name;
	const char *const *args;	/* NULL-terminated */
	bool cable_tso;
};

static const char *const profile_throughput[] = {
	"--queues", "2", "--tx-buf", "map", "--rx-agg", "frags", NULL,
};
static const char *const profile_latency[] = { "--queues", "2", "--busy-poll-us", "50", NULL };

static const struct link_profile link_profiles[] = {
	{ "throughput", profile_throughput, true },
	{ "latency", profile_latency, false },
};

static const struct link_profile *profile_find(const char *name)
{
	for (size_t i = 0; i < sizeof(link_profiles) / sizeof(link_profiles[0]); i++)
		if (!strcmp(link_profiles[i].name, name))
			return &link_profiles[i];
	return NULL;
}

/* The throughput profile's --cable-tso needs a cable that no capture mirrors */
static bool profile_cable_tso(const struct link_profile *pr, const struct vnic_link_opts *o)
{
	return pr->cable_tso && !o->backing && !o->wire && !o->pcap.path;
}

enum { PROFILE_MAX_ARGS = 8 };

/*
 * The command line again with the profile's options first, so that an
 * option given on it overrides the profile's. 0, 1 (help) or -EINVAL.
 */
static int parse_with_profile(int argc, char **argv, struct vnic_link_opts *o,
			      const struct link_profile *pr)
{
	char **args;
	int n = 0, err;

	args = calloc((size_t)argc + PROFILE_MAX_ARGS + 1, sizeof(*args));
	if (!args)
		return -ENOMEM;
	args[n++] = argv[0];
	for (const char *const *a = pr->args; *a; a++)
		args[n++] = (char *)*a;
	for (int i = 1; i < argc; i++)
		args[n++] = argv[i];
	vnic_link_opts_default(o);
	err = vnic_opts_parse(&link_cmd, n, args, o);
	free(args);
	return err;
}

int vnic_link_parse(int argc, char **argv, struct vnic_link_opts *o)
{
	const struct link_profile *pr;
	int err;

	static_assert((int)VNIC_TAP_MAX_QUEUES >= (int)VNIC_MAX_QUEUES, "a TAP queue per vNIC queue");
	static_assert(sizeof(profile_throughput) / sizeof(char *) <= PROFILE_MAX_ARGS + 1 &&
		      sizeof(profile_latency) / sizeof(char *) <= PROFILE_MAX_ARGS + 1,
		      "a profile's options fit PROFILE_MAX_ARGS");
	vnic_link_opts_default(o);
	err = vnic_opts_parse(&link_cmd, argc, argv, o);
	if (err || !o->profile)
		return err ? err : settle(o);
	pr = profile_find(o->profile);
	if (!pr) {
		fprintf(stderr, "vnic link: --profile %s: throughput or latency\n", o->profile);
		return -EINVAL;
	}
	err = parse_with_profile(argc, argv, o, pr);
	if (err)
		return err;
	if (profile_cable_tso(pr, o))
		o->topo.cable.tso = true;
	return settle(o);
}

/* ---------------------------------------------------------------------------
 * Errors a user meets: one line each, then exit status 1.
 * ------------------------------------------------------------------------- */

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int fail(const char *fmt, ...)
{
	va_list ap;

	fputs("vnic link: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* CAP_NET_ADMIN for TAPs and rtnetlink, CAP_SYS_ADMIN for unshare, setns and the bind mount. */
static bool have_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return false;
	return (d[0].effective & (1u << CAP_NET_ADMIN)) && (d[0].effective & (1u << CAP_SYS_ADMIN));
}

static int preflight(void)
{
	if (!have_caps())
		return fail("needs root (CAP_NET_ADMIN) to create namespaces and TAPs");
	if (access("/dev/net/tun", R_OK | W_OK))
		return fail("no /dev/net/tun (%s): load the tun module (modprobe tun) or give the "
			    "container the device", strerror(errno));
	return 0;
}

/*
 * --split and --server: what needs the devices or the cable in this process
 * is refused before anything is made, one line each; none of it reaches
 * into the server process (docs/ARCHITECTURE.md section 11).
 */
static int split_refused(const struct vnic_link_opts *o)
{
	const char *opt = o->topo.server_path ? "--server" : "--split";

	if (!o->topo.split)
		return 0;
	if (o->backing)
		return fail("%s: --backing puts the device on %s from this process; the devices "
			    "are the server process's", opt, o->backing);
	if (o->wire)
		return fail("%s: --wire puts the device on a socket of this process; the devices "
			    "are the server process's", opt);
	if (o->pcap.path)
		return fail("%s: the cable is in the server process: no --pcap", opt);
	if (vnic_fault_any(&o->topo.fault))
		return fail("%s: --fault reaches into the devices, which are in the server "
			    "process", opt);
	return 0;
}

static int parse_addrs(struct link *l)
{
	struct vnic_link_opts *o = l->o;
	char b1[INET6_ADDRSTRLEN];

	for (unsigned int s = 0; s < l->nsides; s++) {
		struct link_side *sd = &l->side[s];

		if (strcmp(o->addr[s], "none")) {
			if (vnic_nl_addr_parse(o->addr[s], AF_INET, &sd->a4))
				return fail("--addr-%s: '%s' is not an IPv4 address/prefix",
					    side_name[s], o->addr[s]);
			sd->has4 = true;
		}
		if (strcmp(o->addr6[s], "none")) {
			if (vnic_nl_addr_parse(o->addr6[s], AF_INET6, &sd->a6))
				return fail("--addr6-%s: '%s' is not an IPv6 address/prefix",
					    side_name[s], o->addr6[s]);
			/* Linux turns IPv6 off on a link below the IPv6 minimum MTU. */
			sd->has6 = o->topo.drv.mtu >= 1280;
			if (!sd->has6)
				fprintf(stderr,
					"vnic link: MTU %u is below IPv6's 1280: no IPv6 address\n",
					o->topo.drv.mtu);
		}
	}
	if (l->nsides == 2) {
		if (l->side[0].has4 && l->side[1].has4 &&
		    !memcmp(l->side[0].a4.addr, l->side[1].a4.addr, 4))
			return fail("address %s given to both sides",
				    vnic_nl_addr_str(&l->side[0].a4, b1, sizeof(b1)));
		if (l->side[0].has6 && l->side[1].has6 &&
		    !memcmp(l->side[0].a6.addr, l->side[1].a6.addr, 16))
			return fail("address %s given to both sides",
				    vnic_nl_addr_str(&l->side[0].a6, b1, sizeof(b1)));
	}
	return 0;
}

/* ---------------------------------------------------------------------------
 * Namespaces
 * ------------------------------------------------------------------------- */

static int addr_free(struct link_side *sd, const struct vnic_nl_addr *a)
{
	char buf[INET6_ADDRSTRLEN];
	int owner = vnic_nl_addr_owner(&sd->nl, a);

	if (owner < 0)
		return fail("reading the addresses of namespace %s: %s", sd->ns, strerror(-owner));
	if (owner > 0)
		return fail("address %s already in use in namespace %s",
			    vnic_nl_addr_str(a, buf, sizeof(buf)), sd->ns);
	return 0;
}

static int setup_ns(struct link *l, unsigned int s)
{
	struct link_side *sd = &l->side[s];
	int err;

	sd->ns = l->o->ns[s];
	if (l->o->ns_given[s]) {
		sd->ns_fd = vnic_netns_open(sd->ns);
		if (sd->ns_fd == -ENOENT)
			return fail("namespace %s does not exist (ip netns list)", sd->ns);
		if (sd->ns_fd < 0)
			return fail("namespace %s: %s", sd->ns, strerror(-sd->ns_fd));
	} else {
		err = vnic_netns_create(sd->ns);
		if (err == -EEXIST)
			return fail("namespace %s already exists: remove it (ip netns del %s) or "
				    "attach to it with --ns-a/--ns-b", sd->ns, sd->ns);
		if (err == -EINVAL)
			return fail("'%s' is not a valid namespace name", sd->ns);
		if (err)
			return fail("creating namespace %s: %s", sd->ns, strerror(-err));
		sd->ns_created = true;
		sd->ns_fd = vnic_netns_open(sd->ns);
		if (sd->ns_fd < 0)
			return fail("namespace %s: %s", sd->ns, strerror(-sd->ns_fd));
	}
	err = vnic_nl_open(&sd->nl, sd->ns_fd);
	if (err)
		return fail("rtnetlink in namespace %s: %s", sd->ns, strerror(-err));
	err = vnic_nl_link_index(&sd->nl, l->o->ifname);
	if (err > 0)
		return fail("an interface called %s already exists in namespace %s (--ifname)",
			    l->o->ifname, sd->ns);
	if (sd->has4 && addr_free(sd, &sd->a4))
		return -1;
	if (sd->has6 && addr_free(sd, &sd->a6))
		return -1;
	return 0;
}

/* ---------------------------------------------------------------------------
 * The vNICs
 * ------------------------------------------------------------------------- */

/*
 * --queues N spread: a TAP pool per queue pair, since a pool is used on one
 * cpu (the reader reads into it, xmit frees into it on the tx cpu).
 */
static int queue_pools(struct link *l, unsigned int s, uint32_t pkts)
{
	struct link_side *sd = &l->side[s];
	int err;

	for (unsigned int q = 1; q < l->spread; q++) {
		err = vnic_pkt_pool_init(&sd->qpool[q], pkts > HOST_PKTS_MIN ? pkts : HOST_PKTS_MIN,
					 l->o->topo.host_buf_size, 128);
		if (err)
			return err;
	}
	return 0;
}

/* --tx-buf map: the pool each tx queue's packets come from, mapped for it. */
static int tx_pools(struct link *l, unsigned int s)
{
	struct link_side *sd = &l->side[s];
	struct vnic_netdev *nd = vnic_drv_netdev(sd->drv);
	int err;

	if (!l->spread)
		return vnic_topo_tx_pools(nd, &sd->pool);
	for (unsigned int q = 0; q < nd->num_tx_queues; q++) {
		err = vnic_netdev_tx_pool(nd, q, q && q < l->spread ? &sd->qpool[q] : &sd->pool);
		if (err)
			return err;
	}
	return 0;
}

/*
 * --queues N: queue pair q of both vNICs on cpu q, over cable ring q, so
 * that a flow stays on one thread from TAP to TAP (docs/LINK.md). Only
 * where every piece has a queue per pair: the in-process cable (no
 * backing, --wire, --split or --pcap, which have one wire), a side per
 * thread, N cpus, and a device that grants N queues. Anything else keeps
 * both vNICs' queues on their sides' threads, and says why. N or 0.
 */
static unsigned int queue_layout(const struct link *l)
{
	const char *one_wire = NULL, *why;
	unsigned int n;

	if (l->o->backing || l->o->wire || l->o->topo.split)
		one_wire = "a backing, --wire or --split has one wire, not one per queue pair";
	else if (l->pcap_file)
		one_wire = "--pcap captures one wire, not one per queue pair";
	n = vnic_topo_queue_layout(&l->o->topo, one_wire, &why);
	if (why)
		fprintf(stderr, "vnic link: --queues %u: the queue pairs stay on the sides' threads: "
			"%s\n", l->o->topo.drv.tx_queues, why);
	return n;
}

/* The cpus of queue pairs 2 and up (0 and 1 are the sides'), as the sides' are set up. */
static int extra_cpus(struct link *l)
{
	const struct vnic_topo_config *t = &l->o->topo;
	int err;

	l->qcpu[0] = l->side[0].cpu;
	l->qcpu[1] = l->side[1].cpu;
	for (unsigned int q = SIDES; q < l->spread; q++) {
		struct vnic_cpu *c = &l->extra_cpu[l->nextra];
		const char *name = vnic_topo_queue_cpu_name(q);

		err = vnic_cpu_init(c, name, t->busy_poll_ns);
		if (err)
			return fail("cpu %s: %s", name, strerror(-err));
		l->nextra++;
		vnic_cpu_set_spin(c, t->spin);
		if (t->spinners < t->threads)
			vnic_cpu_set_spin_group(c, &l->spin_group);
		l->qcpu[q] = c;
	}
	return 0;
}

/* Side s's hv and, in this process, its device on sd->wire. */
static int build_device(struct link *l, unsigned int s)
{
	const struct vnic_topo_config *t = &l->o->topo;
	struct link_side *sd = &l->side[s];
	struct vnic_dev_config vcfg = t->dev;
	int err;

	if (t->split) {
		/* the client's half: the device is the server process's */
		err = vnic_hv_create_split_client(&sd->hv, t->hv_max_ind_descs, &t->cost,
						  VNIC_HV_SPLIT_POOL_DEFAULT);
		if (err)
			return fail("hypervisor %s (split): %s", side_name[s], strerror(-err));
		err = vnic_hv_split_attach_cpu(sd->hv, sd->cpu);
		if (err)
			return fail("hypervisor %s (split): doorbells: %s", side_name[s],
				    strerror(-err));
		return 0;
	}
	err = vnic_hv_create(&sd->hv, t->hv_max_ind_descs, &t->cost);
	if (err)
		return fail("hypervisor %s: %s", side_name[s], strerror(-err));
	/* --fault: one seed, a stream per side, as the bench's topology does */
	err = vnic_hv_set_faults(sd->hv, &t->fault, s);
	if (err)
		return fail("faults %s: %s", side_name[s], strerror(-err));
	vcfg.fault = t->fault;
	vcfg.fault.seed = t->fault.seed * 2 + s;
	if (l->spread) {
		/* queue pair q on cpu q and on cable ring q: device B's rx queue q is A's tx queue q */
		vcfg.max_tx_queues = vcfg.max_rx_queues = l->spread;
		for (unsigned int q = 0; q < l->spread; q++) {
			vcfg.queue_cpu[q] = l->qcpu[q];
			if (q)
				vcfg.queue_wire[q] = vnic_cable_queue_end(l->cable, s, q);
		}
	}
	err = vnic_dev_create(&sd->dev, sd->hv, sd->wire, sd->cpu, &vcfg);
	if (err)
		return fail("device %s: %s", side_name[s], strerror(-err));
	return 0;
}

static int build_side(struct link *l, unsigned int s)
{
	const struct vnic_topo_config *t = &l->o->topo;
	struct link_side *sd = &l->side[s];
	struct vnic_drv_config dcfg = t->drv;
	struct vnic_tap_config tcfg = {
		.ifname = sd->tmp_ifname,
		.no_vnet_hdr = l->o->no_vnet_hdr,
		.batch = l->o->tap_batch,
	};
	/* a burst each way per queue, and the superpackets --tx-buf map holds in flight */
	uint32_t pkts = dcfg.tx_queues * (2 * VNIC_TAP_DEFAULT_BATCH + VNIC_TSO_BUFS);
	unsigned int pid = (unsigned int)getpid();
	int err;

	err = build_device(l, s);
	if (err)
		return err;
	dcfg.cpu = sd->cpu;
	for (unsigned int q = 0; q < l->spread; q++)
		dcfg.queue_cpu[q] = l->qcpu[q];
	dcfg.name = s ? "vnic-b" : "vnic-a";
	if (l->split.has_mac) {
		/*
		 * A switched server assigns each port its station address, as a
		 * VIOS assigns a vNIC's, and its device filters by it: the driver,
		 * and so the TAP the kernel addresses, take it.
		 */
		memcpy(dcfg.mac, l->split.mac[s], sizeof(dcfg.mac));
	} else {
		/* Locally administered, and different per run: a backing L2 may see several. */
		dcfg.mac[0] = 0x02;
		dcfg.mac[1] = 0x76; /* 'v' */
		dcfg.mac[2] = 0x6e; /* 'n' */
		dcfg.mac[3] = (uint8_t)(pid >> 8);
		dcfg.mac[4] = (uint8_t)pid;
		dcfg.mac[5] = (uint8_t)(0x0a + s);
	}
	err = vnic_drv_create(&sd->drv, sd->hv, &dcfg);
	if (err)
		return fail("driver %s: %s", side_name[s], strerror(-err));
	err = vnic_pkt_pool_init(&sd->pool, pkts > HOST_PKTS_MIN ? pkts : HOST_PKTS_MIN,
				 t->host_buf_size, 128);
	if (err)
		return fail("packet pool %s: %s", side_name[s], strerror(-err));
	err = l->spread ? queue_pools(l, s, pkts) : 0;
	if (err)
		return fail("packet pool %s: %s", side_name[s], strerror(-err));
	/*
	 * split: the pool is this process's heap, which the server does not
	 * map; not offered, so --tx-buf map copies as the default does.
	 */
	err = t->split ? 0 : tx_pools(l, s);
	if (err)
		return fail("packet pool %s: mapping it for --tx-buf: %s", side_name[s], strerror(-err));
	snprintf(sd->tmp_ifname, sizeof(sd->tmp_ifname), "vnic%u%s", pid, side_name[s]);
	/* each TAP queue's reader on its queue's cpu, into that cpu's pool */
	for (unsigned int q = 1; q < l->spread; q++)
		tcfg.pools[q] = &sd->qpool[q];
	err = vnic_tap_create(&sd->tap, vnic_drv_netdev(sd->drv), &sd->pool, &tcfg);
	if (err == -ENOENT)
		return fail("no /dev/net/tun: load the tun module (modprobe tun)");
	if (err == -EPERM)
		return fail("needs root (CAP_NET_ADMIN) to create namespaces and TAPs");
	if (err == -EBUSY)
		return fail("an interface called %s exists already", sd->tmp_ifname);
	if (err)
		return fail("TAP %s: %s", side_name[s], strerror(-err));
	return 0;
}

/*
 * --backing-mode afxdp or auto: the AF_XDP wire on the backing, for frames
 * of mtu (the AF_PACKET wire's) cut to what a UMEM frame holds. 0 with
 * l->backing_xdp set, or 0 without for AF_PACKET (the default, or auto when
 * AF_XDP cannot be had: one line says why), or -1 when afxdp was asked for
 * and cannot be had.
 */
static int open_afxdp(struct link *l, uint32_t mtu)
{
	struct vnic_afxdp_config xcfg = {.mtu = mtu, .netns_fd = l->backing_ns_fd};
	const char *ifname = l->o->backing;
	bool must = l->o->backing_mode == VNIC_LINK_BACKING_AFXDP;
	char why[160] = "";
	int err;

	if (l->o->backing_mode == VNIC_LINK_BACKING_AFPACKET)
		return 0;
	if (xcfg.mtu > VNIC_AFXDP_MAX_MTU)
		xcfg.mtu = VNIC_AFXDP_MAX_MTU;
	if (xcfg.mtu < l->o->topo.drv.mtu) {
		if (must)
			return fail("--backing-mode afxdp: MTU %u does not fit an AF_XDP frame "
				    "(at most %u: --mtu N)", l->o->topo.drv.mtu, VNIC_AFXDP_MAX_MTU);
		fprintf(stderr, "vnic link: --backing %s: MTU %u is too large for AF_XDP (at most "
			"%u); AF_PACKET instead\n", ifname, l->o->topo.drv.mtu, VNIC_AFXDP_MAX_MTU);
		return 0;
	}
	err = vnic_afxdp_create(&l->backing, ifname, &xcfg, l->side[0].cpu);
	if (!err) {
		l->backing_xdp = true;
		/* generic XDP costs an skb a frame: say why it is not native */
		if (*vnic_afxdp_mode_note(l->backing))
			fprintf(stderr, "vnic link: --backing %s: %s\n", ifname,
				vnic_afxdp_mode_note(l->backing));
		return 0;
	}
	vnic_afxdp_last_error(why, sizeof(why));
	if (must)
		return fail("--backing %s: AF_XDP: %s%s%s", ifname, strerror(-err),
			    *why ? "; libxdp: " : "", why);
	fprintf(stderr, "vnic link: --backing %s: no AF_XDP (%s); AF_PACKET instead\n", ifname,
		strerror(-err));
	return 0;
}

/*
 * --split, --server: the server process, before anything of ours but the
 * namespaces exists (a forked one keeps only its socket). Its cable carries
 * jumbo frames whatever the MTU, as link's own does: a forked server takes
 * this configuration whole; a standing one takes the settings it is sent, in
 * which the cable's MTU is the vNIC's (so there the MTU is fixed).
 */
static int split_start(struct link *l)
{
	struct vnic_topo_config *t = &l->o->topo;
	int err;

	if (!t->split)
		return 0;
	t->cable.mtu = VNIC_DRV_MAX_MTU;
	/* vnic_split_connect says why in a line of its own */
	if (t->server_path)
		return vnic_split_connect(&l->split, t->server_path, t) ? -1 : 0;
	err = vnic_split_fork(&l->split, t);
	if (err)
		return fail("--split: starting the server process: %s", strerror(-err));
	return 0;
}

/*
 * Both sides' client hvs to the server, which then runs the devices. A
 * standing server may go away and come back: side a's cpu (the control
 * cpu) watches for it and the drivers reset and log in again, as bench's
 * do (reconnect.c). A forked one is not forked again (a fork of a process
 * whose threads run copies the locks they hold): its loss ends the run.
 */
static int split_attach(struct link *l)
{
	struct vnic_hv *hv[VNIC_TOPO_SIDES] = { l->side[0].hv, l->side[1].hv };
	const struct vnic_topo_config *t = &l->o->topo;
	int err = vnic_split_attach(&l->split, hv);

	if (err)
		return fail("%s: the server refused the attach: %s",
			    t->server_path ? "--server" : "--split",
			    strerror(-err == EAGAIN ? ETIMEDOUT : -err));
	if (!t->server_path)
		return 0;
	err = vnic_split_watch(&l->split, l->side[0].cpu, hv, t->server_path, t);
	if (err)
		return fail("--server: watching the server's socket: %s", strerror(-err));
	return 0;
}

static int build(struct link *l)
{
	const struct vnic_topo_config *t = &l->o->topo;
	int core[VNIC_TOPO_SIDES];
	char errbuf[256];
	int err;

	if (vnic_topo_pin_cores(t, core))
		return -1;
	vnic_cpu_spin_group_init(&l->spin_group, t->spinners);
	for (unsigned int s = 0; s < l->nsides; s++) {
		if (s >= t->threads) {
			l->side[s].cpu = l->side[0].cpu;
			continue;
		}
		err = vnic_cpu_init(&l->side[s].own_cpu, side_name[s], t->busy_poll_ns);
		if (err)
			return fail("cpu %s: %s", side_name[s], strerror(-err));
		vnic_cpu_set_spin(&l->side[s].own_cpu, t->spin);
		l->side[s].cpu_init = true;
		if (t->spinners < t->threads)
			vnic_cpu_set_spin_group(&l->side[s].own_cpu, &l->spin_group);
		err = vnic_cpu_pin(&l->side[s].own_cpu, core[s]);
		if (err)
			return fail("cpu %s: pinning to core %d: %s", side_name[s], core[s],
				    strerror(-err));
		l->side[s].cpu = &l->side[s].own_cpu;
	}
	l->spread = queue_layout(l);
	if (l->spread) {
		err = extra_cpus(l);
		if (err)
			return err;
	}
	if (l->o->wire) {
		/* checked when the options were read */
		if (vnic_sockwire_parse(l->o->wire, &l->wire_spec))
			return fail("--wire %s: not a socket wire", l->o->wire);
		err = vnic_sockwire_create(&l->sockwire, &l->wire_spec, t->drv.mtu,
					   l->side[0].cpu);
		if (err == -EADDRINUSE)
			return fail("--wire %s: the address is taken (another listens there)",
				    l->o->wire);
		if (err == -EADDRNOTAVAIL)
			return fail("--wire %s: a host that does not resolve (or not to one family)",
				    l->o->wire);
		if (err)
			return fail("--wire %s: %s", l->o->wire, strerror(-err));
		l->side[0].wire = l->sockwire;
	} else if (l->o->backing) {
		/*
		 * The wire carries what the interface carries, up to the vNIC's
		 * largest: `vnic set NAME mtu` can then raise the vNIC's MTU up to
		 * the backing's without a new wire (the device holds frames to
		 * the negotiated MTU itself).
		 */
		struct vnic_afpacket_config acfg = {
			.mtu = l->backing_mtu < VNIC_DRV_MAX_MTU ? l->backing_mtu : VNIC_DRV_MAX_MTU,
			.ring = l->o->backing_ring,
			.netns_fd = l->backing_ns_fd,
			.vnet_hdr = !l->o->backing_plain,
		};

		if (acfg.mtu < t->drv.mtu)
			acfg.mtu = t->drv.mtu;
		err = open_afxdp(l, acfg.mtu);
		if (err)
			return err;
		if (!l->backing_xdp)
			err = vnic_afpacket_create(&l->backing, l->o->backing, &acfg, l->side[0].cpu);
		if (err == -ENODEV)
			return fail("--backing: no interface called %s", l->o->backing);
		if (err == -EPROTONOSUPPORT || err == -EINVAL)
			return fail("--backing %s: not an Ethernet device, or a loopback; refused",
				    l->o->backing);
		if (err)
			return fail("--backing %s: %s", l->o->backing, strerror(-err));
		l->side[0].wire = l->backing;
	} else if (!t->split) {
		/*
		 * A cable that carries jumbo frames whatever the MTU now, so that
		 * `vnic set NAME mtu 9000` needs no new cable: the devices hold
		 * the frames to the negotiated MTU themselves.
		 */
		l->o->topo.cable.mtu = VNIC_DRV_MAX_MTU;
		/* --queues N spread: a ring pair per queue pair */
		l->o->topo.cable.queues = l->spread ? l->spread : 1;
		err = vnic_cable_create(&l->cable, &t->cable);
		if (err)
			return fail("cable: %s", strerror(-err));
		for (unsigned int s = 0; s < SIDES; s++)
			l->side[s].wire = vnic_cable_end(l->cable, s);
	}
	if (l->pcap_file) {
		FILE *f = l->pcap_file;

		l->pcap_file = NULL; /* the capture's from here on */
		err = vnic_pcap_open(&l->pcap, f,
				     vnic_pcap_snaplen(&l->o->pcap, l->side[0].wire->frame_size),
				     &l->o->pcap, errbuf);
		if (err)
			return fail("--pcap %s: %s", l->o->pcap.path,
				    errbuf[0] ? errbuf : strerror(-err));
		/*
		 * Two vNICs: each side's transmissions are the two directions of
		 * the cable. One: the backing wire's both directions.
		 */
		for (unsigned int s = 0; s < l->nsides; s++) {
			l->side[s].wire = vnic_pcap_wrap(l->pcap, l->side[s].wire, true,
							 l->nsides == 1);
			if (!l->side[s].wire)
				return fail("--pcap: out of memory");
		}
		err = vnic_pcap_start(l->pcap);
		if (err)
			return fail("--pcap: writer thread: %s", strerror(-err));
	}
	for (unsigned int s = 0; s < l->nsides; s++) {
		err = build_side(l, s);
		if (err)
			return err;
	}
	return t->split ? split_attach(l) : 0;
}

/* Moves each TAP into its namespace under its final name. */
static int move_taps(struct link *l)
{
	struct vnic_nl root;
	int err;

	err = vnic_nl_open(&root, -1);
	if (err)
		return fail("rtnetlink: %s", strerror(-err));
	for (unsigned int s = 0; s < l->nsides; s++) {
		struct link_side *sd = &l->side[s];
		int idx = vnic_nl_link_index(&root, vnic_tap_ifname(sd->tap));

		if (idx < 0) {
			err = fail("TAP %s: %s", vnic_tap_ifname(sd->tap), strerror(-idx));
			break;
		}
		err = vnic_nl_link_move(&root, idx, sd->ns_fd, l->o->ifname);
		if (err) {
			err = fail("moving %s into namespace %s as %s: %s",
				   vnic_tap_ifname(sd->tap), sd->ns, l->o->ifname, strerror(-err));
			break;
		}
		sd->ifindex = vnic_nl_link_index(&sd->nl, l->o->ifname);
		if (sd->ifindex < 0) {
			err = fail("%s in namespace %s: %s", l->o->ifname, sd->ns,
				   strerror(-sd->ifindex));
			break;
		}
	}
	vnic_nl_close(&root);
	return err;
}

static int start(struct link *l)
{
	int err;

	for (unsigned int s = 0; s < l->nsides; s++) {
		if (!l->side[s].cpu_init)
			continue;
		err = vnic_cpu_start(&l->side[s].own_cpu);
		if (err)
			return fail("starting cpu %s: %s", side_name[s], strerror(-err));
		l->cpus_started = true;
	}
	for (unsigned int i = 0; i < l->nextra; i++) {
		err = vnic_cpu_start(&l->extra_cpu[i]);
		if (err)
			return fail("starting cpu q%u: %s", i + SIDES, strerror(-err));
	}
	for (unsigned int s = 0; s < l->nsides; s++) {
		err = vnic_drv_open(l->side[s].drv, NULL, 0, 0);
		if (err)
			return fail("bringing up vNIC %s: %s", side_name[s], strerror(-err));
	}
	for (unsigned int s = 0; s < l->nsides; s++) {
		err = vnic_tap_start(l->side[s].tap);
		if (err)
			return fail("starting TAP %s: %s", side_name[s], strerror(-err));
	}
	/* --fault from here: a bring-up that fails on purpose carries nothing */
	for (unsigned int s = 0; s < l->nsides && l->side[s].dev; s++) {
		vnic_hv_faults_enable(l->side[s].hv, true);
		vnic_dev_faults_enable(l->side[s].dev, true);
	}
	return 0;
}

/* MTU, addresses, up: inside each namespace, on the TAP's new index. */
static int configure(struct link *l)
{
	char buf[INET6_ADDRSTRLEN];
	int err;

	for (unsigned int s = 0; s < l->nsides; s++) {
		struct link_side *sd = &l->side[s];
		uint32_t mtu = vnic_drv_netdev(sd->drv)->mtu;

		err = vnic_nl_link_set(&sd->nl, sd->ifindex, mtu, false);
		if (err)
			return fail("MTU %u on %s in %s: %s", mtu, l->o->ifname, sd->ns,
				    strerror(-err));
		for (int fam = 0; fam < 2; fam++) {
			const struct vnic_nl_addr *a = fam ? &sd->a6 : &sd->a4;

			if (!(fam ? sd->has6 : sd->has4))
				continue;
			err = vnic_nl_addr_add(&sd->nl, sd->ifindex, a);
			if (err == -EEXIST || err == -EADDRINUSE)
				return fail("address %s already in use in namespace %s",
					    vnic_nl_addr_str(a, buf, sizeof(buf)), sd->ns);
			if (err)
				return fail("address %s on %s in %s: %s",
					    vnic_nl_addr_str(a, buf, sizeof(buf)), l->o->ifname,
					    sd->ns, strerror(-err));
		}
		err = vnic_nl_link_set(&sd->nl, sd->ifindex, 0, true);
		if (err)
			return fail("%s up in %s: %s", l->o->ifname, sd->ns, strerror(-err));
		if (sd->ns_created) {
			/* Our namespace: loopback up too, as programs expect it. */
			int lo = vnic_nl_link_index(&sd->nl, "lo");

			if (lo > 0)
				vnic_nl_link_set(&sd->nl, lo, 0, true);
		}
	}
	return 0;
}

/* ---------------------------------------------------------------------------
 * The TAP's MTU, held to the vNIC's
 *
 * The vNIC's MTU is negotiated at bring-up and the driver has no
 * change-param reset (docs/ARCHITECTURE.md section 8), so a TAP whose MTU is
 * raised from inside its namespace (ip link set vnic0 mtu 9000) hands the
 * vNIC frames it can only drop (txN_drop_too_long), and the sender never
 * learns why. Link listens to each namespace's link events and puts the
 * MTU back, from its main loop.
 * ------------------------------------------------------------------------- */

static void mtu_hold(struct link *l, unsigned int s, uint32_t seen)
{
	struct link_side *sd = &l->side[s];
	uint32_t want = atomic_load_explicit(&l->mtu_target, memory_order_acquire);
	char hint[48] = "";
	int err;

	if (!seen || seen == want)
		return;
	err = vnic_nl_link_set_mtu(&sd->nl, sd->ifindex, want);
	if (err) {
		fprintf(stderr, "vnic link: %s: %s MTU set to %u from outside; putting it back to %u "
			"failed: %s\n", side_name[s], l->o->ifname, seen, want, strerror(-err));
		return;
	}
	vnic_ctr_inc(&l->mtu_restored);
	if (seen >= VNIC_DRV_MIN_MTU && seen <= VNIC_DRV_MAX_MTU)
		snprintf(hint, sizeof(hint), "; restart with --mtu %u", seen);
	fprintf(stderr, "vnic link: %s: %s MTU set to %u from outside; put back to %u (the vNIC's "
		"MTU%s)\n", side_name[s], l->o->ifname, seen, want, hint);
}

struct mtu_event {
	struct link *l;
	unsigned int s;
};

static void on_link_event(void *ctx, int ifindex, const struct vnic_nl_link *li)
{
	struct mtu_event *m = ctx;

	if (ifindex == m->l->side[m->s].ifindex)
		mtu_hold(m->l, m->s, li->mtu);
}

/* The TAP's MTU as it is now: at the start, and when the kernel dropped events. */
static void mtu_recheck(struct link *l, unsigned int s)
{
	struct link_side *sd = &l->side[s];
	struct vnic_nl_link li;

	if (!vnic_nl_link_get(&sd->nl, sd->ifindex, &li))
		mtu_hold(l, s, li.mtu);
}

static void mtu_events(struct link *l, unsigned int s)
{
	struct mtu_event m = { l, s };

	if (vnic_nl_link_events(&l->side[s].events, on_link_event, &m) == -ENOBUFS)
		mtu_recheck(l, s);
}

/*
 * `vnic set NAME mtu N`, on the control socket's thread: the TAPs follow,
 * each through a route socket of its own in its namespace (the main
 * thread's stay the main thread's), and the hold keeps them there.
 */
static int host_mtu(void *ctx, uint32_t mtu)
{
	struct link *l = ctx;
	int err = 0;

	atomic_store_explicit(&l->mtu_target, mtu, memory_order_release);
	for (unsigned int s = 0; s < l->nsides && !err; s++) {
		struct link_side *sd = &l->side[s];
		struct vnic_nl nl;

		err = vnic_nl_open(&nl, sd->ns_fd);
		if (err)
			break;
		err = vnic_nl_link_set_mtu(&nl, sd->ifindex, mtu);
		vnic_nl_close(&nl);
	}
	return err;
}

/* After configure: from here on every MTU change of a TAP is seen. */
static int watch_mtu(struct link *l)
{
	atomic_store_explicit(&l->mtu_target, vnic_drv_netdev(l->side[0].drv)->mtu,
			      memory_order_release);
	for (unsigned int s = 0; s < l->nsides; s++) {
		struct link_side *sd = &l->side[s];
		int err = vnic_nl_open_link_events(&sd->events, sd->ns_fd);

		if (err)
			return fail("link events in namespace %s: %s", sd->ns, strerror(-err));
		/* A change between configure and the subscription sent its event to nobody. */
		mtu_recheck(l, s);
	}
	return 0;
}

static void teardown(struct link *l)
{
	unsigned int s;

	vnic_ctl_serve_stop(l->ctl);
	l->ctl = NULL;
	/* before the drivers close: no reconnect races with their goodbye */
	vnic_split_watch_stop(&l->split);
	for (s = 0; s < l->nsides; s++) {
		if (l->side[s].hv)
			vnic_hv_faults_enable(l->side[s].hv, false);
		if (l->side[s].dev)
			vnic_dev_faults_enable(l->side[s].dev, false);
	}
	if (l->cpus_started) {
		for (s = 0; s < l->nsides; s++)
			if (l->side[s].tap)
				vnic_tap_stop(l->side[s].tap);
		for (s = 0; s < l->nsides; s++)
			/* every driver: one in the middle of a reset is not "open" */
			if (l->side[s].drv)
				vnic_drv_close(l->side[s].drv, NULL, 0, 0);
		for (s = 0; s < l->nsides; s++)
			if (l->side[s].cpu_init)
				vnic_cpu_stop(&l->side[s].own_cpu);
		for (s = 0; s < l->nextra; s++)
			vnic_cpu_stop(&l->extra_cpu[s]);
		l->cpus_started = false;
	}
	for (s = 0; s < l->nsides; s++) {
		struct link_side *sd = &l->side[s];

		/* Closing the TAP's fds removes the interface, in whatever namespace. */
		if (sd->tap)
			vnic_tap_destroy(sd->tap);
		if (sd->drv)
			vnic_drv_destroy(sd->drv);
	}
	/* after the drivers, which say goodbye on the CRQ; before the hvs it maps */
	if (l->split.sock >= 0)
		vnic_split_stop(&l->split);
	for (s = 0; s < l->nsides; s++) {
		struct link_side *sd = &l->side[s];

		if (sd->dev)
			vnic_dev_destroy(sd->dev);
		if (sd->hv)
			vnic_hv_destroy(sd->hv);
		if (sd->pool.count)
			vnic_pkt_pool_fini(&sd->pool);
		for (unsigned int q = 1; q < VNIC_MAX_QUEUES; q++)
			if (sd->qpool[q].count)
				vnic_pkt_pool_fini(&sd->qpool[q]);
	}
	if (l->cable)
		vnic_cable_destroy(l->cable);
	if (l->backing && l->backing_xdp)
		vnic_afxdp_destroy(l->backing);
	else if (l->backing)
		vnic_afpacket_destroy(l->backing);
	if (l->sockwire)
		vnic_sockwire_destroy(l->sockwire);
	if (l->backing_ns_fd >= 0)
		close(l->backing_ns_fd);
	vnic_pcap_close(l->pcap);
	if (l->pcap_file)
		fclose(l->pcap_file);
	for (s = 0; s < l->nsides; s++) {
		struct link_side *sd = &l->side[s];

		if (sd->cpu_init)
			vnic_cpu_fini(&sd->own_cpu);
		if (s == 0)
			for (unsigned int i = 0; i < l->nextra; i++)
				vnic_cpu_fini(&l->extra_cpu[i]);
		if (sd->nl.fd >= 0)
			vnic_nl_close(&sd->nl);
		if (sd->events.fd >= 0)
			vnic_nl_close(&sd->events);
		if (sd->ns_fd >= 0)
			close(sd->ns_fd);
		if (sd->ns_created) {
			int err = vnic_netns_delete(sd->ns);

			if (err)
				fprintf(stderr, "vnic link: removing namespace %s: %s\n", sd->ns,
					strerror(-err));
		}
	}
}

/* ---------------------------------------------------------------------------
 * Counters and the per-second summary
 * ------------------------------------------------------------------------- */

/*
 * Appends src[0..n) to out under prefix; returns the new total, which counts
 * what did not fit in max too (the caller may grow out and ask again).
 */
static unsigned int add_prefixed(struct vnic_counter *out, unsigned int max, unsigned int at,
				 const char *prefix, const struct vnic_counter *src, unsigned int n)
{
	size_t plen = strlen(prefix);

	for (unsigned int i = 0; i < n; i++, at++) {
		size_t nlen = strnlen(src[i].name, sizeof(src[i].name));

		if (at >= max)
			continue;
		/* Names are short by design; cut rather than overflow if one is not. */
		if (plen + nlen >= sizeof(out[at].name))
			nlen = sizeof(out[at].name) - plen - 1;
		memcpy(out[at].name, prefix, plen);
		memcpy(out[at].name + plen, src[i].name, nlen);
		out[at].name[plen + nlen] = '\0';
		out[at].value = src[i].value;
	}
	return at;
}

/*
 * This process's counters, prefixed by where they live ("drv_a.", "hv_a.",
 * "dev_b.", "tap_a.", "cpu_a." and with --queues N "cpu_q2." for the thread
 * of queue pair 2, "cable.ab_" and per ring pair "cable.ring1.ab_", or
 * "wire." for the backing
 * wire; "link." for link's own, "pcap." for the capture, "split." for the
 * way back to a standing server).
 */
static unsigned int local_counters(const struct link *l, struct vnic_counter *out,
				   unsigned int max, struct vnic_counter *tmp, unsigned int tmax)
{
	unsigned int at = 0, n;
	char prefix[16];

	for (unsigned int s = 0; s < l->nsides; s++) {
		const struct link_side *sd = &l->side[s];

		snprintf(prefix, sizeof(prefix), "drv_%s.", side_name[s]);
		n = vnic_drv_counters(sd->drv, tmp, tmax);
		at = add_prefixed(out, max, at, prefix, tmp, n < tmax ? n : tmax);
		snprintf(prefix, sizeof(prefix), "hv_%s.", side_name[s]);
		at = vnic_counters_hv(sd->hv, prefix, out, max, at);
		if (sd->dev) {
			snprintf(prefix, sizeof(prefix), "dev_%s.", side_name[s]);
			n = vnic_dev_counters(sd->dev, tmp, tmax);
			at = add_prefixed(out, max, at, prefix, tmp, n < tmax ? n : tmax);
		}
		snprintf(prefix, sizeof(prefix), "tap_%s.", side_name[s]);
		n = vnic_tap_counters(sd->tap, tmp, tmax);
		at = add_prefixed(out, max, at, prefix, tmp, n < tmax ? n : tmax);
	}
	for (unsigned int s = 0; s < l->nsides; s++) {
		const struct vnic_cpu *c = &l->side[s].own_cpu;

		if (!l->side[s].cpu_init)
			continue;
		n = vnic_cpu_counters(c, tmp, tmax);
		snprintf(prefix, sizeof(prefix), "cpu_%s.", side_name[s]);
		at = add_prefixed(out, max, at, prefix, tmp, n < tmax ? n : tmax);
	}
	/* --queues N: the threads of queue pairs 2 and up, by their names ("cpu_q2.") */
	for (unsigned int i = 0; i < l->nextra; i++) {
		n = vnic_cpu_counters(&l->extra_cpu[i], tmp, tmax);
		snprintf(prefix, sizeof(prefix), "cpu_%s.", l->extra_cpu[i].name);
		at = add_prefixed(out, max, at, prefix, tmp, n < tmax ? n : tmax);
	}
	n = 0;
	snprintf(tmp[n].name, sizeof(tmp[n].name), "mtu_restored");
	tmp[n++].value = vnic_ctr_read(&l->mtu_restored);
	at = add_prefixed(out, max, at, "link.", tmp, n);
	if (l->pcap) {
		n = vnic_pcap_counters(l->pcap, tmp, tmax);
		at = add_prefixed(out, max, at, "pcap.", tmp, n < tmax ? n : tmax);
	}
	if (l->sockwire) {
		n = vnic_sockwire_counters(l->sockwire, tmp, tmax);
		at = add_prefixed(out, max, at, "wire.", tmp, n < tmax ? n : tmax);
	}
	if (l->backing) {
		n = l->backing_xdp ? vnic_afxdp_counters(l->backing, tmp, tmax)
				   : vnic_afpacket_counters(l->backing, tmp, tmax);
		at = add_prefixed(out, max, at, "wire.", tmp, n < tmax ? n : tmax);
	}
	if (l->cable) {
		for (unsigned int d = 0; d < SIDES; d++) {
			struct vnic_cable_stats cs;

			vnic_cable_stats(l->cable, d, &cs);
			snprintf(prefix, sizeof(prefix), "cable.%s_", d ? "ba" : "ab");
			n = 0;
#define CS(f) snprintf(tmp[n].name, sizeof(tmp[n].name), "%s", #f), tmp[n++].value = cs.f
			CS(tx_frames);
			CS(tx_bytes);
			CS(drop_mtu);
			CS(drop_loss);
			CS(corrupted);
			CS(tx_super);
			CS(drop_super);
#undef CS
			at = add_prefixed(out, max, at, prefix, tmp, n);
		}
		/* --queues N: each ring pair's too, "cable.ring1.ab_tx_frames" */
		at = vnic_counters_cable_rings(l->cable, out, max, at);
	}
	return vnic_split_client_counters(&l->split, out, max, at);
}

/*
 * Split: the server's counters appended to out[at..max), asked for on its
 * socket: "dev_a.", "cable.ab_" as in-process, and its halves of the hvs
 * and its cpus as "srv_hv_a." and "srv_cpu_a.". None while a standing
 * server is away (the request fails at once on the closed socket).
 */
static unsigned int server_counters(const struct link *l, struct vnic_counter *out,
				    unsigned int max, unsigned int at, struct vnic_counter *tmp,
				    unsigned int tmax, uint64_t *conn)
{
	/* named already; through tmp, so that the total counts what did not fit too */
	int got = l->split.sock >= 0 ? vnic_split_counters_conn((struct vnic_split *)&l->split, tmp,
								tmax, conn)
				     : 0;

	return got > 0 ? add_prefixed(out, max, at, "", tmp, (unsigned int)got) : at;
}

/* Every counter: this process's, then (split) the server's. */
static unsigned int link_counters(const struct link *l, struct vnic_counter *out, unsigned int max,
				  struct vnic_counter *tmp, unsigned int tmax)
{
	unsigned int at = local_counters(l, out, max, tmp, tmax);
	uint64_t conn;

	return server_counters(l, out, max, at, tmp, tmax, &conn);
}

/* The control socket's collect function: on its own thread, one call at a time. */
static unsigned int link_collect(void *ctx, struct vnic_counter *out, unsigned int max)
{
	static struct vnic_counter tmp[MAX_COUNTERS];

	return link_counters(ctx, out, max, tmp, MAX_COUNTERS);
}

/* Where informational lines go: stdout is the report's alone in JSON modes. */
static FILE *info(const struct link *l)
{
	return l->o->json || l->o->interval_json ? stderr : stdout;
}

static void link_show(void *ctx, FILE *f, bool json)
{
	struct link *l = ctx;

	vnic_live_show(&l->live, f, json);
}

static int link_set(void *ctx, char *args, FILE *f)
{
	struct link *l = ctx;

	return vnic_live_set(&l->live, args, f);
}

static const struct vnic_ctl_ops link_ctl_ops = { .show = link_show, .set = link_set };

/* What `vnic show/set` reach; the control socket stops before any of it goes. */
static void live_fill(struct link *l)
{
	struct vnic_live *lv = &l->live;

	memset(lv, 0, sizeof(*lv));
	lv->cfg = &l->o->topo;
	lv->nsides = l->nsides;
	for (unsigned int s = 0; s < l->nsides; s++) {
		lv->drv[s] = l->side[s].drv;
		lv->dev[s] = l->side[s].dev;
		lv->hv[s] = l->side[s].hv;
		if (l->side[s].cpu_init)
			lv->cpu[lv->ncpus++] = &l->side[s].own_cpu;
	}
	/* --queues N spread: the threads of queue pairs 2 and up too */
	for (unsigned int i = 0; i < l->nextra && lv->ncpus < VNIC_MAX_QUEUES; i++)
		lv->cpu[lv->ncpus++] = &l->extra_cpu[i];
	lv->cable = l->cable;
	/* --server: the standing server's cable is sized to the MTU at the start */
	lv->mtu_live = !l->o->topo.server_path;
	/* A TAP's queues are its fds, opened at the start. */
	lv->queues_live = false;
	lv->why_fixed = l->o->topo.server_path
				? "a TAP's queues are opened at the start, and the standing server's "
				  "cable is sized to the MTU"
				: "a TAP's queues are opened at the start";
	lv->host_mtu = host_mtu;
	lv->host_ctx = l;
}

static void ctl_start(struct link *l)
{
	char name[VNIC_CTL_NAME_MAX];
	int err;

	live_fill(l);
	if (!l->o->ctl)
		return;
	if (l->o->ctl_name)
		snprintf(name, sizeof(name), "%s", l->o->ctl_name);
	else
		vnic_ctl_default_name(name, sizeof(name), "link");
	err = vnic_ctl_serve_start(&l->ctl, name, link_collect, &link_ctl_ops, l);
	/* The link is worth having without its counters socket: say so and go on. */
	if (err == -EADDRINUSE)
		fprintf(stderr, "vnic link: an instance named '%s' is running: no control socket\n",
			name);
	else if (err)
		fprintf(stderr, "vnic link: no control socket (%s)\n", strerror(-err));
	else
		fprintf(info(l), "vnic link: counters: vnic stats %s\n", name);
}

/* What crossed the wire each way, and every drop of every layer so far. */
struct totals {
	uint64_t frames[SIDES];	/* [0] a to b (or a to the backing wire), [1] back */
	uint64_t bytes[SIDES];
	uint64_t drops;
};

static bool is_drop(const char *name)
{
	/*
	 * Reason counters ("_drop_<reason>", "drop_mtu") and the ring's
	 * "kernel_drops"; not a cable ring's own, which its sums count already.
	 */
	if (!strncmp(name, "cable.ring", 10))
		return false;
	return strstr(name, "drop_") || strstr(name, "_drops");
}

/*
 * The server's share of the totals across its restarts (main thread): a
 * standing server that comes back counts from zero again, and while it is
 * away there is nothing to read. What the server before had counted at its
 * last reading is kept in base when another answers, so the totals and the
 * interval lines go on where they were; what it counted after that reading
 * (under a second's worth) is lost with it.
 */
struct srv_carry {
	struct totals base;	/* the servers before this one */
	struct totals last;	/* this one's last reading */
	uint64_t conn;		/* which one that is (vnic_split_counters_conn) */
};

static void totals_add(struct totals *t, const struct vnic_counter *all, unsigned int n)
{
	for (unsigned int i = 0; i < n && i < MAX_COUNTERS; i++) {
		const char *nm = all[i].name;
		uint64_t v = all[i].value;

		if (is_drop(nm))
			t->drops += v;
		if (!strcmp(nm, "cable.ab_tx_frames") || !strcmp(nm, "wire.tx_frames"))
			t->frames[0] += v;
		else if (!strcmp(nm, "cable.ab_tx_bytes") || !strcmp(nm, "wire.tx_bytes"))
			t->bytes[0] += v;
		else if (!strcmp(nm, "cable.ba_tx_frames") || !strcmp(nm, "wire.rx_frames"))
			t->frames[1] += v;
		else if (!strcmp(nm, "cable.ba_tx_bytes") || !strcmp(nm, "wire.rx_bytes"))
			t->bytes[1] += v;
	}
}

static void totals_plus(struct totals *t, const struct totals *a)
{
	for (unsigned int d = 0; d < SIDES; d++) {
		t->frames[d] += a->frames[d];
		t->bytes[d] += a->bytes[d];
	}
	t->drops += a->drops;
}

static void read_totals(const struct link *l, struct vnic_counter *all, struct vnic_counter *tmp,
			struct totals *t, struct srv_carry *c)
{
	unsigned int n = local_counters(l, all, MAX_COUNTERS, tmp, MAX_COUNTERS);
	uint64_t conn = 0;

	memset(t, 0, sizeof(*t));
	totals_add(t, all, n);
	if (!l->o->topo.split)
		return;
	n = server_counters(l, all, MAX_COUNTERS, 0, tmp, MAX_COUNTERS, &conn);
	/* an answer (none while a standing server is away: its last reading stands) */
	if (n) {
		if (conn != c->conn) {
			totals_plus(&c->base, &c->last);
			c->conn = conn;
		}
		memset(&c->last, 0, sizeof(c->last));
		totals_add(&c->last, all, n);
	}
	totals_plus(t, &c->base);
	totals_plus(t, &c->last);
}

static const char *dir_name(const struct link *l, unsigned int d)
{
	static const char *const two[SIDES] = { "a_to_b", "b_to_a" };
	static const char *const one[SIDES] = { "out", "in" };

	return l->nsides == 2 ? two[d] : one[d];
}

/* A human's interval line, on stderr. */
static void print_rate(const struct link *l, double t_s, const struct totals *cur,
		       const struct totals *prev, double dt)
{
	const char *dir[SIDES] = { l->nsides == 2 ? "a>b" : "out", l->nsides == 2 ? "b>a" : "in" };

	fprintf(stderr, "[%6.1f s]", t_s);
	for (unsigned int d = 0; d < SIDES; d++)
		fprintf(stderr, " %s %9.1f kpkt/s %7.3f Gbit/s ", dir[d],
			(cur->frames[d] - prev->frames[d]) / dt / 1e3,
			(cur->bytes[d] - prev->bytes[d]) * 8 / dt / 1e9);
	fprintf(stderr, " drops %" PRIu64 "\n", cur->drops - prev->drops);
}

/* The same interval as one JSON line on stdout (--interval-json). */
static void json_rate(const struct link *l, double t_s, const struct totals *cur,
		      const struct totals *prev, double dt)
{
	struct vnic_json j;

	vnic_json_begin_line(&j, stdout);
	vnic_json_str(&j, "type", "interval");
	vnic_json_double(&j, "t_s", t_s);
	vnic_json_double(&j, "dt_s", dt);
	for (unsigned int d = 0; d < SIDES; d++) {
		vnic_json_object(&j, dir_name(l, d));
		vnic_json_u64(&j, "frames", cur->frames[d] - prev->frames[d]);
		vnic_json_u64(&j, "bytes", cur->bytes[d] - prev->bytes[d]);
		vnic_json_double(&j, "kpps", (cur->frames[d] - prev->frames[d]) / dt / 1e3);
		vnic_json_double(&j, "gbps", (cur->bytes[d] - prev->bytes[d]) * 8 / dt / 1e9);
		vnic_json_close(&j);
	}
	vnic_json_u64(&j, "drops", cur->drops - prev->drops);
	vnic_json_end(&j);
}

static const char *mac_str(const uint8_t mac[6], char buf[18])
{
	snprintf(buf, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
	return buf;
}

/*
 * The profile in force, with the options it put first on the command line
 * ("latency: --queues 2 --busy-poll-us 50"; an option given beside it
 * overrides its own), or "none".
 */
static void print_profile(const struct link *l, FILE *f)
{
	const struct link_profile *pr = l->o->profile ? profile_find(l->o->profile) : NULL;

	if (!pr) {
		fputs("vnic link: profile none\n", f);
		return;
	}
	fprintf(f, "vnic link: profile %s:", pr->name);
	for (const char *const *a = pr->args; *a; a++)
		fprintf(f, " %s", *a);
	fprintf(f, "%s\n", profile_cable_tso(pr, l->o) ? " --cable-tso" : "");
}

static void print_ready(const struct link *l)
{
	char b4[INET6_ADDRSTRLEN], b6[INET6_ADDRSTRLEN], m[SIDES][18];
	FILE *f = info(l);

	for (unsigned int s = 0; s < l->nsides; s++) {
		const struct link_side *sd = &l->side[s];

		fprintf(f, "vnic link: %s: namespace %s%s, %s (ifindex %d), MTU %u, MAC %s, "
			"%u queue(s), %s/%u %s/%u\n",
			side_name[s], sd->ns, sd->ns_created ? " (created)" : "", l->o->ifname,
			sd->ifindex, vnic_drv_netdev(sd->drv)->mtu,
			mac_str(vnic_drv_netdev(sd->drv)->mac, m[s]),
			vnic_drv_netdev(sd->drv)->num_tx_queues,
			sd->has4 ? vnic_nl_addr_str(&sd->a4, b4, sizeof(b4)) : "-",
			sd->has4 ? sd->a4.prefix : 0,
			sd->has6 ? vnic_nl_addr_str(&sd->a6, b6, sizeof(b6)) : "-",
			sd->has6 ? sd->a6.prefix : 0);
	}
	if (l->backing && l->backing_xdp)
		fprintf(f, "vnic link: the device is backed by %s%s%s (AF_XDP, %s, MTU frames)\n",
			l->o->backing, l->o->backing_ns ? " in namespace " : "",
			l->o->backing_ns ? l->o->backing_ns : "", vnic_afxdp_mode_name(l->backing));
	else if (l->backing)
		fprintf(f, "vnic link: the device is backed by %s%s%s (AF_PACKET, TPACKET_%s, %s)\n",
			l->o->backing, l->o->backing_ns ? " in namespace " : "",
			l->o->backing_ns ? l->o->backing_ns : "",
			l->o->backing_ring == VNIC_AFPACKET_RING_V2 ? "V2" : "V3",
			l->o->backing_plain ? "MTU frames" : "superframes with a vnet header");
	if (l->sockwire) {
		int port = vnic_sockwire_local_port(l->sockwire);

		fprintf(f, "vnic link: the device's wire is %s", l->o->wire);
		if (port > 0)
			fprintf(f, " (local port %d)", port);
		fputc('\n', f);
	}
	if (l->split.has_mac)
		fprintf(f, "vnic link: the devices run in the standing server at %s, on its switch "
			"(MACs %s, %s)\n", l->o->topo.server_path, mac_str(l->split.mac[0], m[0]),
			mac_str(l->split.mac[1], m[1]));
	else if (l->o->topo.server_path)
		fprintf(f, "vnic link: the devices and the cable run in the standing server at %s\n",
			l->o->topo.server_path);
	else if (l->o->topo.split)
		fprintf(f, "vnic link: the devices and the cable run in server process %d\n",
			(int)l->split.pid);
	if (l->pcap) {
		fprintf(f, "vnic link: capturing the wire to %s", l->o->pcap.path);
		if (l->o->pcap.snaplen)
			fprintf(f, ", %u bytes of each frame", l->o->pcap.snaplen);
		if (l->o->pcap.count)
			fprintf(f, ", %" PRIu64 " frames", l->o->pcap.count);
		fprintf(f, "%s\n", l->o->pcap.lossless ? ", lossless (the link waits for the disk)" : "");
	}
	print_profile(l, f);
	fprintf(f, "vnic link: up; stop with Ctrl-C (SIGINT), SIGTERM or SIGHUP\n");
	fflush(f);
}

static void report_text(const struct link *l, double secs, const struct totals *cur,
			const struct vnic_counter *all, unsigned int n)
{
	if (l->pcap) {
		struct vnic_pcap_stats ps;

		vnic_pcap_stats(l->pcap, &ps);
		printf("vnic link: pcap: %" PRIu64 " frames so far, %" PRIu64
		       " left out (capture ring full)", ps.written, ps.left_out);
		if (l->o->pcap.lossless)
			printf("; the link waited for the writer %" PRIu64 " times, %.3f s", ps.waits,
			       ps.wait_ns / 1e9);
		putchar('\n');
	}
	printf("vnic link: %.1f s; %s %" PRIu64 " frames %" PRIu64 " bytes, %s %" PRIu64
	       " frames %" PRIu64 " bytes; drops %" PRIu64 "\n",
	       secs, l->nsides == 2 ? "a>b" : "out", cur->frames[0], cur->bytes[0],
	       l->nsides == 2 ? "b>a" : "in", cur->frames[1], cur->bytes[1], cur->drops);
	/* Every drop by its reason, whatever its layer. */
	for (unsigned int i = 0; i < n && i < MAX_COUNTERS; i++)
		if (all[i].value && is_drop(all[i].name))
			printf("    %-40s %12" PRIu64 "\n", all[i].name, all[i].value);
}

static void report_json(const struct link *l, double secs, const struct totals *cur,
			const struct vnic_counter *all, unsigned int n)
{
	char buf[INET6_ADDRSTRLEN], mac[18];
	struct vnic_json j;
	struct vnic_kv kv[16];
	unsigned int np = vnic_topo_policies(&l->o->topo, kv, 16);

	vnic_json_begin(&j, stdout);
	vnic_json_str(&j, "type", "report");
	vnic_json_double(&j, "duration_s", secs);
	vnic_json_array(&j, "sides");
	for (unsigned int s = 0; s < l->nsides; s++) {
		const struct link_side *sd = &l->side[s];

		vnic_json_object(&j, NULL);
		vnic_json_str(&j, "side", side_name[s]);
		vnic_json_str(&j, "namespace", sd->ns);
		vnic_json_bool(&j, "created", sd->ns_created);
		vnic_json_str(&j, "ifname", l->o->ifname);
		vnic_json_u64(&j, "mtu", vnic_drv_netdev(sd->drv)->mtu);
		/* the vNIC's station address, which the TAP takes too */
		vnic_json_str(&j, "mac", mac_str(vnic_drv_netdev(sd->drv)->mac, mac));
		vnic_json_u64(&j, "queues", vnic_drv_netdev(sd->drv)->num_tx_queues);
		if (sd->has4)
			vnic_json_str(&j, "addr4", vnic_nl_addr_str(&sd->a4, buf, sizeof(buf)));
		if (sd->has6)
			vnic_json_str(&j, "addr6", vnic_nl_addr_str(&sd->a6, buf, sizeof(buf)));
		vnic_json_close(&j);
	}
	vnic_json_array_close(&j);
	if (l->backing) {
		vnic_json_str(&j, "backing", l->o->backing);
		if (l->o->backing_ns)
			vnic_json_str(&j, "backing_ns", l->o->backing_ns);
		vnic_json_str(&j, "backing_mode", l->backing_xdp ? "afxdp" : "afpacket");
		if (l->backing_xdp) {
			vnic_json_str(&j, "backing_xdp", vnic_afxdp_mode_name(l->backing));
		} else {
			vnic_json_str(&j, "backing_ring",
				      vnic_afpacket_ring_name(l->o->backing_ring));
			vnic_json_str(&j, "backing_offload", l->o->backing_plain ? "off" : "on");
		}
	}
	if (l->sockwire)
		vnic_json_str(&j, "wire", l->o->wire);
	vnic_json_bool(&j, "split", l->o->topo.split);
	if (l->o->topo.server_path)
		vnic_json_str(&j, "server", l->o->topo.server_path);
	vnic_json_str(&j, "profile", l->o->profile ? l->o->profile : "none");
	vnic_json_object(&j, "policies");
	for (unsigned int i = 0; i < np && i < 16; i++)
		vnic_json_str(&j, kv[i].key, kv[i].value);
	vnic_json_close(&j);
	for (unsigned int d = 0; d < SIDES; d++) {
		vnic_json_object(&j, dir_name(l, d));
		vnic_json_u64(&j, "frames", cur->frames[d]);
		vnic_json_u64(&j, "bytes", cur->bytes[d]);
		vnic_json_close(&j);
	}
	vnic_json_u64(&j, "drops", cur->drops);
	if (l->pcap) {
		struct vnic_pcap_stats ps;

		vnic_pcap_stats(l->pcap, &ps);
		vnic_json_object(&j, "pcap");
		vnic_json_str(&j, "file", l->o->pcap.path);
		vnic_json_u64(&j, "written", ps.written);
		vnic_json_u64(&j, "left_out", ps.left_out);
		vnic_json_close(&j);
	}
	vnic_json_object(&j, "counters");
	for (unsigned int i = 0; i < n && i < MAX_COUNTERS; i++)
		vnic_json_u64(&j, all[i].name, all[i].value);
	vnic_json_close(&j);
	vnic_json_end(&j);
}

/*
 * Whether the reader of a piped stdout went away: a quiet link writes
 * nothing there for hours, so it would never see EPIPE on its own.
 */
static bool stdout_gone(void)
{
	struct pollfd p = { .fd = STDOUT_FILENO, .events = 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

/*
 * --split: the forked server's end of the socket closed (it exited or was
 * killed). Only the peer's close is looked at: an answer to the control
 * socket's thread may be arriving at any time, and it is that thread's to
 * read. (--server: the watch on cpu a sees it and the link reconnects.)
 */
static bool server_gone(struct link *l, const struct pollfd *p)
{
	if (!(p->revents & (POLLRDHUP | POLLHUP | POLLERR)))
		return false;
	l->server_gone = true;
	fprintf(stderr, "vnic link: the server process is gone (its socket closed): stopping\n");
	return true;
}

/* What the main thread last said of a standing server's comings and goings. */
struct srv_seen {
	uint64_t lost, reconnects, down_ns;
};

static uint64_t counter_in(const struct vnic_counter *c, unsigned int n, const char *name)
{
	const struct vnic_counter *e = vnic_counter_find(c, n, name);

	return e ? e->value : 0;
}

/*
 * --server: a line on stderr when the server goes and when the link is on
 * one again, as a driver logs its resets (the reconnect thread counts them,
 * this thread says them, up to 0.1 s later).
 */
static void say_server(const struct link *l, struct srv_seen *seen)
{
	struct vnic_counter c[8];
	unsigned int n = vnic_split_client_counters(&l->split, c, 8, 0);
	uint64_t lost = counter_in(c, n, "split.lost");
	uint64_t back = counter_in(c, n, "split.reconnects");
	uint64_t down = counter_in(c, n, "split.down_ns");

	if (lost != seen->lost)
		fprintf(stderr, "vnic link: the server at %s went away: the vNICs reset; connecting "
			"again for up to %.3g s\n", l->o->topo.server_path,
			(double)l->o->topo.reconnect_timeout_ns / 1e9);
	if (back != seen->reconnects)
		fprintf(stderr, "vnic link: on the server at %s again after %.3f s; the vNICs log in "
			"again\n", l->o->topo.server_path, (double)(down - seen->down_ns) / 1e9);
	*seen = (struct srv_seen){ lost, back, down };
}

/* --server: the server went away and was not back within --reconnect-timeout (said). */
static bool server_gave_up(struct link *l)
{
	if (!l->o->topo.server_path || !vnic_split_gave_up(&l->split))
		return false;
	l->server_gone = true;
	return true;
}

/*
 * Sleeps until a signal arrives on sfd or the server is gone (true) or
 * timeout_ns has passed (false), handling the TAPs' link events meanwhile.
 */
static bool wait_events(struct link *l, int sfd, uint64_t timeout_ns)
{
	struct pollfd p[2 + SIDES];
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / 1000000000u),
		.tv_nsec = (long)(timeout_ns % 1000000000u),
	};
	struct signalfd_siginfo si;
	int n;

	p[0] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	for (unsigned int s = 0; s < l->nsides; s++)
		p[1 + s] = (struct pollfd){ .fd = l->side[s].events.fd, .events = POLLIN };
	/* left out by poll when negative: not split, or a standing server's (watched on cpu a) */
	p[1 + l->nsides] = (struct pollfd){
		.fd = l->o->topo.server_path ? -1 : l->split.sock,
		.events = POLLRDHUP,
	};
	n = ppoll(p, 2 + l->nsides, &ts, NULL);
	if (n <= 0)
		return false;
	for (unsigned int s = 0; s < l->nsides; s++)
		if (p[1 + s].revents)
			mtu_events(l, s);
	if (server_gone(l, &p[1 + l->nsides]))
		return true;
	return p[0].revents && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si);
}

/*
 * Runs until a signal on sfd (SIGPIPE among them: stdout closed by a reader
 * that went away), or the duration; an interval line every second, and the
 * TAPs' MTU held meanwhile.
 */
static void run(struct link *l, int sfd)
{
	static struct vnic_counter all[MAX_COUNTERS], tmp[MAX_COUNTERS];
	uint64_t start = vnic_now_ns(), t_prev = start;
	uint64_t end = l->o->duration_s ? start + (uint64_t)(l->o->duration_s * 1e9) : UINT64_MAX;
	bool stopped = false;
	struct srv_carry carry = { 0 };
	struct srv_seen seen = { 0 };
	struct totals prev, cur;
	unsigned int n;
	uint64_t now;

	read_totals(l, all, tmp, &prev, &carry);
	for (;;) {
		uint64_t next = t_prev + 1000000000u;
		uint64_t wake = next < end ? next : end;

		now = vnic_now_ns();
		if (now >= end)
			break;
		/* --server: the reconnect's give-up is looked at every 0.1 s, as bench does */
		if (l->o->topo.server_path && wake > now + (uint64_t)GIVE_UP_POLL_NS)
			wake = now + (uint64_t)GIVE_UP_POLL_NS;
		if (wake > now && wait_events(l, sfd, wake - now)) {
			stopped = true;
			now = vnic_now_ns();
			break;
		}
		if (l->o->topo.server_path)
			say_server(l, &seen);
		if (server_gave_up(l)) {
			stopped = true;
			now = vnic_now_ns();
			break;
		}
		now = vnic_now_ns();
		if (now < next)
			continue;
		if (stdout_gone()) {
			stopped = true;
			break;
		}
		read_totals(l, all, tmp, &cur, &carry);
		if (!l->o->quiet)
			print_rate(l, (now - start) / 1e9, &cur, &prev, (now - t_prev) / 1e9);
		if (l->o->interval_json)
			json_rate(l, (now - start) / 1e9, &cur, &prev, (now - t_prev) / 1e9);
		prev = cur;
		t_prev = now;
	}
	read_totals(l, all, tmp, &cur, &carry);
	/* The last part of a second, as bench reports it; not after a signal cut it short. */
	if (!stopped && now > t_prev + 1000000u) {
		if (!l->o->quiet)
			print_rate(l, (now - start) / 1e9, &cur, &prev, (now - t_prev) / 1e9);
		if (l->o->interval_json)
			json_rate(l, (now - start) / 1e9, &cur, &prev, (now - t_prev) / 1e9);
	}
	n = link_counters(l, all, MAX_COUNTERS, tmp, MAX_COUNTERS);
	if (l->o->json)
		report_json(l, (now - start) / 1e9, &cur, all, n);
	else
		report_text(l, (now - start) / 1e9, &cur, all, n);
}

/* A link type that is not Ethernet, in words a user recognises. */
static const char *link_type_name(uint16_t type)
{
	switch (type) {
	case ARPHRD_NONE:
		return "no link layer: a TUN or another L3 device";
	case ARPHRD_TUNNEL:
		return "an IPv4-in-IPv4 tunnel (ipip)";
	case ARPHRD_TUNNEL6:
		return "an IP-in-IPv6 tunnel (ip6tnl)";
	case ARPHRD_SIT:
		return "an IPv6-in-IPv4 tunnel (sit)";
	case ARPHRD_IPGRE:
		return "a GRE tunnel";
	case ARPHRD_PPP:
		return "PPP";
	case ARPHRD_INFINIBAND:
		return "InfiniBand";
	case ARPHRD_IEEE80211_RADIOTAP:
		return "a wireless monitor";
	default:
		return "not Ethernet";
	}
}

/*
 * Checks a backing interface before anything is built: an Ethernet device
 * that is not loopback (docs/LINK.md, "What a backing exposes, and to
 * whom"), up, and carrying our MTU; without --mtu, the vNIC takes its MTU.
 * With --backing-ns the interface is looked up in that namespace, whose fd
 * stays open for the wire to be made there.
 */
static int check_backing(struct link *l)
{
	struct vnic_link_opts *o = l->o;
	struct vnic_nl_link li = { 0 };
	const char *where = "";
	char in_ns[96] = "";
	struct vnic_nl root;
	int idx, err;

	if (o->backing_ns) {
		l->backing_ns_fd = vnic_netns_open(o->backing_ns);
		if (l->backing_ns_fd < 0)
			return fail("--backing-ns %s: %s", o->backing_ns,
				    l->backing_ns_fd == -ENOENT ? "no such namespace (ip netns list)"
								: strerror(-l->backing_ns_fd));
		snprintf(in_ns, sizeof(in_ns), " in namespace %s", o->backing_ns);
		where = in_ns;
	}
	err = vnic_nl_open(&root, l->backing_ns_fd);
	if (err)
		return fail("rtnetlink: %s", strerror(-err));
	idx = vnic_nl_link_index(&root, o->backing);
	err = idx > 0 ? vnic_nl_link_get(&root, idx, &li) : idx;
	vnic_nl_close(&root);
	if (idx <= 0 || err == -ENODEV)
		return fail("--backing: no interface called %s%s", o->backing, where);
	if (err)
		return fail("--backing %s: %s", o->backing, strerror(-err));
	if ((li.flags & IFF_LOOPBACK) || li.type == ARPHRD_LOOPBACK)
		return fail("--backing %s: a loopback device, which carries the host's own traffic; "
			    "refused (use a dedicated veth, macvlan or VLAN)", o->backing);
	if (li.type != ARPHRD_ETHER)
		return fail("--backing %s: not an Ethernet device (link type %u, %s); refused: "
			    "the wire carries Ethernet frames", o->backing, li.type,
			    link_type_name(li.type));
	if (!(li.flags & IFF_UP))
		return fail("--backing: %s%s is down (ip link set %s up)", o->backing, where,
			    o->backing);
	if (!o->mtu_given) {
		uint32_t mtu = li.mtu < VNIC_DRV_MAX_MTU ? li.mtu : VNIC_DRV_MAX_MTU;

		if (mtu < VNIC_DRV_MIN_MTU)
			return fail("--backing %s: its MTU %u is below the vNIC's smallest, %u",
				    o->backing, li.mtu, VNIC_DRV_MIN_MTU);
		if (mtu != o->topo.drv.mtu)
			fprintf(stderr, "vnic link: MTU %u, %s's%s (--mtu N to choose)\n", mtu,
				o->backing, li.mtu > mtu ? ", at most the vNIC's" : "");
		o->topo.drv.mtu = mtu;
	} else if (li.mtu < o->topo.drv.mtu) {
		return fail("--mtu %u is larger than %s's MTU %u", o->topo.drv.mtu, o->backing,
			    li.mtu);
	}
	l->backing_mtu = li.mtu;
	return 0;
}

/*
 * The output file, opened before anything is built: a directory, a missing
 * folder or no permission is one line now, not a teardown later.
 */
static int open_outputs(struct link *l)
{
	if (!l->o->pcap.path)
		return 0;
	if (!vnic_pcap_supported())
		return fail("--pcap: vnic was built without libpcap (apt-get install libpcap-dev, "
			    "rebuild)");
	l->pcap_file = vnic_out_open_mode("vnic link", "--pcap", l->o->pcap.path, true);
	return l->pcap_file ? 0 : -1;
}

int vnic_cmd_link(int argc, char **argv)
{
	struct link *l = calloc(1, sizeof(*l));
	sigset_t set, old;
	int err, ret = 1, sfd = -1;

	if (!l) {
		fail("out of memory");
		return 1;
	}
	err = vnic_link_parse(argc, argv, &l->opts);
	if (err) {
		free(l);
		return err > 0 ? 0 : 2;
	}
	l->o = &l->opts;
	l->nsides = l->o->backing || l->o->wire ? 1 : SIDES;
	l->backing_ns_fd = -1;
	l->split.sock = -1;
	for (unsigned int s = 0; s < SIDES; s++) {
		l->side[s].ns_fd = -1;
		l->side[s].nl.fd = -1;
		l->side[s].events.fd = -1;
	}
	if (split_refused(l->o) || preflight() || (l->o->backing && check_backing(l)) || parse_addrs(l) ||
	    open_outputs(l)) {
		if (l->backing_ns_fd >= 0)
			close(l->backing_ns_fd);
		free(l);
		return 1;
	}
	/*
	 * Blocked before any thread exists, so every thread inherits the mask
	 * and only the signalfd read in run() takes them: a Ctrl-C during set-up
	 * waits there and ends the run at once, through the same teardown.
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	/*
	 * A reader of stdout that goes away (vnic link | head -1) is one more
	 * reason to stop: blocked, the write fails with EPIPE and the pending
	 * SIGPIPE ends the run through the same teardown.
	 */
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The main loop waits on the TAPs' link events too: signals come as an fd. */
	sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		fail("signalfd: %s", strerror(errno));
		goto out;
	}

	for (unsigned int s = 0; s < l->nsides; s++)
		if (setup_ns(l, s))
			goto out;
	if (split_start(l) || build(l) || move_taps(l) || start(l) || configure(l) || watch_mtu(l))
		goto out;
	print_ready(l);
	ctl_start(l);
	run(l, sfd);
	/* a run whose devices went away with their process did not end as asked */
	ret = l->server_gone ? 1 : 0;
out:
	teardown(l);
	free(l);
	if (sfd >= 0)
		close(sfd);
	/* What came after the first signal (a second Ctrl-C, EPIPE of the report) has been served. */
	{
		struct timespec zero = { 0, 0 };

		while (sigtimedwait(&set, NULL, &zero) > 0)
			;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}
