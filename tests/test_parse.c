// SPDX-License-Identifier: MIT
/*
 * Parser tests: golden frames with every field of struct vnic_hdrs checked,
 * a numbered table of malformed frames each rejected for its own reason,
 * boundary cases that must be accepted, and sweeps (every truncation of every
 * golden frame, random mutations, odd alignments) run on exactly sized heap
 * copies so that ASan reports any read past the end.
 *
 * The golden frames were hand-assembled from the RFC field layouts (Ethernet
 * II, 802.1Q, RFC 826, 791, 8200, 9293, 768, 792, 4443) by a throwaway Python
 * script using struct.pack, not by scapy; the scapy expression in each
 * comment describes the same frame for a reader who thinks in scapy.
 * Checksums are valid (RFC 1071), though the parser does not look at them.
 * Addresses: MACs 02:00:00:00:00:01 -> :02, IPv4 192.0.2.1 -> 192.0.2.2
 * (RFC 5737), IPv6 2001:db8::1 -> 2001:db8::2 (RFC 3849).
 * The same frames are the corpus in fuzz/corpus/parse/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "net/net.h"
#include "support.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

enum { ETH = VNIC_ETH_HLEN };

/*
 * ARP request "who has 192.0.2.2, tell 192.0.2.1" (RFC 826, htype 1,
 * ptype 0x0800, hlen 6, plen 4, op 1), broadcast, zero-padded to the 60-byte
 * Ethernet minimum: 18 bytes of trailer.
 * scapy: Ether(dst="ff:ff:ff:ff:ff:ff", src=S)/ARP(op=1, hwsrc=S, psrc="192.0.2.1",
 *        pdst="192.0.2.2")/Padding(load=b"\0" * 18)
 */
static const uint8_t arp_req[] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x02, 0x00,
	0x00, 0x00, 0x00, 0x01, 0xc0, 0x00, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0xc0, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/*
 * IPv4/TCP SYN as Linux sends it: options MSS 1460, SACK permitted,
 * timestamps (TSval 0x01020304, TSecr 0), NOP, window scale 7: 20 bytes of
 * options, data offset 10. DF set, no payload.
 * scapy: Ether()/IP(flags="DF", id=0x1234)/TCP(sport=40000, dport=80,
 *        seq=0x11223344, flags="S", window=64240, options=[("MSS", 1460),
 *        ("SAckOK", b""), ("Timestamp", (0x01020304, 0)), ("NOP", None), ("WScale", 7)])
 */
static const uint8_t ip4_tcp_syn[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x3c, 0x12, 0x34, 0x40, 0x00, 0x40, 0x06,
	0xa4, 0x84, 0xc0, 0x00, 0x02, 0x01, 0xc0, 0x00, 0x02, 0x02, 0x9c, 0x40,
	0x00, 0x50, 0x11, 0x22, 0x33, 0x44, 0x00, 0x00, 0x00, 0x00, 0xa0, 0x02,
	0xfa, 0xf0, 0xe4, 0x0e, 0x00, 0x00, 0x02, 0x04, 0x05, 0xb4, 0x04, 0x02,
	0x08, 0x0a, 0x01, 0x02, 0x03, 0x04, 0x00, 0x00, 0x00, 0x00, 0x01, 0x03,
	0x03, 0x07,
};

/*
 * IPv4 with the Router Alert option (RFC 2113: 0x94 0x04 0x00 0x00, IHL 6)
 * carrying an IGMPv2 membership report for 224.0.0.251. IGMP (protocol 2) is
 * not parsed: the parse succeeds with no L4 header and 8 bytes of payload.
 * scapy: Ether()/IP(ttl=1, proto=2, options=[IPOption_Router_Alert()])/
 *        (b"\x16\x00" + csum + inet_aton("224.0.0.251"))
 */
static const uint8_t ip4_ra_igmp[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x46, 0x00, 0x00, 0x20, 0x12, 0x34, 0x00, 0x00, 0x01, 0x02,
	0x8e, 0xa0, 0xc0, 0x00, 0x02, 0x01, 0xc0, 0x00, 0x02, 0x02, 0x94, 0x04,
	0x00, 0x00, 0x16, 0x00, 0x09, 0x04, 0xe0, 0x00, 0x00, 0xfb,
};

/*
 * First fragment (MF set, offset 0, id 0xabcd) of a UDP datagram
 * 5000 -> 6000 with 40 data bytes (UDP length 48): this fragment carries the
 * UDP header and 16 data bytes.
 * scapy: fragment(Ether()/IP(id=0xabcd)/UDP(sport=5000, dport=6000)/data, 24)[0]
 */
static const uint8_t ip4_frag_first[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x2c, 0xab, 0xcd, 0x20, 0x00, 0x40, 0x11,
	0x2a, 0xf0, 0xc0, 0x00, 0x02, 0x01, 0xc0, 0x00, 0x02, 0x02, 0x13, 0x88,
	0x17, 0x70, 0x00, 0x30, 0xb9, 0xe7, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46,
	0x47, 0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f, 0x50,
};

/*
 * The second and last fragment of the same datagram: offset 3 (24 bytes),
 * MF clear, the remaining 24 data bytes; no L4 header.
 * scapy: the [1] of the fragment() call above
 */
static const uint8_t ip4_frag_second[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x2c, 0xab, 0xcd, 0x00, 0x03, 0x40, 0x11,
	0x4a, 0xed, 0xc0, 0x00, 0x02, 0x01, 0xc0, 0x00, 0x02, 0x02, 0x51, 0x52,
	0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5a, 0x5b, 0x5c, 0x5d, 0x5e,
	0x5f, 0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68,
};

/*
 * IPv4/UDP 33333 -> 53, DF, 21 payload bytes "vnic-udp-test-payload".
 * scapy: Ether()/IP(flags="DF")/UDP(sport=33333, dport=53)/b"vnic-udp-test-payload"
 */
static const uint8_t ip4_udp[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x31, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11,
	0xa4, 0x84, 0xc0, 0x00, 0x02, 0x01, 0xc0, 0x00, 0x02, 0x02, 0x82, 0x35,
	0x00, 0x35, 0x00, 0x1d, 0xc3, 0x49, 0x76, 0x6e, 0x69, 0x63, 0x2d, 0x75,
	0x64, 0x70, 0x2d, 0x74, 0x65, 0x73, 0x74, 0x2d, 0x70, 0x61, 0x79, 0x6c,
	0x6f, 0x61, 0x64,
};

/*
 * IPv4/ICMP echo request id 0x4242 seq 1 with 8 data bytes "pingpong".
 * scapy: Ether()/IP(flags="DF")/ICMP(type=8, id=0x4242, seq=1)/b"pingpong"
 */
static const uint8_t ip4_icmp_echo[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x24, 0x12, 0x34, 0x40, 0x00, 0x40, 0x01,
	0xa4, 0xa1, 0xc0, 0x00, 0x02, 0x01, 0xc0, 0x00, 0x02, 0x02, 0x08, 0x00,
	0xf8, 0x14, 0x42, 0x42, 0x00, 0x01, 0x70, 0x69, 0x6e, 0x67, 0x70, 0x6f,
	0x6e, 0x67,
};

/*
 * 802.1Q tag PCP 3 VID 100 (TCI 0x6064), then IPv4/UDP 1234 -> 5678 "vlan".
 * scapy: Ether()/Dot1Q(prio=3, vlan=100)/IP()/UDP(sport=1234, dport=5678)/b"vlan"
 */
static const uint8_t vlan_ip4_udp[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x81, 0x00, 0x60, 0x64, 0x08, 0x00, 0x45, 0x00, 0x00, 0x20, 0x12, 0x34,
	0x00, 0x00, 0x40, 0x11, 0xe4, 0x95, 0xc0, 0x00, 0x02, 0x01, 0xc0, 0x00,
	0x02, 0x02, 0x04, 0xd2, 0x16, 0x2e, 0x00, 0x0c, 0x88, 0xf7, 0x76, 0x6c,
	0x61, 0x6e,
};

/*
 * QinQ: 802.1ad outer tag VID 10, 802.1Q inner tag VID 20, then
 * IPv4/TCP PSH|ACK 22 -> 50000 with 4 payload bytes "qinq".
 * scapy: Ether(type=0x88a8)/Dot1AD(vlan=10)/Dot1Q(vlan=20)/IP(flags="DF")/
 *        TCP(sport=22, dport=50000, seq=1000, ack=2000, flags="PA", window=501)/b"qinq"
 */
static const uint8_t qinq_ip4_tcp[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x88, 0xa8, 0x00, 0x0a, 0x81, 0x00, 0x00, 0x14, 0x08, 0x00, 0x45, 0x00,
	0x00, 0x2c, 0x12, 0x34, 0x40, 0x00, 0x40, 0x06, 0xa4, 0x94, 0xc0, 0x00,
	0x02, 0x01, 0xc0, 0x00, 0x02, 0x02, 0x00, 0x16, 0xc3, 0x50, 0x00, 0x00,
	0x03, 0xe8, 0x00, 0x00, 0x07, 0xd0, 0x50, 0x18, 0x01, 0xf5, 0x7a, 0xd6,
	0x00, 0x00, 0x71, 0x69, 0x6e, 0x71,
};

/*
 * IPv6/TCP ACK 443 -> 51000 with NOP, NOP, timestamps (data offset 8) and
 * 2 payload bytes "v6".
 * scapy: Ether()/IPv6(src="2001:db8::1", dst="2001:db8::2")/TCP(sport=443,
 *        dport=51000, seq=5000, ack=6000, flags="A", window=1024,
 *        options=[("NOP", None), ("NOP", None), ("Timestamp", (100, 200))])/b"v6"
 */
static const uint8_t ip6_tcp[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x86, 0xdd, 0x60, 0x00, 0x00, 0x00, 0x00, 0x22, 0x06, 0x40, 0x20, 0x01,
	0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x01, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x01, 0xbb, 0xc7, 0x38, 0x00, 0x00,
	0x13, 0x88, 0x00, 0x00, 0x17, 0x70, 0x80, 0x10, 0x04, 0x00, 0xab, 0xf8,
	0x00, 0x00, 0x01, 0x01, 0x08, 0x0a, 0x00, 0x00, 0x00, 0x64, 0x00, 0x00,
	0x00, 0xc8, 0x76, 0x36,
};

/*
 * IPv6 first fragment with the full RFC 8200 4.1 chain: hop-by-hop
 * (Router Alert + PadN, 8 bytes), destination options (PadN, 8), routing
 * type 2 (24, home address 2001:db8::99), fragment (offset 0, M, id
 * 0xdeadbeef), then UDP 7000 -> 8000 whose length (48) covers the whole
 * datagram; this fragment carries 16 of its 40 data bytes.
 * scapy: Ether()/IPv6()/IPv6ExtHdrHopByHop(options=[RouterAlert(), PadN()])/
 *        IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\0" * 4)])/
 *        IPv6ExtHdrRouting(type=2, segleft=1, addresses=["2001:db8::99"])/
 *        IPv6ExtHdrFragment(m=1, id=0xdeadbeef, nh=17)/bytes(UDP()/data)[:24]
 */
static const uint8_t ip6_ext_frag_udp[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x86, 0xdd, 0x60, 0x00, 0x00, 0x00, 0x00, 0x48, 0x00, 0x40, 0x20, 0x01,
	0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x01, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x3c, 0x00, 0x05, 0x02, 0x00, 0x00,
	0x01, 0x00, 0x2b, 0x00, 0x01, 0x04, 0x00, 0x00, 0x00, 0x00, 0x2c, 0x02,
	0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x99, 0x11, 0x00,
	0x00, 0x01, 0xde, 0xad, 0xbe, 0xef, 0x1b, 0x58, 0x1f, 0x40, 0x00, 0x30,
	0x4f, 0xbd, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6a,
	0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70,
};

/*
 * IPv6 non-first fragment of the datagram above (only the fragment
 * header, offset 3, M clear, then 24 data bytes): no L4 header.
 * scapy: Ether()/IPv6()/IPv6ExtHdrFragment(offset=3, m=0, id=0xdeadbeef, nh=17)/
 *        bytes(UDP()/data)[24:]
 */
static const uint8_t ip6_frag_second[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x86, 0xdd, 0x60, 0x00, 0x00, 0x00, 0x00, 0x20, 0x2c, 0x40, 0x20, 0x01,
	0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x01, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x11, 0x00, 0x00, 0x18, 0xde, 0xad,
	0xbe, 0xef, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a,
	0x7b, 0x7c, 0x7d, 0x7e, 0x7f, 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86,
	0x87, 0x88,
};

/*
 * IPv6/ICMPv6 echo request id 0x0606 seq 7, 8 data bytes "echo6v6!".
 * scapy: Ether()/IPv6()/ICMPv6EchoRequest(id=0x0606, seq=7, data=b"echo6v6!")
 */
static const uint8_t ip6_icmp6_echo[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x86, 0xdd, 0x60, 0x00, 0x00, 0x00, 0x00, 0x10, 0x3a, 0x40, 0x20, 0x01,
	0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x01, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x80, 0x00, 0xe3, 0xc8, 0x06, 0x06,
	0x00, 0x07, 0x65, 0x63, 0x68, 0x6f, 0x36, 0x76, 0x36, 0x21,
};

/*
 * A 40-byte IPv4/TCP pure ACK in a 60-byte Ethernet frame: 6 bytes of
 * zero padding are trailer, not TCP payload.
 * scapy: Ether()/IP(flags="DF")/TCP(sport=80, dport=40000, seq=0x11223345,
 *        ack=0x55667788, flags="A", window=502)/Padding(load=b"\0" * 6)
 */
static const uint8_t ip4_tcp_padded[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x28, 0x12, 0x34, 0x40, 0x00, 0x40, 0x06,
	0xa4, 0x98, 0xc0, 0x00, 0x02, 0x01, 0xc0, 0x00, 0x02, 0x02, 0x00, 0x50,
	0x9c, 0x40, 0x11, 0x22, 0x33, 0x45, 0x55, 0x66, 0x77, 0x88, 0x50, 0x10,
	0x01, 0xf6, 0x7b, 0xf4, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/*
 * Unknown ethertype 0x88cc (LLDP: chassis ID and port ID TLVs, TTL 120,
 * end TLV): accepted, everything after the Ethernet header is payload.
 * scapy: Ether(dst="01:80:c2:00:00:0e", type=0x88cc)/raw_tlvs
 */
static const uint8_t lldp[] = {
	0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x88, 0xcc, 0x02, 0x07, 0x04, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x04,
	0x02, 0x07, 0x31, 0x06, 0x02, 0x00, 0x78, 0x00, 0x00,
};

/*
 * IPv6 with a destination options header whose next header is 59 (No
 * Next Header, RFC 8200 4.7), followed by 8 bytes that must be ignored.
 * scapy: Ether()/IPv6(nh=60)/IPv6ExtHdrDestOpt(nh=59, options=[PadN(optdata=b"\0" * 4)])/
 *        b"ignored!"
 */
static const uint8_t ip6_nonext[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x86, 0xdd, 0x60, 0x00, 0x00, 0x00, 0x00, 0x10, 0x3c, 0x40, 0x20, 0x01,
	0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x01, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x3b, 0x00, 0x01, 0x04, 0x00, 0x00,
	0x00, 0x00, 0x69, 0x67, 0x6e, 0x6f, 0x72, 0x65, 0x64, 0x21,
};

/*
 * IPv6 with nine stacked 8-byte destination options headers, the last
 * one pointing at No Next Header: one more than VNIC_IP6_MAX_EXT. Used by
 * the malformed table (and, with the eighth header patched to 59, by the
 * accepted table).
 * scapy: Ether()/IPv6()/IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\0" * 4)]) * 9,
 *        nh of the last = 59
 */
static const uint8_t ip6_nine_dstopts[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x86, 0xdd, 0x60, 0x00, 0x00, 0x00, 0x00, 0x48, 0x3c, 0x40, 0x20, 0x01,
	0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x01, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x3c, 0x00, 0x01, 0x04, 0x00, 0x00,
	0x00, 0x00, 0x3c, 0x00, 0x01, 0x04, 0x00, 0x00, 0x00, 0x00, 0x3c, 0x00,
	0x01, 0x04, 0x00, 0x00, 0x00, 0x00, 0x3c, 0x00, 0x01, 0x04, 0x00, 0x00,
	0x00, 0x00, 0x3c, 0x00, 0x01, 0x04, 0x00, 0x00, 0x00, 0x00, 0x3c, 0x00,
	0x01, 0x04, 0x00, 0x00, 0x00, 0x00, 0x3c, 0x00, 0x01, 0x04, 0x00, 0x00,
	0x00, 0x00, 0x3c, 0x00, 0x01, 0x04, 0x00, 0x00, 0x00, 0x00, 0x3b, 0x00,
	0x01, 0x04, 0x00, 0x00, 0x00, 0x00,
};

/* ---------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------- */

/* An exactly sized heap copy: ASan flags a read of even one byte past len. */
static uint8_t *exact_copy(const uint8_t *src, uint32_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	assert_non_null(p);
	memcpy(p, src, len);
	return p;
}

/*
 * What must hold for any accepted frame, whatever its content: the layers
 * follow each other, nothing points past the end, and the byte accounting
 * (payload + trailer reaches the end of the frame) is exact.
 */
static void check_invariants(const struct vnic_hdrs *h, uint32_t len)
{
	assert_true(h->nvlan <= VNIC_MAX_VLANS);
	assert_int_equal(h->l2_len, ETH + VNIC_VLAN_HLEN * h->nvlan);
	assert_int_equal(h->l3_off, h->l2_len);
	assert_true((uint32_t)h->l3_off + h->l3_len <= len);
	assert_int_equal(h->l4_off, h->l3_off + h->l3_len);
	assert_true((uint64_t)h->l4_off + h->l3_payload_len <= len);
	assert_true((uint64_t)h->l4_off + h->l4_len <= len);
	assert_int_equal(h->payload_off, h->l4_off + h->l4_len);
	assert_int_equal((uint64_t)h->payload_off + h->payload_len + h->trailer_len, len);
	if (h->flags & VNIC_HDRS_F_L4)
		assert_true(h->l4_len >= 8);
	else
		assert_int_equal(h->l4_len, 0);
	if (h->flags & VNIC_HDRS_F_FRAG_FIRST)
		assert_true(h->flags & VNIC_HDRS_F_FRAG);
	if ((h->flags & VNIC_HDRS_F_FRAG) && !(h->flags & VNIC_HDRS_F_FRAG_FIRST))
		assert_false(h->flags & VNIC_HDRS_F_L4);
	if (h->frag_off)
		assert_true(h->flags & VNIC_HDRS_F_FRAG);
}

/* Reports which frame and which field differ, which a bare assert would not. */
#define EXPECT_EQ(name, field, got, want) do { \
	long long got_ = (long long)(got), want_ = (long long)(want); \
	if (got_ != want_) \
		fail_msg("%s: %s = %lld, want %lld", name, field, got_, want_); \
} while (0)
#define EXPECT_FIELD(name, f, got, want) EXPECT_EQ(name, #f, (got)->f, (want)->f)

static void check_hdrs(const char *name, const struct vnic_hdrs *want, const struct vnic_hdrs *got)
{
	EXPECT_FIELD(name, l2_len, got, want);
	EXPECT_FIELD(name, l3_proto, got, want);
	EXPECT_FIELD(name, nvlan, got, want);
	EXPECT_FIELD(name, vlan_proto[0], got, want);
	EXPECT_FIELD(name, vlan_proto[1], got, want);
	EXPECT_FIELD(name, vlan_tci[0], got, want);
	EXPECT_FIELD(name, vlan_tci[1], got, want);
	EXPECT_FIELD(name, l3_off, got, want);
	EXPECT_FIELD(name, l3_len, got, want);
	EXPECT_FIELD(name, l3_payload_len, got, want);
	EXPECT_FIELD(name, l4_proto, got, want);
	EXPECT_FIELD(name, l4_off, got, want);
	EXPECT_FIELD(name, l4_len, got, want);
	EXPECT_FIELD(name, payload_off, got, want);
	EXPECT_FIELD(name, payload_len, got, want);
	EXPECT_FIELD(name, trailer_len, got, want);
	EXPECT_FIELD(name, flags, got, want);
	EXPECT_FIELD(name, frag_off, got, want);
}

/* ---------------------------------------------------------------------------
 * Golden frames: expected values derived by hand from the layouts above
 * ------------------------------------------------------------------------- */

struct golden {
	const char *name;
	const uint8_t *frame;
	uint32_t len;
	struct vnic_hdrs want;
};

#define GOLDEN(f, ...) { #f, f, sizeof(f), { __VA_ARGS__ } }

enum {
	F_OPT4 = VNIC_HDRS_F_IP4_OPTS,
	F_FRAG = VNIC_HDRS_F_FRAG,
	F_FIRST = VNIC_HDRS_F_FRAG_FIRST,
	F_DF = VNIC_HDRS_F_IP4_DF,
	F_EXT6 = VNIC_HDRS_F_IP6_EXT,
	F_TOPT = VNIC_HDRS_F_TCP_OPTS,
	F_L4 = VNIC_HDRS_F_L4,
};

static const struct golden goldens[] = {
	GOLDEN(arp_req, .l2_len = ETH, .l3_proto = VNIC_ETH_P_ARP, .l3_off = ETH, .l3_len = 28,
	       .l4_off = ETH + 28, .payload_off = ETH + 28, .trailer_len = 60 - ETH - 28),
	GOLDEN(ip4_tcp_syn, .l2_len = ETH, .l3_proto = VNIC_ETH_P_IP, .l3_off = ETH, .l3_len = 20,
	       .l3_payload_len = 40, .l4_proto = VNIC_IPPROTO_TCP, .l4_off = ETH + 20,
	       .l4_len = 40, .payload_off = ETH + 20 + 40, .flags = F_DF | F_TOPT | F_L4),
	GOLDEN(ip4_ra_igmp, .l2_len = ETH, .l3_proto = VNIC_ETH_P_IP, .l3_off = ETH, .l3_len = 24,
	       .l3_payload_len = 8, .l4_proto = 2, .l4_off = ETH + 24, .payload_off = ETH + 24,
	       .payload_len = 8, .flags = F_OPT4),
	GOLDEN(ip4_frag_first, .l2_len = ETH, .l3_proto = VNIC_ETH_P_IP, .l3_off = ETH,
	       .l3_len = 20, .l3_payload_len = 24, .l4_proto = VNIC_IPPROTO_UDP,
	       .l4_off = ETH + 20, .l4_len = 8, .payload_off = ETH + 28, .payload_len = 16,
	       .flags = F_FRAG | F_FIRST | F_L4),
	GOLDEN(ip4_frag_second, .l2_len = ETH, .l3_proto = VNIC_ETH_P_IP, .l3_off = ETH,
	       .l3_len = 20, .l3_payload_len = 24, .l4_proto = VNIC_IPPROTO_UDP,
	       .l4_off = ETH + 20, .payload_off = ETH + 20, .payload_len = 24, .flags = F_FRAG,
	       .frag_off = 3),
	GOLDEN(ip4_udp, .l2_len = ETH, .l3_proto = VNIC_ETH_P_IP, .l3_off = ETH, .l3_len = 20,
	       .l3_payload_len = 8 + 21, .l4_proto = VNIC_IPPROTO_UDP, .l4_off = ETH + 20,
	       .l4_len = 8, .payload_off = ETH + 28, .payload_len = 21, .flags = F_DF | F_L4),
	GOLDEN(ip4_icmp_echo, .l2_len = ETH, .l3_proto = VNIC_ETH_P_IP, .l3_off = ETH, .l3_len = 20,
	       .l3_payload_len = 16, .l4_proto = VNIC_IPPROTO_ICMP, .l4_off = ETH + 20,
	       .l4_len = 8, .payload_off = ETH + 28, .payload_len = 8, .flags = F_DF | F_L4),
	GOLDEN(vlan_ip4_udp, .l2_len = ETH + 4, .l3_proto = VNIC_ETH_P_IP, .nvlan = 1,
	       .vlan_proto = { VNIC_ETH_P_8021Q }, .vlan_tci = { 3 << 13 | 100 },
	       .l3_off = ETH + 4, .l3_len = 20, .l3_payload_len = 12,
	       .l4_proto = VNIC_IPPROTO_UDP, .l4_off = ETH + 4 + 20, .l4_len = 8,
	       .payload_off = ETH + 4 + 28, .payload_len = 4, .flags = F_L4),
	GOLDEN(qinq_ip4_tcp, .l2_len = ETH + 8, .l3_proto = VNIC_ETH_P_IP, .nvlan = 2,
	       .vlan_proto = { VNIC_ETH_P_8021AD, VNIC_ETH_P_8021Q }, .vlan_tci = { 10, 20 },
	       .l3_off = ETH + 8, .l3_len = 20, .l3_payload_len = 24,
	       .l4_proto = VNIC_IPPROTO_TCP, .l4_off = ETH + 8 + 20, .l4_len = 20,
	       .payload_off = ETH + 8 + 40, .payload_len = 4, .flags = F_DF | F_L4),
	GOLDEN(ip6_tcp, .l2_len = ETH, .l3_proto = VNIC_ETH_P_IPV6, .l3_off = ETH, .l3_len = 40,
	       .l3_payload_len = 32 + 2, .l4_proto = VNIC_IPPROTO_TCP, .l4_off = ETH + 40,
	       .l4_len = 32, .payload_off = ETH + 40 + 32, .payload_len = 2,
	       .flags = F_TOPT | F_L4),
	GOLDEN(ip6_ext_frag_udp, .l2_len = ETH, .l3_proto = VNIC_ETH_P_IPV6, .l3_off = ETH,
	       .l3_len = 40 + 8 + 8 + 24 + 8, .l3_payload_len = 24,
	       .l4_proto = VNIC_IPPROTO_UDP, .l4_off = ETH + 88, .l4_len = 8,
	       .payload_off = ETH + 96, .payload_len = 16,
	       .flags = F_EXT6 | F_FRAG | F_FIRST | F_L4),
	GOLDEN(ip6_frag_second, .l2_len = ETH, .l3_proto = VNIC_ETH_P_IPV6, .l3_off = ETH,
	       .l3_len = 40 + 8, .l3_payload_len = 24, .l4_proto = VNIC_IPPROTO_UDP,
	       .l4_off = ETH + 48, .payload_off = ETH + 48, .payload_len = 24,
	       .flags = F_EXT6 | F_FRAG, .frag_off = 3),
	GOLDEN(ip6_icmp6_echo, .l2_len = ETH, .l3_proto = VNIC_ETH_P_IPV6, .l3_off = ETH,
	       .l3_len = 40, .l3_payload_len = 16, .l4_proto = VNIC_IPPROTO_ICMPV6,
	       .l4_off = ETH + 40, .l4_len = 8, .payload_off = ETH + 48, .payload_len = 8,
	       .flags = F_L4),
	GOLDEN(ip4_tcp_padded, .l2_len = ETH, .l3_proto = VNIC_ETH_P_IP, .l3_off = ETH,
	       .l3_len = 20, .l3_payload_len = 20, .l4_proto = VNIC_IPPROTO_TCP,
	       .l4_off = ETH + 20, .l4_len = 20, .payload_off = ETH + 40, .trailer_len = 6,
	       .flags = F_DF | F_L4),
	GOLDEN(lldp, .l2_len = ETH, .l3_proto = 0x88cc, .l3_off = ETH, .l4_off = ETH,
	       .payload_off = ETH, .payload_len = 33 - ETH),
	GOLDEN(ip6_nonext, .l2_len = ETH, .l3_proto = VNIC_ETH_P_IPV6, .l3_off = ETH,
	       .l3_len = 48, .l3_payload_len = 8, .l4_proto = VNIC_IPPROTO_NONE,
	       .l4_off = ETH + 48, .payload_off = ETH + 48, .payload_len = 8, .flags = F_EXT6),
};

static void test_golden_frames(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(goldens); i++) {
		const struct golden *g = &goldens[i];
		uint8_t *f = exact_copy(g->frame, g->len);
		struct vnic_hdrs h;

		assert_int_equal(vnic_parse_frame(f, g->len, &h), VNIC_PARSE_OK);
		check_hdrs(g->name, &g->want, &h);
		check_invariants(&h, g->len);
		free(f);
	}
}

/* Fields are read byte by byte: any alignment must give the same answer (UBSan checks). */
static void test_golden_unaligned(void **state)
{
	static uint8_t buf[256 + 8];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(goldens); i++) {
		const struct golden *g = &goldens[i];

		for (unsigned int shift = 1; shift < 8; shift++) {
			struct vnic_hdrs h;

			assert_true(g->len + shift <= sizeof(buf));
			memcpy(buf + shift, g->frame, g->len);
			assert_int_equal(vnic_parse_frame(buf + shift, g->len, &h), VNIC_PARSE_OK);
			check_hdrs(g->name, &g->want, &h);
		}
	}
}

/*
 * Every truncation of every golden frame. Cutting into the L2/L3/L4 headers
 * or the IP packet must fail; cutting only into the trailer must still parse,
 * with a shorter trailer. Frames of an unknown ethertype are all payload, so
 * any cut past the Ethernet header is still fine for them.
 */
static void test_golden_truncations(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(goldens); i++) {
		const struct golden *g = &goldens[i];
		uint32_t need = g->len - g->want.trailer_len;
		bool known = g->want.l3_proto == VNIC_ETH_P_IP ||
			     g->want.l3_proto == VNIC_ETH_P_IPV6 ||
			     g->want.l3_proto == VNIC_ETH_P_ARP;

		if (!known)
			need = g->want.l3_off;
		for (uint32_t cut = 0; cut < g->len; cut++) {
			uint8_t *f = exact_copy(g->frame, cut);
			struct vnic_hdrs h;
			enum vnic_parse_err err = vnic_parse_frame(f, cut, &h);

			if (cut < need) {
				if (err == VNIC_PARSE_OK)
					fail_msg("%s cut at %u accepted", g->name, cut);
				assert_true(err > VNIC_PARSE_OK && err < VNIC_PARSE_ERR_MAX);
				assert_int_not_equal(err, VNIC_PARSE_L3_UNKNOWN);
			} else {
				assert_int_equal(err, VNIC_PARSE_OK);
				check_invariants(&h, cut);
				if (known)
					assert_int_equal(h.trailer_len,
							 g->want.trailer_len - (g->len - cut));
			}
			free(f);
		}
	}
}

/* ---------------------------------------------------------------------------
 * Malformed frames: a golden frame with some bytes changed and/or cut short
 * ------------------------------------------------------------------------- */

struct patch {
	uint16_t off;
	uint8_t val;
	bool used;
};

struct frame_case {
	const char *name;
	const uint8_t *base;
	uint32_t base_len;
	uint32_t len;		/* bytes kept from the start */
	struct patch patch[4];
	enum vnic_parse_err want;
};

#define P(o, v) { (o), (v), true }
/* A case keeping the whole base frame, and one cut to len bytes. */
#define BAD(n, b, w, ...) { n, b, sizeof(b), sizeof(b), { __VA_ARGS__ }, VNIC_PARSE_##w }
#define BADCUT(n, b, l, w, ...) { n, b, sizeof(b), l, { __VA_ARGS__ }, VNIC_PARSE_##w }

/*
 * Offsets used below: IPv4 at 14 (version/IHL 14, total length 16-17, flags
 * and offset 20-21, protocol 23, options from 34), so TCP/UDP/ICMP at 34
 * (TCP data offset at 46, options from 54; UDP length 38-39). IPv6 at 14
 * (payload length 18-19, next header 20), L4 at 54. ip6_ext_frag_udp: hop-by-hop
 * 54, destination options 62, routing 70, fragment 94 (offset/M 96-97), UDP 102.
 */
static const struct frame_case bad_cases[] = {
	/* 1 */ BADCUT("eth_empty", arp_req, 0, ETH_TRUNC),
	/* 2 */ BADCUT("eth_13_bytes", arp_req, 13, ETH_TRUNC),
	/* 3 */ BADCUT("vlan_tpid_then_nothing", vlan_ip4_udp, 14, VLAN_TRUNC),
	/* 4 */ BADCUT("vlan_half_tag", vlan_ip4_udp, 16, VLAN_TRUNC),
	/* 5 */ BADCUT("qinq_inner_tag_cut", qinq_ip4_tcp, 20, VLAN_TRUNC),
	/* 6 */ BAD("three_tags", qinq_ip4_tcp, VLAN_TOO_MANY, P(20, 0x81), P(21, 0x00)),
	/* 7 */ BADCUT("vlan_then_no_ip4", vlan_ip4_udp, 18, IP4_TRUNC),
	/* 8 */ BADCUT("arp_no_body", arp_req, 14, ARP_TRUNC),
	/* 9 */ BADCUT("arp_fixed_part_cut", arp_req, 14 + 7, ARP_TRUNC),
	/* 10 */ BADCUT("arp_addresses_cut", arp_req, 14 + 27, ARP_TRUNC),
	/* 11 */ BAD("arp_htype_6", arp_req, ARP_BAD, P(15, 6)),
	/* 12 */ BAD("arp_ptype_ipv6", arp_req, ARP_BAD, P(16, 0x86), P(17, 0xdd)),
	/* 13 */ BAD("arp_hlen_8", arp_req, ARP_BAD, P(18, 8)),
	/* 14 */ BAD("arp_plen_16", arp_req, ARP_BAD, P(19, 16)),
	/* 15 */ BADCUT("ip4_no_header", ip4_udp, 14, IP4_TRUNC),
	/* 16 */ BADCUT("ip4_19_bytes", ip4_udp, 14 + 19, IP4_TRUNC),
	/* 17 */ BAD("ip4_version_6", ip4_udp, IP4_BAD_VERSION, P(14, 0x65)),
	/* 18 */ BAD("ip4_version_0", ip4_udp, IP4_BAD_VERSION, P(14, 0x05)),
	/* 19 */ BAD("ip4_ihl_4", ip4_udp, IP4_BAD_IHL, P(14, 0x44)),
	/* 20 */ BAD("ip4_ihl_0", ip4_udp, IP4_BAD_IHL, P(14, 0x40)),
	/* 21 */ BAD("ip4_ihl_past_frame", ip4_udp, IP4_BAD_IHL, P(14, 0x4f)),
	/* 22 */ BAD("ip4_totlen_19", ip4_udp, IP4_BAD_TOTLEN, P(16, 0), P(17, 19)),
	/* 23 */ BAD("ip4_totlen_0", ip4_udp, IP4_BAD_TOTLEN, P(16, 0), P(17, 0)),
	/* 24 */ BADCUT("ip4_totlen_past_frame", ip4_udp, sizeof(ip4_udp) - 1, IP4_BAD_TOTLEN),
	/* 25 */ BAD("ip4_totlen_below_ihl_6", ip4_ra_igmp, IP4_BAD_TOTLEN, P(16, 0), P(17, 23)),
	/* 26 */ BAD("ip4_option_len_0", ip4_ra_igmp, IP4_BAD_OPTION, P(35, 0)),
	/* 27 */ BAD("ip4_option_len_1", ip4_ra_igmp, IP4_BAD_OPTION, P(35, 1)),
	/* 28 */ BAD("ip4_option_past_header", ip4_ra_igmp, IP4_BAD_OPTION, P(35, 5)),
	/* 29 */ BAD("ip4_option_kind_without_len", ip4_ra_igmp, IP4_BAD_OPTION,
		     P(34, 1), P(35, 1), P(36, 1), P(37, 0x44)),
	/* 30 */ BADCUT("tcp_no_header", ip4_tcp_syn, 34, TCP_TRUNC, P(16, 0), P(17, 20)),
	/* 31 */ BADCUT("tcp_19_bytes", ip4_tcp_syn, 34 + 19, TCP_TRUNC, P(16, 0), P(17, 39)),
	/* 32 */ BAD("tcp_doff_4", ip4_tcp_padded, TCP_BAD_DOFF, P(46, 0x40)),
	/* 33 */ BAD("tcp_doff_0", ip4_tcp_padded, TCP_BAD_DOFF, P(46, 0x00)),
	/* 34 */ BAD("tcp_doff_into_padding", ip4_tcp_padded, TCP_BAD_DOFF, P(46, 0x60)),
	/* 35 */ BAD("tcp_option_len_0", ip4_tcp_syn, TCP_BAD_OPTION, P(55, 0)),
	/* 36 */ BAD("tcp_option_len_1", ip4_tcp_syn, TCP_BAD_OPTION, P(55, 1)),
	/* 37 */ BAD("tcp_option_past_header", ip4_tcp_syn, TCP_BAD_OPTION, P(72, 4)),
	/* 38 */ BAD("tcp_option_kind_without_len", ip4_tcp_syn, TCP_BAD_OPTION,
		     P(70, 1), P(71, 1), P(72, 1), P(73, 3)),
	/* 39 */ BADCUT("udp_no_header", ip4_udp, 34, UDP_TRUNC, P(16, 0), P(17, 20)),
	/* 40 */ BADCUT("udp_7_bytes", ip4_udp, 34 + 7, UDP_TRUNC, P(16, 0), P(17, 27)),
	/* 41 */ BAD("udp_len_7", ip4_udp, UDP_BAD_LEN, P(38, 0), P(39, 7)),
	/* 42 */ BAD("udp_len_0", ip4_udp, UDP_BAD_LEN, P(38, 0), P(39, 0)),
	/* 43 */ BAD("udp_len_past_l3", ip4_udp, UDP_BAD_LEN, P(38, 0), P(39, 30)),
	/* 44 */ BAD("udp_first_frag_len_short", ip4_frag_first, UDP_BAD_LEN, P(38, 0), P(39, 16)),
	/* 45 */ BADCUT("icmp_no_header", ip4_icmp_echo, 34, ICMP_TRUNC, P(16, 0), P(17, 20)),
	/* 46 */ BADCUT("icmp_7_bytes", ip4_icmp_echo, 34 + 7, ICMP_TRUNC, P(16, 0), P(17, 27)),
	/* 47: RFC 1858 tiny fragment: a first fragment too short for its TCP header */
	/* 47 */ BADCUT("ip4_first_frag_tiny_tcp", ip4_frag_first, 34 + 8, TCP_TRUNC,
		        P(17, 28), P(23, VNIC_IPPROTO_TCP)),
	/* 48 */ BADCUT("ip6_no_header", ip6_tcp, 14, IP6_TRUNC),
	/* 49 */ BADCUT("ip6_39_bytes", ip6_tcp, 14 + 39, IP6_TRUNC),
	/* 50 */ BAD("ip6_version_4", ip6_tcp, IP6_BAD_VERSION, P(14, 0x40)),
	/* 51 */ BAD("ip6_jumbo_paylen_0", ip6_tcp, IP6_BAD_PAYLEN, P(18, 0), P(19, 0)),
	/* 52 */ BADCUT("ip6_paylen_past_frame", ip6_tcp, sizeof(ip6_tcp) - 1, IP6_BAD_PAYLEN),
	/* 53 */ BADCUT("ip6_hbh_cut", ip6_ext_frag_udp, 54 + 4, IP6_EXT_TRUNC, P(18, 0), P(19, 4)),
	/* 54 */ BAD("ip6_routing_len_past_packet", ip6_ext_frag_udp, IP6_EXT_TRUNC, P(71, 200)),
	/* 55 */ BADCUT("ip6_frag_hdr_cut", ip6_frag_second, 54 + 7, IP6_EXT_TRUNC,
			P(18, 0), P(19, 7)),
	/* 56 */ BAD("ip6_hbh_after_dstopts", ip6_ext_frag_udp, IP6_EXT_CHAIN, P(62, 0)),
	/* 57 */ BAD("ip6_nine_ext_headers", ip6_nine_dstopts, IP6_EXT_CHAIN),
	/* 58 */ BAD("ip6_two_frag_headers", ip6_ext_frag_udp, IP6_BAD_FRAG, P(94, 44)),
	/* 59 */ BADCUT("ip6_frag_m_not_8_aligned", ip6_ext_frag_udp, sizeof(ip6_ext_frag_udp) - 1,
			IP6_BAD_FRAG, P(19, 0x47)),
	/* 60 */ BAD("ip6_frag_end_past_65535", ip6_frag_second, IP6_BAD_FRAG,
		     P(56, 0xff), P(57, 0xf8)),
	/* 61 */ BADCUT("ip6_first_frag_no_l4", ip6_ext_frag_udp, 14 + 88, UDP_TRUNC, P(19, 48)),
	/* 62 */ BADCUT("tcp6_19_bytes", ip6_tcp, 54 + 19, TCP_TRUNC, P(19, 19)),
	/* 63 */ BAD("tcp6_doff_past_l3", ip6_tcp, TCP_BAD_DOFF, P(66, 0xf0)),
	/* 64 */ BADCUT("udp6_7_bytes", ip6_icmp6_echo, 54 + 7, UDP_TRUNC, P(19, 7), P(20, 17)),
	/* 65 */ BADCUT("icmp6_7_bytes", ip6_icmp6_echo, 54 + 7, ICMP6_TRUNC, P(19, 7)),
	/* 66: ICMPv6 needs 8 bytes here, not the 4 of the bare RFC 4443 header */
	/* 66 */ BADCUT("icmp6_4_bytes", ip6_icmp6_echo, 54 + 4, ICMP6_TRUNC, P(19, 4)),
	/* 67 */ BAD("udp6_len_past_l3", ip6_icmp6_echo, UDP_BAD_LEN,
		     P(20, 17), P(58, 0), P(59, 17)),
};

static uint8_t *build_case(const struct frame_case *c)
{
	uint8_t *f;

	assert_true(c->len <= c->base_len);
	f = exact_copy(c->base, c->len);
	for (size_t j = 0; j < ARRAY_SIZE(c->patch) && c->patch[j].used; j++) {
		assert_true(c->patch[j].off < c->len);
		f[c->patch[j].off] = c->patch[j].val;
	}
	return f;
}

static void test_malformed_table(void **state)
{
	bool seen[VNIC_PARSE_ERR_MAX] = { false };

	(void)state;
	assert_true(ARRAY_SIZE(bad_cases) >= 30);
	for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		const struct frame_case *c = &bad_cases[i];
		uint8_t *f = build_case(c);
		struct vnic_hdrs h;
		enum vnic_parse_err err = vnic_parse_frame(f, c->len, &h);

		if (err != c->want)
			fail_msg("case %zu %s: got %s, want %s", i + 1, c->name,
				 vnic_parse_strerror(err), vnic_parse_strerror(c->want));
		seen[err] = true;
		free(f);
	}
	/* Every reason a frame can be rejected for is exercised at least once. */
	for (int e = VNIC_PARSE_OK + 1; e < VNIC_PARSE_ERR_MAX; e++) {
		if (e == VNIC_PARSE_L3_UNKNOWN)
			continue;
		if (!seen[e])
			fail_msg("no malformed case for %s", vnic_parse_strerror(e));
	}
}

/* ---------------------------------------------------------------------------
 * Edge cases that must be accepted, with what they must report
 * ------------------------------------------------------------------------- */

struct ok_case {
	struct frame_case c;
	uint32_t flags;
	uint8_t l4_proto;
	uint16_t l3_len;
	uint16_t l4_len;
	uint32_t payload_len;
	uint32_t trailer_len;
};

#define OK(n, b, fl, proto, l3, l4, pay, trl, ...) \
	{ { n, b, sizeof(b), sizeof(b), { __VA_ARGS__ }, VNIC_PARSE_OK }, \
	  fl, proto, l3, l4, pay, trl }

static const struct ok_case ok_cases[] = {
	/* 1: exactly VNIC_IP6_MAX_EXT extension headers */
	OK("ip6_eight_ext_headers", ip6_nine_dstopts, F_EXT6, VNIC_IPPROTO_NONE, 40 + 64, 0, 8, 0,
	   P(54 + 56, VNIC_IPPROTO_NONE)),
	/* 2: UDP shorter than the IP payload: the rest is trailer (21 -> 11 bytes) */
	OK("udp_len_below_l3_payload", ip4_udp, F_DF | F_L4, VNIC_IPPROTO_UDP, 20, 8, 11, 10,
	   P(38, 0), P(39, 19)),
	/* 3: IPv4 total length below the frame: the rest is trailer */
	OK("ip4_totlen_below_frame", ip4_udp, F_DF | F_L4, VNIC_IPPROTO_UDP, 20, 8, 11, 10,
	   P(17, 20 + 19), P(38, 0), P(39, 19)),
	/* 4: IPv4 EOL ends the option list; what follows is not looked at */
	OK("ip4_eol_then_junk", ip4_ra_igmp, F_OPT4, 2, 24, 0, 8, 0, P(34, 0), P(35, 0xff)),
	/* 5: TCP EOL likewise */
	OK("tcp_eol_then_junk", ip4_tcp_syn, F_DF | F_TOPT | F_L4, VNIC_IPPROTO_TCP, 20, 40, 0, 0,
	   P(70, 0), P(71, 0xff)),
	/* 6: IPv6 atomic fragment (offset 0, M clear; RFC 6946) is a whole packet */
	OK("ip6_atomic_fragment", ip6_ext_frag_udp, F_EXT6 | F_L4, VNIC_IPPROTO_UDP, 88, 8, 16, 0,
	   P(97, 0), P(107, 24)),
	/* 7: protocol 1 under IPv6 is not ICMP: unknown L4, no error */
	OK("ip6_proto_1_unknown", ip6_icmp6_echo, 0, 1, 40, 0, 16, 0, P(20, 1)),
	/* 8: ICMPv6 under IPv4 likewise */
	OK("ip4_proto_58_unknown", ip4_icmp_echo, F_DF, 58, 20, 0, 16, 0, P(23, 58)),
	/* 9: the reserved flag bit is ignored, as Linux ignores it */
	OK("ip4_frag_reserved_bit_ignored", ip4_udp, F_L4, VNIC_IPPROTO_UDP, 20, 8, 21, 0,
	   P(20, 0x80)),
	/* 10: an 802.3 length instead of an ethertype: not understood, not an error */
	OK("eth_8023_length", lldp, 0, 0, 0, 0, 33 - ETH, 0, P(12, 0x00), P(13, 0x13)),
	/* 11: a non-first IPv4 fragment shorter than any L4 header is fine */
	OK("ip4_last_frag_1_byte", ip4_frag_second, F_FRAG, VNIC_IPPROTO_UDP, 20, 0, 1,
	   58 - 14 - 21, P(17, 21)),
	/* 12: a TCP header of exactly the L3 payload, options all NOP */
	OK("tcp_all_nop_options", ip4_tcp_syn, F_DF | F_TOPT | F_L4, VNIC_IPPROTO_TCP, 20, 40, 0, 0,
	   P(54, 1), P(55, 1), P(56, 1), P(57, 1)),
};

static void test_accepted_edges(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(ok_cases); i++) {
		const struct ok_case *k = &ok_cases[i];
		uint32_t len = k->c.len;
		uint8_t *f = build_case(&k->c);
		struct vnic_hdrs h;
		enum vnic_parse_err err = vnic_parse_frame(f, len, &h);

		if (err != VNIC_PARSE_OK)
			fail_msg("ok case %zu %s: got %s", i + 1, k->c.name,
				 vnic_parse_strerror(err));
		check_invariants(&h, len);
		EXPECT_FIELD(k->c.name, flags, &h, k);
		EXPECT_FIELD(k->c.name, l4_proto, &h, k);
		EXPECT_FIELD(k->c.name, l3_len, &h, k);
		EXPECT_FIELD(k->c.name, l4_len, &h, k);
		EXPECT_FIELD(k->c.name, payload_len, &h, k);
		EXPECT_FIELD(k->c.name, trailer_len, &h, k);
		free(f);
	}
}

/* Case 9 of the table above sets only the reserved bit; MF alone is a first fragment. */
static void test_ip4_mf_only_is_first_fragment(void **state)
{
	uint8_t *f = exact_copy(ip4_udp, sizeof(ip4_udp));
	struct vnic_hdrs h;

	(void)state;
	f[20] = 0x20; /* MF, offset 0, DF clear */
	/* The UDP length (29) is the whole datagram and at least what is here. */
	assert_int_equal(vnic_parse_frame(f, sizeof(ip4_udp), &h), VNIC_PARSE_OK);
	assert_int_equal(h.flags, F_FRAG | F_FIRST | F_L4);
	assert_int_equal(h.frag_off, 0);
	f[20] = 0x60; /* DF and MF together: contradictory, but both are reported */
	assert_int_equal(vnic_parse_frame(f, sizeof(ip4_udp), &h), VNIC_PARSE_OK);
	assert_int_equal(h.flags, F_DF | F_FRAG | F_FIRST | F_L4);
	f[20] = 0x1f; /* offset 0x1f00 alone, MF clear: the last fragment */
	assert_int_equal(vnic_parse_frame(f, sizeof(ip4_udp), &h), VNIC_PARSE_OK);
	assert_int_equal(h.flags, F_FRAG);
	assert_int_equal(h.frag_off, 0x1f00);
	free(f);
}

/* ---------------------------------------------------------------------------
 * Random mutations: whatever comes back, an accepted frame keeps the invariants
 * ------------------------------------------------------------------------- */

static void test_random_mutations(void **state)
{
	uint64_t rng = 0x7061727365ULL; /* fixed seed: failures reproduce */
	unsigned int accepted = 0, rejected = 0;

	(void)state;
	for (unsigned int iter = 0; iter < 40000; iter++) {
		const struct golden *g = &goldens[vnic_test_rand_next(&rng) % ARRAY_SIZE(goldens)];
		uint32_t len = g->len;
		unsigned int flips = 1 + vnic_test_rand_next(&rng) % 4;
		uint8_t *f;
		struct vnic_hdrs h;
		enum vnic_parse_err err;

		if (vnic_test_rand_next(&rng) % 4 == 0)
			len = (uint32_t)(vnic_test_rand_next(&rng) % (g->len + 1));
		f = exact_copy(g->frame, len);
		for (unsigned int k = 0; len && k < flips; k++)
			f[vnic_test_rand_next(&rng) % len] = (uint8_t)vnic_test_rand_next(&rng);
		err = vnic_parse_frame(f, len, &h);
		if (err == VNIC_PARSE_OK) {
			check_invariants(&h, len);
			accepted++;
		} else {
			assert_true(err > VNIC_PARSE_OK && err < VNIC_PARSE_ERR_MAX);
			rejected++;
		}
		free(f);
	}
	/* Both outcomes must occur, or the mutations test nothing. */
	assert_true(accepted > 1000);
	assert_true(rejected > 1000);
}

/* ---------------------------------------------------------------------------
 * vnic_parse_pkt and vnic_parse_strerror
 * ------------------------------------------------------------------------- */

static void test_parse_pkt(void **state)
{
	struct vnic_pkt_pool pool;
	struct vnic_pkt *pkt;

	(void)state;
	/*
	 * Odd headroom: the packet's data is not aligned either. 8 packets keep
	 * the metadata array a multiple of 64 bytes for aligned_alloc.
	 */
	assert_int_equal(vnic_pkt_pool_init(&pool, 8, 512, 67), 0);
	pkt = vnic_pkt_alloc(&pool);
	assert_non_null(pkt);

	for (size_t i = 0; i < ARRAY_SIZE(goldens); i++) {
		const struct golden *g = &goldens[i];

		vnic_pkt_reset(pkt);
		assert_int_equal(vnic_pkt_copy_in(pkt, g->frame, g->len), 0);
		assert_int_equal(vnic_parse_pkt(pkt), VNIC_PARSE_OK);
		assert_true(pkt->flags & VNIC_PKT_F_PARSED);
		assert_false(pkt->flags & VNIC_PKT_F_VLAN); /* tags are parsed, not stripped */
		assert_int_equal(pkt->l2_len, g->want.l2_len);
		assert_int_equal(pkt->l3_proto, g->want.l3_proto);
		assert_int_equal(pkt->l3_len, g->want.l3_len);
		assert_int_equal(pkt->l4_len, g->want.l4_len);
		assert_int_equal(pkt->l4_proto,
				 (g->want.flags & VNIC_HDRS_F_L4) ? g->want.l4_proto : 0);
		assert_int_equal(pkt->len, g->len); /* parsing never changes the data */
		assert_memory_equal(pkt->data, g->frame, g->len);
	}

	/* A rejected frame must not leave the previous frame's fields behind. */
	for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		const struct frame_case *c = &bad_cases[i];
		uint8_t *f = build_case(c);

		vnic_pkt_reset(pkt);
		assert_int_equal(vnic_pkt_copy_in(pkt, qinq_ip4_tcp, sizeof(qinq_ip4_tcp)), 0);
		assert_int_equal(vnic_parse_pkt(pkt), VNIC_PARSE_OK);
		pkt->len = 0;
		assert_int_equal(vnic_pkt_copy_in(pkt, f, c->len), 0);
		assert_int_equal(vnic_parse_pkt(pkt), c->want);
		assert_false(pkt->flags & VNIC_PKT_F_PARSED);
		assert_int_equal(pkt->l2_len, 0);
		assert_int_equal(pkt->l3_len, 0);
		assert_int_equal(pkt->l4_len, 0);
		assert_int_equal(pkt->l3_proto, 0);
		assert_int_equal(pkt->l4_proto, 0);
		free(f);
	}
	vnic_pkt_free(pkt);
	vnic_pkt_pool_fini(&pool);
}

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(vnic_parse_strerror(VNIC_PARSE_OK), "ok");
	assert_string_equal(vnic_parse_strerror(VNIC_PARSE_IP4_BAD_IHL), "ip4_bad_ihl");
	assert_string_equal(vnic_parse_strerror(VNIC_PARSE_ICMP6_TRUNC), "icmp6_trunc");
	assert_string_equal(vnic_parse_strerror(VNIC_PARSE_ERR_MAX), "unknown");
	assert_string_equal(vnic_parse_strerror(-1), "unknown");
	assert_string_equal(vnic_parse_strerror(1000), "unknown");
	/* Every reason has its own name, made of lower case, digits and '_'. */
	for (int a = 0; a < VNIC_PARSE_ERR_MAX; a++) {
		const char *na = vnic_parse_strerror(a);

		assert_string_not_equal(na, "unknown");
		assert_true(strlen(na) > 0);
		assert_int_equal(strspn(na, "abcdefghijklmnopqrstuvwxyz0123456789_"), strlen(na));
		for (int b = 0; b < a; b++)
			assert_string_not_equal(na, vnic_parse_strerror(b));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_frames),
		cmocka_unit_test(test_golden_unaligned),
		cmocka_unit_test(test_golden_truncations),
		cmocka_unit_test(test_malformed_table),
		cmocka_unit_test(test_accepted_edges),
		cmocka_unit_test(test_ip4_mf_only_is_first_fragment),
		cmocka_unit_test(test_random_mutations),
		cmocka_unit_test(test_parse_pkt),
		cmocka_unit_test(test_strerror),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
