/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Drivers for the devices present and for those plugged in later:
 * modprobe on every sysfs modalias, then on each added device's, in a
 * child of PID 1 (drivers.c).
 */
#ifndef RESCUE_DRIVERS_H
#define RESCUE_DRIVERS_H

#include <sys/types.h>

/*
 * Starts the child: it loads the modules for the devices present and,
 * with keep_following, goes on for each device added later; with dhcp
 * too, each wired interface, present or added, gets its DHCP client
 * (net.h).  Its pid, or -1 (said on the console).
 */
pid_t drivers_start(int keep_following, int dhcp);

/*
 * Names, on the console, each disk controller and NIC (PCI, and USB mass
 * storage) that has no driver bound and that no driver here claims: for
 * the banner, which is printed before the modules are loaded.
 */
void drivers_report_missing(void);

#endif
