/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Wired networks with nothing typed: udhcpc for each Ethernet interface
 * on a device, as it appears (net.c).  Run by the module loader, which
 * sees the interfaces come and go.
 */
#ifndef RESCUE_NET_H
#define RESCUE_NET_H

/* Every wired interface present gets its DHCP client. */
void net_up_all(void);

/* The interface NAME (from a uevent) gets its DHCP client, if it is a
 * wired one and has none. */
void net_up(const char *name);

/* The interface NAME is gone: its DHCP client is stopped. */
void net_down(const char *name);

#endif
